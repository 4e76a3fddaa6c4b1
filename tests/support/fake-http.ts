import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo, Socket } from 'node:net';

/** One request as the fake provider received it. */
export type ReceivedRequest = { method: string; url: string; headers: IncomingMessage['headers']; body: string; receivedAt: number };

/** How the fake provider answers one request. */
export type FakeReply = (request: ReceivedRequest, res: ServerResponse, req: IncomingMessage) => void | Promise<void>;

/** A real HTTP server on 127.0.0.1 standing in for a provider outside this machine. */
export type FakeHttpServer = {
  url: string;
  requests: ReceivedRequest[];
  /** Requests being answered right now, and the most there ever were at once. */
  load: { inFlight: number; maxInFlight: number };
  /** The reply for every following request, until changed. */
  reply(handler: FakeReply): void;
  /** Settles once every connection made to it so far has closed (answered and let go, reset, or abandoned). */
  connectionsClosed(): Promise<void>;
  close(): Promise<void>;
};

/** Starts a fake provider that records every request and answers with `reply`. */
export async function startFakeHttpServer(initial: FakeReply = replyJson(200, {})): Promise<FakeHttpServer> {
  let handler = initial;
  const requests: ReceivedRequest[] = [];
  const load = { inFlight: 0, maxInFlight: 0 };
  const server: Server = createServer(async (req, res) => {
    const receivedAt = performance.now();
    load.inFlight++;
    load.maxInFlight = Math.max(load.maxInFlight, load.inFlight);
    // 'close' comes once per request, whether it was answered, reset or abandoned.
    res.once('close', () => load.inFlight--);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt };
    requests.push(received);
    await handler(received, res, req);
  });
  const connections = new Set<Socket>();
  server.on('connection', (socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    load,
    reply(next) {
      handler = next;
    },
    connectionsClosed: () => Promise.all([...connections].map((socket) => once(socket, 'close'))).then(() => undefined),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A reply with a JSON body. */
export function replyJson(status: number, body: unknown, headers: Record<string, string> = {}): FakeReply {
  return (_, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
}

/** A reply with a body of another type, such as the HTML error page of a proxy. */
export function replyText(status: number, body: string, type = 'text/html; charset=utf-8'): FakeReply {
  return (_, res) => {
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  };
}

/** No reply at all: the connection stays open until the client gives up or the server closes. */
export function replyHang(): FakeReply {
  return () => {};
}

/** A reply that resets the connection (TCP RST) instead of answering. */
export function replyReset(): FakeReply {
  return (_, __, req) => {
    req.socket.resetAndDestroy();
  };
}

/** A reply that waits `ms` before answering with `then`. */
export function replyAfter(ms: number, then: FakeReply): FakeReply {
  return (request, res, req) => new Promise<void>((resolve) => setTimeout(() => resolve(then(request, res, req)), ms));
}

/** Each reply in turn, one per request; the last one answers every request after it. */
export function replyInTurn(...replies: FakeReply[]): FakeReply {
  let next = 0;
  return (request, res, req) => replies[Math.min(next++, replies.length - 1)]!(request, res, req);
}

/** Turns the event loop until `condition` holds, without moving a fake clock. */
async function turnsUntil(condition: () => boolean): Promise<void> {
  for (let turn = 0; !condition(); turn++) {
    if (turn > 100_000) throw new Error('the condition never held');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * What a call to a server that never answers ends with once its signal aborts: it must still be
 * waiting after its request went out and 50 turns of the event loop more (else this throws), and
 * settle after the abort. The provider's own timeout (`timeoutMs`) is the caller's to set far off.
 */
export async function outcomeOnceAborted(server: FakeHttpServer, call: (signal: AbortSignal) => Promise<unknown>): Promise<unknown> {
  server.reply(replyHang());
  const before = server.requests.length;
  const deadline = new AbortController();
  let outcome: unknown;
  void call(deadline.signal).then((answer) => {
    outcome = answer;
  });
  await turnsUntil(() => server.requests.length > before);
  for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
  if (outcome !== undefined) throw new Error(`the call ended before its signal aborted: ${JSON.stringify(outcome)}`);
  deadline.abort(new DOMException('The budget ran out', 'TimeoutError'));
  await turnsUntil(() => outcome !== undefined);
  return outcome;
}
