import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createKitProvider } from '../../../src/lib/newsletter/kit.ts';
import { type FakeHttpServer, type FakeReply, replyHang, replyJson, replyReset, replyText, startFakeHttpServer } from '../../support/fake-http.ts';

let kit: FakeHttpServer;
beforeAll(async () => {
  kit = await startFakeHttpServer();
});
afterAll(() => kit.close());

const KEY = 'kit_secret_key_123';
const provider = () => createKitProvider({ apiKey: KEY, formId: '1234567', baseUrl: `${kit.url}/v3` });
/** One attempt, as `resilient.ts` makes it: with a signal and the time left. */
const attempt = (timeoutMs = 2_000) => provider().subscribe('ada@example.com', { signal: AbortSignal.timeout(timeoutMs), timeoutMs });

const subscription = { subscription: { id: 1, state: 'inactive', subscribable_id: 2, subscribable_type: 'form', subscriber: { id: 3 } } };

describe('Kit wire format (SPEC.md 2.4 row 2)', () => {
  test('posts the key and the address as JSON to the form-subscribe resource', async () => {
    kit.reply(replyJson(200, subscription));
    kit.requests.length = 0;
    await expect(provider().subscribe('ada@example.com')).resolves.toEqual({ ok: true });

    expect(kit.requests).toHaveLength(1);
    const [request] = kit.requests;
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/v3/forms/1234567/subscribe');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers.authorization).toBeUndefined();
    expect(JSON.parse(request!.body)).toEqual({ api_key: KEY, email: 'ada@example.com' });
  });
});

describe('Kit outcomes of one attempt', () => {
  test.each<[string, FakeReply, Record<string, unknown>]>([
    ['a new subscriber', replyJson(200, subscription), { ok: true }],
    ['a subscription created', replyJson(201, subscription), { ok: true }],
    [
      'an address already on the form (Kit answers 200 again)',
      replyJson(200, { subscription: { ...subscription.subscription, state: 'active' } }),
      { ok: true },
    ],
    ['an invalid address (400)', replyJson(400, { error: 'Bad Request', message: 'Email address is invalid' }), { reason: 'invalid-address' }],
    ['an invalid address (422)', replyJson(422, { error: 'Email address is invalid' }), { reason: 'invalid-address' }],
    ['another 422', replyJson(422, { error: 'Unprocessable', message: 'Form is archived' }), { reason: 'misconfigured', check: 'KIT_API_KEY and KIT_FORM_ID' }],
    ['a bad key', replyJson(401, { error: 'Authorization Failed', message: 'API Key not valid' }), { reason: 'misconfigured', check: 'KIT_API_KEY' }],
    ['a forbidden key', replyJson(403, { error: 'Forbidden' }), { reason: 'misconfigured', check: 'KIT_API_KEY' }],
    [
      'a wrong form',
      replyJson(404, { error: 'Not Found', message: "The entity you were trying to find doesn't exist" }),
      { reason: 'misconfigured', check: 'KIT_FORM_ID' },
    ],
    ['a 404 HTML page', replyText(404, '<h1>Not found</h1>'), { reason: 'misconfigured', check: 'KIT_FORM_ID' }],
    ['too many requests', replyJson(429, { error: 'Too Many Requests' }), { reason: 'unavailable' }],
    ['a server error', replyJson(500, { error: 'Internal Server Error' }), { reason: 'unavailable' }],
    ['a bad gateway', replyText(502, '<html>Bad gateway</html>'), { reason: 'unavailable' }],
    ['a maintenance window', replyJson(503, { error: 'Service Unavailable' }), { reason: 'unavailable' }],
    ['an HTML page with 200', replyText(200, '<html><body>Sign in to the Wi-Fi</body></html>'), { reason: 'unavailable' }],
    ['an HTML page with 400', replyText(400, '<html>Bad request</html>'), { reason: 'unavailable' }],
    ['JSON without a subscription', replyJson(200, { ok: true }), { reason: 'unavailable' }],
    ['JSON that does not parse', replyText(200, '{"subscription": {', 'application/json'), { reason: 'unavailable' }],
    ['a reset connection', replyReset(), { reason: 'unavailable' }],
  ])('maps %s to its outcome', async (_, reply, outcome) => {
    kit.reply(reply);
    await expect(attempt()).resolves.toEqual(expect.objectContaining(outcome));
  });

  test('gives up on a server that never answers when the signal aborts', async () => {
    kit.reply(replyHang());
    const started = performance.now();
    await expect(attempt(300)).resolves.toEqual(expect.objectContaining({ ok: false, reason: 'unavailable', detail: expect.stringMatching(/timeout/) }));
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  test('never puts the key in the detail that is logged, even when Kit repeats it', async () => {
    kit.reply(replyJson(401, { error: 'Authorization Failed', message: `API Key ${KEY} not valid` }));
    const outcome = await attempt();
    expect(outcome).toMatchObject({ reason: 'misconfigured' });
    expect(JSON.stringify(outcome)).not.toContain(KEY);
  });
});
