import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { texts } from '../lib/i18n/texts.ts';

/** A Node request handler, as the Astro adapter exports one. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Answers a request itself and returns true, or returns false to leave it to the next step. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The timeouts of our server; Node's defaults let a slow client hold a socket for minutes. */
export const SERVER_TIMEOUTS = {
  /** Time to receive all request headers (less when the request limit is shorter). */
  headersTimeout: 10_000,
  /** Time to receive the whole request, but a post with files (REQUEST_TIMEOUT_SECONDS' default). */
  requestTimeout: 30_000,
  /**
   * How much longer than the longest limit Node's own cut waits: our answers (a 408 in JSON) come
   * first, Node's bare 408 only when ours could not be given.
   */
  backstopGrace: 2_000,
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

/** How long a request may take to arrive whole: posts with files have a limit of their own (decision 0185). */
export type RequestLimits = {
  /** Every request but a post with files (REQUEST_TIMEOUT_SECONDS), cut by `limitArrival`'s timer. */
  requestTimeoutMs: number;
  /** A post with files (UPLOAD_TIMEOUT_SECONDS), which the upload's reader enforces with its own answer (src/lib/files/multipart.ts). */
  uploadTimeoutMs: number;
};

const NO_UPLOADS: RequestLimits = { requestTimeoutMs: SERVER_TIMEOUTS.requestTimeout, uploadTimeoutMs: 0 };

/** Arms a request's own time limit, once its route is known (whether it is a post with files): src/server/dispatch.ts calls it. */
export type ArrivalLimit = (req: IncomingMessage, res: ServerResponse, takesFiles: boolean) => void;

/**
 * The short whole-request limit for every request with a body but a post with files; a post with
 * files answered before its body arrived (refused, or cut by its reader) gets it for the rest.
 * Hint: a request without a body (a page, most of them) arrived whole with its headers: no timer.
 */
export function limitArrival(requestTimeoutMs: number): ArrivalLimit {
  return (req, res, takesFiles) => {
    if (!carriesBody(req)) return;
    if (!takesFiles) cutWhenLate(req, res, requestTimeoutMs);
    else res.once('finish', () => cutWhenLate(req, res, requestTimeoutMs));
  };
}

/**
 * Serves a handler from a `node:http` server we control: timeouts and a graceful stop.
 * Hint: Node's `requestTimeout` holds one limit for every request; it is set to the longer one
 * (uploads'), and every request that carries no files is cut at the short one by a timer of its own
 * (`limitArrival`, armed by the dispatcher where the route is found).
 */
export function createHttpServer(handler: NodeHandler, limits: RequestLimits = NO_UPLOADS): HttpServer {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  const longest = Math.max(limits.requestTimeoutMs, limits.uploadTimeoutMs) + SERVER_TIMEOUTS.backstopGrace;

  const server = createServer(
    {
      // Node refuses a headers timeout longer than the request timeout.
      headersTimeout: Math.min(SERVER_TIMEOUTS.headersTimeout, limits.requestTimeoutMs),
      requestTimeout: longest,
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

/** Whether a request has a body still to arrive (RFC 9112, section 6.3: a length, or a transfer coding). */
function carriesBody(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Node's own answer to a late request, but in JSON with `success`, as every answer of ours. */
function timedOutAnswer(): string {
  const body = JSON.stringify({ success: false, error: texts.refusals.requestTimedOut });
  return [
    'HTTP/1.1 408 Request Timeout',
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * Cuts a request whose body has not arrived whole within `ms`, as Node's `requestTimeout` does:
 * a 408 on the socket when nothing was answered yet, then the connection closed. The handler still
 * reading the body sees it break off (and whatever it writes after goes nowhere).
 */
function cutWhenLate(req: IncomingMessage, res: ServerResponse, ms: number): void {
  if (req.complete) return;
  const timer = setTimeout(() => {
    if (req.complete) return;
    const socket = req.socket;
    if (!res.headersSent && socket.writable) socket.write(timedOutAnswer());
    socket.destroy();
  }, ms);
  timer.unref();
  const clear = () => clearTimeout(timer);
  req.once('end', clear);
  req.once('close', clear);
}
