import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { type AddressInfo, createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { postDelivery, retryAfterMs } from '../../../packages/site-forms/src/lib/webhooks/sender.ts';
import { type KeyPair, makeCertificates, opensslAvailable, type TestCertificates } from '../../support/certificates.ts';
import { type FakeHttpServer, replyHang, replyJson, replyReset, startFakeHttpServer } from '../../support/fake-http.ts';

/**
 * One try of a delivery against real receivers on 127.0.0.1: what goes on the wire, and how
 * each way a receiver can answer (or not) ends the try, in the words the admin shows.
 */
let receiver: FakeHttpServer;
beforeAll(async () => {
  receiver = await startFakeHttpServer();
});
afterAll(() => receiver.close());
afterEach(() => {
  receiver.requests.length = 0;
});

/** Servers a test starts besides the shared receiver, with their connections; closed after it. */
const started: Array<{ server: NetServer | HttpsServer; sockets: Set<Socket> }> = [];
const closeServer = async ({ server, sockets }: (typeof started)[number]) => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
};
afterEach(async () => {
  for (const one of started.splice(0)) await closeServer(one);
});

async function listen(server: NetServer | HttpsServer): Promise<number> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => sockets.add(socket));
  started.push({ server, sockets });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const BODY = '{"type":"contact.received","data":{"name":"Zoë"}}';
const post = (url: string, more: { allowPrivate?: boolean; timeoutMs?: number; headers?: Record<string, string> } = {}) =>
  postDelivery({
    url,
    body: BODY,
    headers: more.headers ?? { 'content-type': 'application/json' },
    allowPrivate: more.allowPrivate ?? true,
    timeoutMs: more.timeoutMs,
  });

describe('what a try sends', () => {
  test('one POST of the body as given, its headers, its length in bytes, our user agent, and a connection closed after it', async () => {
    receiver.reply(replyJson(204, {}));
    const headers = { 'content-type': 'application/json', 'webhook-id': 'msg_1', 'webhook-timestamp': '1795000000', 'webhook-signature': 'v1,abc=' };
    await expect(post(`${receiver.url}/hooks/forms?x=1`, { headers })).resolves.toEqual({ kind: 'delivered', status: 204 });
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/hooks/forms?x=1');
    expect(request!.body).toBe(BODY);
    expect(request!.headers).toEqual({
      host: receiver.url.slice('http://'.length),
      connection: 'close',
      'content-type': 'application/json',
      'webhook-id': 'msg_1',
      'webhook-timestamp': '1795000000',
      'webhook-signature': 'v1,abc=',
      // 49 characters, 50 bytes: the ë is two.
      'content-length': '50',
      'user-agent': 'site-forms-webhooks/1',
    });
  });
});

