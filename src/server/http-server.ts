import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { BODY_LIMIT_BYTES, tooLargeMessage } from '../lib/http.ts';

/** A Node request handler, as the Astro adapter exports one. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Answers a request itself and returns true, or returns false to leave it to the next handler. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The timeouts of our server; Node's defaults let a slow client hold a socket for minutes. */
export const SERVER_TIMEOUTS = {
  /** Time to receive all request headers. */
  headersTimeout: 10_000,
  /** Time to receive the whole request. */
  requestTimeout: 30_000,
  /** A little above the 60 s idle timeout of typical proxies (nginx, AWS ALB), so the proxy closes first. */
  keepAliveTimeout: 65_000,
} as const;

/** Our server, with what a graceful stop needs to know. */
export type HttpServer = {
  server: Server;
  /**
   * Stops gracefully: no new connections, requests in flight are answered, idle
   * connections close; whatever still runs after `timeoutMs` is cut off.
   */
  shutdown(timeoutMs: number): Promise<'clean' | 'forced'>;
};

/**
 * Wraps the adapter's handler in a `node:http` server we control: an optional front that
 * every request meets first, timeouts, a 413 from the declared length before any body is
 * read, an optional fast path tried before the adapter, and a graceful stop.
 */
export function createHttpServer(handler: NodeHandler, fastPath?: FastPath, options: { front?: FastPath } = {}): HttpServer {
  const inFlight = new Set<ServerResponse>();
  let draining = false;

  const server = createServer({ headersTimeout: SERVER_TIMEOUTS.headersTimeout, requestTimeout: SERVER_TIMEOUTS.requestTimeout }, (req, res) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
    if (draining) closeAfter(res);
    if (options.front?.(req, res)) return;
    if (declaresTooLargeBody(req)) {
      // Answer at once, from the header: no need to wait for a body that may never come.
      res.writeHead(413, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ success: false, error: tooLargeMessage() }));
      discardBriefly(req);
      return;
    }
    if (fastPath?.(req, res)) return;
    void handler(req, res);
  });
  server.keepAliveTimeout = SERVER_TIMEOUTS.keepAliveTimeout;

  // While stopping, a keep-alive connection ends with the answer it is carrying, so
  // `close()` need not wait for the keep-alive timeout.
  function closeAfter(res: ServerResponse): void {
    if (!res.headersSent) res.shouldKeepAlive = false;
    res.once('finish', () => setImmediate(() => server.closeIdleConnections()));
  }

  return {
    server,
    shutdown(timeoutMs) {
      draining = true;
      for (const res of inFlight) closeAfter(res);
      return new Promise((resolve) => {
        let forced = false;
        const force = setTimeout(() => {
          forced = true;
          server.closeAllConnections();
        }, timeoutMs);
        server.close(() => {
          clearTimeout(force);
          resolve(forced ? 'forced' : 'clean');
        });
        server.closeIdleConnections();
      });
    },
  };
}

/** How much of a refused body is read and thrown away, and for how long, before the socket is cut. */
const DISCARD_LIMIT = { bytes: 1024 * 1024, ms: 1000 };

/**
 * Reads and throws away what a refused client is still sending, within a bound: closing
 * at once would make a client that is mid-upload fail with a broken pipe before it reads
 * the 413; a client that sends more, or too slowly, is cut off.
 */
function discardBriefly(req: IncomingMessage): void {
  let received = 0;
  const cut = () => req.socket.destroy();
  const timer = setTimeout(cut, DISCARD_LIMIT.ms);
  req.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > DISCARD_LIMIT.bytes) cut();
  });
  req.once('close', () => clearTimeout(timer));
}

function declaresTooLargeBody(req: IncomingMessage): boolean {
  const length = Number(req.headers['content-length']);
  return Number.isFinite(length) && length > BODY_LIMIT_BYTES;
}
