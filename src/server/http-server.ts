import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { BODY_LIMIT_BYTES } from '../lib/http.ts';

/** A Node request handler, as the Astro adapter exports one. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** The timeouts of our server; Node's defaults let a slow client hold a socket for minutes. */
export const SERVER_TIMEOUTS = {
  /** Time to receive all request headers. */
  headersTimeout: 10_000,
  /** Time to receive the whole request. */
  requestTimeout: 30_000,
  /** A little above the 60 s idle timeout of typical proxies (nginx, AWS ALB), so the proxy closes first. */
  keepAliveTimeout: 65_000,
} as const;

/**
 * Wraps the adapter's handler in a `node:http` server we control: timeouts, and a 413
 * from the declared length before any body is read.
 */
export function createHttpServer(handler: NodeHandler): Server {
  const server = createServer({ ...SERVER_TIMEOUTS, requestTimeout: SERVER_TIMEOUTS.requestTimeout }, (req, res) => {
    if (declaresTooLargeBody(req)) {
      // Answer at once and close: waiting for a body that may never come would hold the socket.
      res.writeHead(413, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
      res.end(JSON.stringify({ success: false, error: `The form is too large; the limit is ${BODY_LIMIT_BYTES / 1024} KB` }));
      req.resume();
      return;
    }
    void handler(req, res);
  });
  server.keepAliveTimeout = SERVER_TIMEOUTS.keepAliveTimeout;
  return server;
}

function declaresTooLargeBody(req: IncomingMessage): boolean {
  const length = Number(req.headers['content-length']);
  return Number.isFinite(length) && length > BODY_LIMIT_BYTES;
}