describe('how a receiver that answers ends the try', () => {
  test.each([
    [200, { kind: 'delivered', status: 200 }],
    [299, { kind: 'delivered', status: 299 }],
    [410, { kind: 'gone', status: 410 }],
    [300, { kind: 'retry', status: 300, error: 'a redirect (300), which is not followed' }],
    [301, { kind: 'retry', status: 301, error: 'a redirect (301), which is not followed' }],
    [399, { kind: 'retry', status: 399, error: 'a redirect (399), which is not followed' }],
    [400, { kind: 'retry', status: 400, error: 'the receiver answered 400', retryAfterMs: undefined }],
    [500, { kind: 'retry', status: 500, error: 'the receiver answered 500', retryAfterMs: undefined }],
  ])('%i', async (status, end) => {
    receiver.reply(replyJson(status, {}, status >= 300 && status < 400 ? { location: '/elsewhere' } : {}));
    await expect(post(`${receiver.url}/hook`)).resolves.toEqual(end);
  });

  test('503 with Retry-After in seconds asks for that long', async () => {
    receiver.reply(replyJson(503, {}, { 'retry-after': '90' }));
    await expect(post(`${receiver.url}/hook`)).resolves.toEqual({ kind: 'retry', status: 503, error: 'the receiver answered 503', retryAfterMs: 90_000 });
  });

  test('Retry-After counts on a 429 and a 503 only: a 500 that sends it is retried on the usual schedule', async () => {
    receiver.reply(replyJson(500, {}, { 'retry-after': '90' }));
    await expect(post(`${receiver.url}/hook`)).resolves.toEqual({ kind: 'retry', status: 500, error: 'the receiver answered 500', retryAfterMs: undefined });
  });

  test('a status below 200, which Node passes on as final, is no redirect', async () => {
    const port = await listen(createNetServer((socket) => socket.once('data', () => socket.end('HTTP/1.1 099 Odd\r\ncontent-length: 0\r\n\r\n'))));
    await expect(post(`http://127.0.0.1:${port}/hook`)).resolves.toEqual({
      kind: 'retry',
      status: 99,
      error: 'the receiver answered 99',
      retryAfterMs: undefined,
    });
  });

  test('an endless answer is let go after 64 KiB: the try ends by its status, not by the timeout', async () => {
    receiver.reply((_, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      // One byte more than is read, and the answer never ends.
      res.write('x'.repeat(64 * 1024 + 1));
    });
    // A wait longer than the test may run (30 s): a try that waited for it would fail the test, however fast the machine.
    await expect(post(`${receiver.url}/hook`, { timeoutMs: 600_000 })).resolves.toEqual({ kind: 'delivered', status: 200 });
  });

  test('an answer of 64 KiB exactly that never ends is read to the end of the wait', async () => {
    receiver.reply((_, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('x'.repeat(64 * 1024));
    });
    await expect(post(`${receiver.url}/hook`, { timeoutMs: 1_000 })).resolves.toEqual({ kind: 'retry', status: null, error: 'no answer within 1 s' });
  });
});

