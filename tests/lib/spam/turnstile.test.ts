import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { OutsideCheck } from '../../../packages/site-forms/src/lib/spam/outside.ts';
import { classifyTurnstileAnswer, createTurnstileClient } from '../../../packages/site-forms/src/lib/spam/turnstile.ts';
import { type FakeHttpServer, type FakeReply, replyHang, replyJson, replyReset, replyText, startFakeHttpServer } from '../../support/fake-http.ts';
import { replyTurnstile, TURNSTILE_DUMMY_TOKEN, TURNSTILE_TEST_SECRETS } from '../../support/fake-spam-services.ts';

let cloudflare: FakeHttpServer;
beforeAll(async () => {
  cloudflare = await startFakeHttpServer(replyTurnstile());
});
afterAll(() => cloudflare.close());

const client = (secret: string, timeoutMs = 2_000) => createTurnstileClient({ secret, baseUrl: cloudflare.url, timeoutMs });

describe('Turnstile siteverify', () => {
  // The field's name, cf-turnstile-response, is the one Cloudflare's widget adds: a post
  // carrying a token under it is judged by the token (tests/lib/spam/handle.test.ts, "Turnstile’s always-passes key, a person").
  test('a client given no address asks Cloudflare’s siteverify', async () => {
    const asked: string[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn<typeof fetch>(async (url) => {
        asked.push(String(url));
        return new Response(JSON.stringify({ success: true }), { headers: { 'content-type': 'application/json' } });
      }),
    );
    try {
      await expect(createTurnstileClient({ secret: 's' }).verify(TURNSTILE_DUMMY_TOKEN)).resolves.toEqual({ ok: true, spam: false });
    } finally {
      vi.unstubAllGlobals();
    }
    expect(asked).toEqual(['https://challenges.cloudflare.com/turnstile/v0/siteverify']);
  });

  test('posts the secret, the token and the visitor’s address, form-encoded', async () => {
    cloudflare.reply(replyTurnstile());
    cloudflare.requests.length = 0;
    await client(TURNSTILE_TEST_SECRETS.passes).verify(TURNSTILE_DUMMY_TOKEN, '203.0.113.7');
    expect(cloudflare.requests).toHaveLength(1);
    const [request] = cloudflare.requests;
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/turnstile/v0/siteverify');
    expect(request!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(request!.body))).toEqual({
      secret: TURNSTILE_TEST_SECRETS.passes,
      response: TURNSTILE_DUMMY_TOKEN,
      remoteip: '203.0.113.7',
    });
  });

  test('without the visitor’s address, none is sent', async () => {
    cloudflare.reply(replyTurnstile());
    cloudflare.requests.length = 0;
    await client(TURNSTILE_TEST_SECRETS.passes).verify(TURNSTILE_DUMMY_TOKEN);
    expect(Object.keys(Object.fromEntries(new URLSearchParams(cloudflare.requests[0]!.body)))).toEqual(['secret', 'response']);
  });

  test.each<[string, string, OutsideCheck]>([
    ['the always-passes test secret', TURNSTILE_TEST_SECRETS.passes, { ok: true, spam: false }],
    ['the always-fails test secret', TURNSTILE_TEST_SECRETS.fails, { ok: true, spam: true }],
    ['the token-already-spent test secret', TURNSTILE_TEST_SECRETS.spent, { ok: true, spam: true }],
    ['a secret Cloudflare does not know', 'not-a-secret', { ok: false, detail: 'refused the key (invalid-input-secret)', check: 'TURNSTILE_SECRET_KEY' }],
  ])('%s', async (_, secret, expected) => {
    cloudflare.reply(replyTurnstile());
    await expect(client(secret).verify(TURNSTILE_DUMMY_TOKEN)).resolves.toEqual(expected);
  });

  test('without a token the widget never ran: a signal, and Cloudflare is not asked', async () => {
    cloudflare.requests.length = 0;
    await expect(client(TURNSTILE_TEST_SECRETS.passes).verify('')).resolves.toEqual({ ok: true, spam: true });
    expect(cloudflare.requests).toHaveLength(0);
  });

  test.each<[string, FakeReply, OutsideCheck]>([
    ['a server error', replyJson(500, { success: false }), { ok: false, detail: 'HTTP 500' }],
    ['an HTML page', replyText(200, '<html>maintenance</html>'), { ok: false, detail: 'HTTP 200 that is not JSON' }],
    ['an internal error', replyJson(200, { success: false, 'error-codes': ['internal-error'] }), { ok: false, detail: 'no verdict (internal-error)' }],
    ['no error codes', replyJson(200, { success: false }), { ok: false, detail: 'no verdict (no error code)' }],
    [
      'a redirect elsewhere',
      (_, res) => {
        res.writeHead(307, { location: 'http://evil.test/' });
        res.end();
      },
      { ok: false, detail: 'HTTP 307' },
    ],
    ['a reset connection', replyReset(), { ok: false, detail: 'no answer (connection failed)' }],
    ['no answer', replyHang(), { ok: false, detail: 'no answer within 300 ms' }],
  ])('%s is no signal', async (_, reply, expected) => {
    cloudflare.reply(reply);
    // 300 ms only where the wait is what is tested: an answer on a busy machine may take longer.
    const timeoutMs = 'detail' in expected && expected.detail.startsWith('no answer within') ? 300 : 2_000;
    await expect(client(TURNSTILE_TEST_SECRETS.passes, timeoutMs).verify(TURNSTILE_DUMMY_TOKEN)).resolves.toEqual(expected);
  });

  test.each<[string, number, string, OutsideCheck]>([
    ['success', 200, '{"success":true}', { ok: true, spam: false }],
    [
      'a missing secret',
      200,
      '{"success":false,"error-codes":["missing-input-secret"]}',
      { ok: false, detail: 'refused the key (missing-input-secret)', check: 'TURNSTILE_SECRET_KEY' },
    ],
    ['a missing response', 200, '{"success":false,"error-codes":["missing-input-response"]}', { ok: true, spam: true }],
    ['null', 200, 'null', { ok: false, detail: 'no verdict (no error code)' }],
    ['codes that are not text', 200, '{"success":false,"error-codes":[1,"bad-request"]}', { ok: false, detail: 'no verdict (bad-request)' }],
  ])('an answer with %s', (_, status, text, expected) => {
    expect(classifyTurnstileAnswer(status, text)).toEqual(expected);
  });
});
