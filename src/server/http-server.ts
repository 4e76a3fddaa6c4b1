import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** A Node request handler, as the Astro adapter exports one. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Answers a request itself and returns true, or returns false to leave it to the next step. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The timeouts of our server; Node's defaults let a slow client hold a socket for minutes. */
export const SERVER_TIMEOUTS = {
  /** Time to receive all request headers. */
  headersTimeout: 10_000,
  /** Time to receive the whole request. */
  requestTimeout: 30_000,
  /** A little above the 60 s idle timeout of typical proxies (nginx, AWS ALB), so the proxy closes first. */
  keepAliveTimeout: 65_000,
  /**
   * How often Node checks the two timeouts above. Node's default (30 s) let a header
   * timeout of 10 s run to 20 s and a request timeout of 30 s run to 60 s (issue 11 item 12).
   */
  connectionsCheckingInterval: 1_000,
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
 * Serves a handler from a `node:http` server we control: timeouts and a graceful stop.
 */
export function createHttpServer(handler: NodeHandler): HttpServer {
  const inFlight = new Set<ServerResponse>();
  let draining = false;

  const server = createServer(
    {
      headersTimeout: SERVER_TIMEOUTS.headersTimeout,
      requestTimeout: SERVER_TIMEOUTS.requestTimeout,
      connectionsCheckingInterval: SERVER_TIMEOUTS.connectionsCheckingInterval,
    },
    (req, res) => {
      inFlight.add(res);
      res.once('close', () => inFlight.delete(res));
      if (draining) closeAfter(res);
      void handler(req, res);
    },
  );
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
