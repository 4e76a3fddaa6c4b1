/**
 * A provider that answers without end, or with a stream it then cuts: each call stops
 * reading past 1 MiB and answers `unavailable`, and nothing is left to fail later.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { createKitProvider } from '../../../packages/site-forms/src/lib/newsletter/kit.ts';
import { createMailchimpProvider } from '../../../packages/site-forms/src/lib/newsletter/mailchimp.ts';
import type { NewsletterProvider } from '../../../packages/site-forms/src/lib/newsletter/provider.ts';
import { createResendProvider } from '../../../packages/site-forms/src/lib/newsletter/resend.ts';
import { watchClientSockets } from '../../support/client-sockets.ts';
import { type FakeHttpServer, type FakeReply, startFakeHttpServer } from '../../support/fake-http.ts';

let provider: FakeHttpServer;
beforeAll(async () => {
  provider = await startFakeHttpServer();
});
afterAll(() => provider.close());

// Nothing but the server's own JSON lines may reach its output: no library's console.warn.
let warn: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  warn = vi.spyOn(console, 'warn');
});
afterEach(() => {
  expect(warn).not.toHaveBeenCalled();
  warn.mockRestore();
});

const MiB = 1_048_576;

/** Answers 200 with `type` and writes 1 MiB chunks as fast as they are read, until the client stops; counts what it wrote. */
function endless(type: string, written: { bytes: number }): FakeReply {
  return (_, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': type });
    const chunk = Buffer.alloc(MiB, 0x61);
    const pump = () => {
      while (!res.destroyed && written.bytes < 2_000 * MiB) {
        written.bytes += chunk.length;
        if (!res.write(chunk)) return;
      }
    };
    res.on('drain', pump);
    pump();
  };
}

/** Answers 200 with a chunk size that is not hexadecimal: a broken answer. */
function brokenChunk(): FakeReply {
  return (_, __, req) => {
    req.socket.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n');
  };
}

/** Answers 200 with `type` and a little of a body, then resets the connection. */
function cutAfterAWhile(type: string): FakeReply {
  return (_, res, req) => {
    res.writeHead(200, { 'content-type': type });
    res.write('{"id": "x", "half of');
    setTimeout(() => req.socket.resetAndDestroy(), 100);
  };
}

const PROVIDERS: Array<[string, () => NewsletterProvider]> = [
  ['Mailchimp', () => createMailchimpProvider({ apiKey: 'k-us1', listId: 'l1', baseUrl: `${provider.url}/3.0` })],
  ['Kit', () => createKitProvider({ apiKey: 'k', formId: '1', baseUrl: `${provider.url}/v3`, version: 'v3' })],
  ['Resend', () => createResendProvider({ apiKey: 're_k', target: { kind: 'audience', id: 'a1' }, baseUrl: provider.url })],
];

const attempt = (create: () => NewsletterProvider) => create().subscribe('ada@example.com', { signal: AbortSignal.timeout(10_000), timeoutMs: 10_000 });

describe.each(PROVIDERS)('%s answering more than any subscription needs', (_, create) => {
  test.each(['application/json', 'text/plain', 'application/octet-stream'])(
    'an endless %s answer is given up on: unavailable, having read little of it',
    async (type) => {
      const written = { bytes: 0 };
      provider.reply(endless(type, written));
      await expect(attempt(create)).resolves.toMatchObject({ ok: false, reason: 'unavailable' });
      // Without a limit the call reads until its deadline: gigabytes from a server on this machine.
      expect(written.bytes).toBeLessThan(256 * MiB);
    },
  );

  test('an answer with a broken chunk: unavailable, and no error is left to surface later', async () => {
    provider.reply(brokenChunk());
    const sockets = watchClientSockets();
    await expect(attempt(create)).resolves.toMatchObject({ ok: false, reason: 'unavailable' });
    // Until the connection has closed: a late 'error' would have fired by then, and vitest fails the run on one nobody handles.
    expect(sockets.count).toBeGreaterThan(0);
    await sockets.closed();
    sockets.stop();
  });

  test.each(['application/json', 'application/octet-stream', 'image/png'])(
    'a %s answer cut half-way: unavailable, and no error is left to surface later',
    async (type) => {
      provider.reply(cutAfterAWhile(type));
      const sockets = watchClientSockets();
      await expect(attempt(create)).resolves.toMatchObject({ ok: false, reason: 'unavailable' });
      // Until the connection has closed: a late 'error' would have fired by then, and vitest fails the run on one nobody handles.
      expect(sockets.count).toBeGreaterThan(0);
      await sockets.closed();
      sockets.stop();
    },
  );
});
