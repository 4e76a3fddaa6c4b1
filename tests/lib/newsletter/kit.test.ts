import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createKitProvider } from '../../../packages/site-forms/src/lib/newsletter/kit.ts';
import {
  type FakeHttpServer,
  type FakeReply,
  outcomeOnceAborted,
  replyInTurn,
  replyJson,
  replyReset,
  replyText,
  startFakeHttpServer,
} from '../../support/fake-http.ts';

let kit: FakeHttpServer;
beforeAll(async () => {
  kit = await startFakeHttpServer();
});
afterAll(() => kit.close());

const KEY = 'kit_secret_key_123';
const provider = () => createKitProvider({ apiKey: KEY, formId: '1234567', baseUrl: `${kit.url}/v3`, version: 'v3' });
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

  test('gives up on a server that never answers when the signal aborts, and not before', async () => {
    const outcome = await outcomeOnceAborted(kit, (signal) => provider().subscribe('ada@example.com', { signal, timeoutMs: 60_000 }));
    expect(outcome).toEqual(expect.objectContaining({ ok: false, reason: 'unavailable', detail: expect.stringMatching(/timeout/) }));
  });

  test('never puts the key in the detail that is logged, even when Kit repeats it', async () => {
    kit.reply(replyJson(401, { error: 'Authorization Failed', message: `API Key ${KEY} not valid` }));
    const outcome = await attempt();
    expect(outcome).toMatchObject({ reason: 'misconfigured' });
    expect(JSON.stringify(outcome)).not.toContain(KEY);
  });
});

/** Kit v4's answers: one per resource, as Kit's API routes them. */
const v4 = () => createKitProvider({ apiKey: KEY, formId: '1234567', baseUrl: `${kit.url}/v4`, version: 'v4' });
const byPath =
  (subscribers: FakeReply, form: FakeReply): FakeReply =>
  (request, res, req) =>
    (request.url === '/v4/subscribers' ? subscribers : form)(request, res, req);
const subscriber = (id = 660) => ({
  subscriber: { id, first_name: null, email_address: 'ada@example.com', state: 'active', created_at: '2026-11-24T12:00:00Z' },
});

describe("Kit v4 wire format (KIT_API_VERSION=v4, Kit's current API)", () => {
  test('creates the subscriber, then adds them to the form by address, with the key in X-Kit-Api-Key and never in a body', async () => {
    kit.reply(byPath(replyJson(201, subscriber()), replyJson(201, subscriber())));
    kit.requests.length = 0;
    await expect(v4().subscribe('ada@example.com')).resolves.toEqual({ ok: true });

    expect(kit.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /v4/subscribers', 'POST /v4/forms/1234567/subscribers']);
    for (const request of kit.requests) {
      expect(request.headers['x-kit-api-key']).toBe(KEY);
      expect(request.headers['content-type']).toBe('application/json');
      expect(JSON.parse(request.body)).toEqual({ email_address: 'ada@example.com' });
    }
  });

  test('stops after the first call when it fails: the form is never asked', async () => {
    kit.reply(byPath(replyJson(401, { errors: ['The access token is invalid'] }), replyJson(201, subscriber())));
    kit.requests.length = 0;
    await expect(v4().subscribe('ada@example.com')).resolves.toEqual({
      ok: false,
      reason: 'misconfigured',
      detail: 'HTTP 401 The access token is invalid',
      check: 'KIT_API_KEY',
    });
    expect(kit.requests.map((r) => r.url)).toEqual(['/v4/subscribers']);
  });

  test('a retry after a failed second call makes the same two calls again and succeeds: the first is an upsert', async () => {
    kit.reply(byPath(replyJson(200, subscriber()), replyInTurn(replyJson(503, { errors: ['Service Unavailable'] }), replyJson(200, subscriber()))));
    kit.requests.length = 0;
    await expect(v4().subscribe('ada@example.com')).resolves.toEqual({
      ok: false,
      reason: 'unavailable',
      detail: 'subscriber saved, adding to the form failed: HTTP 503 Service Unavailable',
    });
    await expect(v4().subscribe('ada@example.com')).resolves.toEqual({ ok: true });
    expect(kit.requests.map((r) => r.url)).toEqual(['/v4/subscribers', '/v4/forms/1234567/subscribers', '/v4/subscribers', '/v4/forms/1234567/subscribers']);
  });
});

describe('Kit v4 outcomes, step by step', () => {
  const ok = replyJson(201, subscriber());
  test.each<[string, FakeReply, FakeReply, Record<string, unknown>]>([
    ['a new subscriber added to the form', ok, ok, { ok: true }],
    ['an existing subscriber already on the form (200 twice)', replyJson(200, subscriber()), replyJson(200, subscriber()), { ok: true }],
    [
      'an invalid address',
      replyJson(422, { errors: ['Email address is invalid'] }),
      ok,
      { reason: 'invalid-address', detail: 'HTTP 422 Email address is invalid' },
    ],
    ['a V3 key used on V4', replyJson(401, { errors: ['API Key not valid'] }), ok, { reason: 'misconfigured', check: 'KIT_API_KEY' }],
    ['a wrong address for the API (404 on /subscribers)', replyText(404, '<h1>Not found</h1>'), ok, { reason: 'misconfigured', check: 'KIT_API_BASE_URL' }],
    ['Kit busy on the first call', replyJson(429, { errors: ['Too many requests'] }), ok, { reason: 'unavailable', detail: 'HTTP 429 Too many requests' }],
    [
      'a wrong form (404 on the second call)',
      ok,
      replyJson(404, { errors: ['Not Found'] }),
      { reason: 'misconfigured', check: 'KIT_FORM_ID', detail: 'subscriber saved, adding to the form failed: HTTP 404 Not Found' },
    ],
    [
      'a reset on the second call',
      ok,
      replyReset(),
      { reason: 'unavailable', detail: expect.stringMatching(/^subscriber saved, adding to the form failed: no answer/) },
    ],
    [
      'a second call answered without a subscriber',
      ok,
      replyJson(200, {}),
      { reason: 'unavailable', detail: 'subscriber saved, adding to the form failed: HTTP 200 without a subscriber' },
    ],
    [
      'a first call answered with HTML',
      replyText(200, '<html>Wi-Fi</html>'),
      ok,
      { reason: 'unavailable', detail: 'HTTP 200 without a subscriber (not JSON)' },
    ],
  ])('maps %s to its outcome', async (_, first, second, outcome) => {
    kit.reply(byPath(first, second));
    await expect(v4().subscribe('ada@example.com', { signal: AbortSignal.timeout(2_000) })).resolves.toEqual(expect.objectContaining(outcome));
  });

  test('never puts the key in the detail, even when Kit repeats it in its errors', async () => {
    kit.reply(byPath(replyJson(401, { errors: [`Key ${KEY} is not valid`] }), ok));
    const outcome = await v4().subscribe('ada@example.com');
    expect(JSON.stringify(outcome)).not.toContain(KEY);
    expect(outcome).toMatchObject({ detail: 'HTTP 401 Key *** is not valid' });
  });
});