describe('how a try that gets no answer ends', () => {
  test('a receiver that never answers: the wait, in seconds, and the connection let go', async () => {
    receiver.reply(replyHang());
    await expect(post(`${receiver.url}/hook`, { timeoutMs: 1_400 })).resolves.toEqual({ kind: 'retry', status: null, error: 'no answer within 1 s' });
    await expect.poll(() => receiver.load.inFlight).toBe(0);
  });

  test('an address that is not a URL', async () => {
    await expect(post('hooks.example/forms')).resolves.toEqual({ kind: 'retry', status: null, error: 'the address is not a URL' });
  });

  test('a port nobody listens on', async () => {
    const port = await listen(createNetServer());
    await closeServer(started.pop()!);
    await expect(post(`http://127.0.0.1:${port}/hook`)).resolves.toEqual({ kind: 'retry', status: null, error: 'the connection was refused' });
  });

  test('a receiver that resets the connection', async () => {
    receiver.reply(replyReset());
    await expect(post(`${receiver.url}/hook`)).resolves.toEqual({ kind: 'retry', status: null, error: 'the connection was reset' });
  });

  test('a name that does not resolve', async () => {
    await expect(post('http://hooks.invalid/forms')).resolves.toEqual({ kind: 'retry', status: null, error: 'the name does not resolve' });
  });

  test('a receiver that does not speak HTTP: the code of the failure, not its text', async () => {
    const port = await listen(createNetServer((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n')));
    await expect(post(`http://127.0.0.1:${port}/hook`)).resolves.toEqual({
      kind: 'retry',
      status: null,
      error: 'the connection failed (HPE_INVALID_CONSTANT)',
    });
  });
});

describe('private addresses', () => {
  test('a name that resolves to a private address is refused as the literal is, before any request', async () => {
    const port = new URL(receiver.url).port;
    const refused = { kind: 'retry', status: null, error: 'the address is private (set WEBHOOK_ALLOW_PRIVATE=true to allow it)' };
    await expect(post(`http://localhost:${port}/hook`, { allowPrivate: false })).resolves.toEqual(refused);
    await expect(post(`http://[::ffff:127.0.0.1]:${port}/hook`, { allowPrivate: false })).resolves.toEqual(refused);
    expect(receiver.requests).toEqual([]);
  });

  test('a name is judged by the addresses it resolves to, not refused for being a name', async () => {
    await expect(post('http://hooks.invalid/forms', { allowPrivate: false })).resolves.toEqual({
      kind: 'retry',
      status: null,
      error: 'the name does not resolve',
    });
  });

  test('with WEBHOOK_ALLOW_PRIVATE the same name is reached', async () => {
    receiver.reply(replyJson(200, {}));
    await expect(post(`http://localhost:${new URL(receiver.url).port}/hook`, { allowPrivate: true })).resolves.toEqual({ kind: 'delivered', status: 200 });
    expect(receiver.requests.map((r) => r.url)).toEqual(['/hook']);
  });
});

describe.skipIf(!opensslAvailable)('a receiver over HTTPS whose certificate is not trusted', () => {
  let certificates: TestCertificates;
  beforeAll(() => {
    certificates = makeCertificates();
  });
  const untrusted = { kind: 'retry', status: null, error: 'the certificate is not trusted' };
  const serve = (pair: KeyPair) => listen(createHttpsServer(pair, (_, res) => res.writeHead(200).end()));

  test('self-signed', async () => {
    await expect(post(`https://127.0.0.1:${await serve(certificates.selfSigned)}/hook`)).resolves.toEqual(untrusted);
  });

  test("signed by a CA nobody trusts (OpenSSL's UNABLE_TO_VERIFY_LEAF_SIGNATURE, which names no certificate)", async () => {
    await expect(post(`https://127.0.0.1:${await serve(certificates.byCa)}/hook`)).resolves.toEqual(untrusted);
  });

  test('over HTTPS too, a name that resolves to a private address is refused before any handshake', async () => {
    const port = await serve(certificates.selfSigned);
    await expect(post(`https://localhost:${port}/hook`, { allowPrivate: false })).resolves.toEqual({
      kind: 'retry',
      status: null,
      error: 'the address is private (set WEBHOOK_ALLOW_PRIVATE=true to allow it)',
    });
  });

  describe('signed by a CA this process is told to trust', () => {
    let defaults: string[];
    beforeAll(() => {
      defaults = getCACertificates('default');
      setDefaultCACertificates([...defaults, certificates.ca.cert]);
    });
    afterAll(() => setDefaultCACertificates(defaults));

    test('is delivered, over a connection closed after the one request', async () => {
      const seen: Array<string | undefined> = [];
      const port = await listen(
        createHttpsServer(certificates.byCa, (req, res) => {
          seen.push(req.headers.connection);
          req.resume();
          res.writeHead(204).end();
        }),
      );
      await expect(post(`https://127.0.0.1:${port}/hook`)).resolves.toEqual({ kind: 'delivered', status: 204 });
      expect(seen).toEqual(['close']);
    });
  });

  test('an HTTPS address on a server that speaks plain HTTP: the code of the failure', async () => {
    await expect(post(`https://127.0.0.1:${new URL(receiver.url).port}/hook`)).resolves.toEqual({
      kind: 'retry',
      status: null,
      error: 'the connection failed (EPROTO)',
    });
  });
});

describe('Retry-After, in milliseconds from now', () => {
  const now = Date.parse('2026-11-25T12:00:00Z');
  test.each([
    ['120', 120_000],
    [' 30 ', 30_000],
    ['0', 0],
    ['Wed, 25 Nov 2026 12:01:30 GMT', 90_000],
    // A date already past is no wait at all, never a negative one.
    ['Wed, 25 Nov 2026 11:59:00 GMT', 0],
    ['soon', undefined],
    // Digits with something before or after them are neither seconds nor a date.
    ['12abc', undefined],
    ['abc12', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('%j: %j', (value, ms) => {
    expect(retryAfterMs(value, now)).toBe(ms);
  });
});
