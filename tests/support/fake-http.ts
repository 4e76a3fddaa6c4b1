import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the fake provider received it. */
export type ReceivedRequest = { method: string; url: string; headers: IncomingMessage['headers']; body: string };

/** How the fake provider answers one request. */
export type FakeReply = (request: ReceivedRequest, res: ServerResponse, req: IncomingMessage) => void | Promise<void>;

/** A real HTTP server on 127.0.0.1 standing in for a provider outside this machine. */
export type FakeHttpServer = {
  url: string;
  requests: ReceivedRequest[];
  /** The reply for every following request, until changed. */
  reply(handler: FakeReply): void;
  close(): Promise<void>;
};

/** Starts a fake provider that records every request and answers with `reply`. */
export async function startFakeHttpServer(initial: FakeReply = replyJson(200, {})): Promise<FakeHttpServer> {
  let handler = initial;
  const requests: ReceivedRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
    requests.push(received);
    await handler(received, res, req);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply(next) {
      handler = next;
    },
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
