import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createResendProvider } from '../../../packages/site-forms/src/lib/newsletter/resend.ts';
import { type FakeHttpServer, type FakeReply, outcomeOnceAborted, replyJson, replyReset, replyText, startFakeHttpServer } from '../../support/fake-http.ts';

let resend: FakeHttpServer;
beforeAll(async () => {
  resend = await startFakeHttpServer();
});
afterAll(() => resend.close());

const KEY = 're_secret_key_123';
const AUDIENCE = '78261eea-8f8b-4381-83c6-79fa7120f1cf';
const provider = (audienceId = AUDIENCE) => createResendProvider({ apiKey: KEY, target: { kind: 'audience', id: audienceId }, baseUrl: resend.url });
/** One attempt, as `resilient.ts` makes it: with a signal and the time left. */
const attempt = (timeoutMs = 2_000) => provider().subscribe('ada@example.com', { signal: AbortSignal.timeout(timeoutMs), timeoutMs });

/** An error as Resend's API writes it. */
const problem = (statusCode: number, name: string, message: string) => replyJson(statusCode, { statusCode, name, message });
const created = replyJson(200, { object: 'contact', id: '479e3145-dd38-476b-932c-529ceb705947' });

describe('Resend wire format (SPEC.md 2.4 row 3, through the SDK)', () => {
  test('creates a contact in the audience with a bearer key and a JSON body holding the address', async () => {
    resend.reply(created);
    resend.requests.length = 0;
    await expect(provider().subscribe('ada@example.com')).resolves.toEqual({ ok: true });

    expect(resend.requests).toHaveLength(1);
    const [request] = resend.requests;
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe(`/audiences/${AUDIENCE}/contacts`);
    expect(request!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request!.body)).toEqual({ email: 'ada@example.com' });
  });

  test('an audience id can never become another path', async () => {
    resend.reply(created);
    resend.requests.length = 0;
    await provider('../emails').subscribe('ada@example.com');
    expect(resend.requests.at(-1)?.url).toBe('/audiences/..%2Femails/contacts');
  });
});

describe("Resend wire format with a segment (RESEND_SEGMENT_ID, Resend's current API)", () => {
  const SEGMENT = 'b6d24b8e-af0b-4c3c-be0c-359bbd97381e';
  const withSegment = () => createResendProvider({ apiKey: KEY, target: { kind: 'segment', id: SEGMENT }, baseUrl: resend.url });

  test('creates the contact at /contacts with the segment in the body, never under /audiences', async () => {
    resend.reply(created);
    resend.requests.length = 0;
    await expect(withSegment().subscribe('ada@example.com')).resolves.toEqual({ ok: true });

    expect(resend.requests).toHaveLength(1);
    const [request] = resend.requests;
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/contacts');
    expect(request!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(JSON.parse(request!.body)).toEqual({ email: 'ada@example.com', segments: [{ id: SEGMENT }] });
  });

  test.each<[string, FakeReply, Record<string, unknown>]>([
    ['a wrong segment', problem(404, 'not_found', 'Segment not found'), { reason: 'misconfigured', check: 'RESEND_SEGMENT_ID' }],
    ['a malformed segment id', problem(422, 'validation_error', 'The `id` must be a valid UUID.'), { reason: 'misconfigured', check: 'RESEND_SEGMENT_ID' }],
    ['a bad key', problem(403, 'invalid_api_key', 'API key is invalid.'), { reason: 'misconfigured', check: 'RESEND_API_KEY' }],
  ])('names RESEND_SEGMENT_ID, not the audience, for %s', async (_, reply, outcome) => {
    resend.reply(reply);
    await expect(withSegment().subscribe('ada@example.com', { signal: AbortSignal.timeout(2_000) })).resolves.toEqual(expect.objectContaining(outcome));
  });
});

describe('Resend outcomes of one attempt', () => {
  test.each<[string, FakeReply, Record<string, unknown>]>([
    ['a new contact', created, { ok: true }],
    ['a contact that exists (Resend answers 200 with its id)', created, { ok: true }],
    ['a contact that exists, should Resend ever refuse it', problem(409, 'validation_error', 'Contact already exists'), { ok: true }],
    [
      'an invalid address',
      problem(422, 'validation_error', 'Invalid `email` field. The email address needs to follow the `email@example.com` format.'),
      { reason: 'invalid-address' },
    ],
    ['a malformed audience id', problem(422, 'validation_error', 'The `id` must be a valid UUID.'), { reason: 'misconfigured', check: 'RESEND_AUDIENCE_ID' }],
    ['a missing key', problem(401, 'missing_api_key', 'Missing API key in the authorization header.'), { reason: 'misconfigured', check: 'RESEND_API_KEY' }],
    [
      'a key that may only send',
      problem(401, 'restricted_api_key', 'This API key is restricted to only send emails.'),
      { reason: 'misconfigured', check: expect.stringMatching(/^RESEND_API_KEY .*full access/) },
    ],
    ['a bad key', problem(403, 'invalid_api_key', 'API key is invalid.'), { reason: 'misconfigured', check: 'RESEND_API_KEY' }],
    ['a wrong audience', problem(404, 'not_found', 'Audience not found'), { reason: 'misconfigured', check: 'RESEND_AUDIENCE_ID' }],
    ['a 404 HTML page', replyText(404, '<h1>Not found</h1>'), { reason: 'misconfigured', check: 'RESEND_AUDIENCE_ID' }],
    [
      'a used-up daily quota',
      problem(429, 'daily_quota_exceeded', 'You have reached your daily quota.'),
      { reason: 'misconfigured', check: expect.stringContaining('quota') },
    ],
    ['too many requests', problem(429, 'rate_limit_exceeded', 'Too many requests.'), { reason: 'unavailable' }],
    ['a server error', problem(500, 'internal_server_error', 'An unexpected error occurred.'), { reason: 'unavailable' }],
    ['a bad gateway', replyText(502, '<html>Bad gateway</html>'), { reason: 'unavailable' }],
    ['a maintenance window', problem(503, 'application_error', 'Service unavailable'), { reason: 'unavailable' }],
    ['an HTML page with 200', replyText(200, '<html><body>Sign in to the Wi-Fi</body></html>'), { reason: 'unavailable' }],
    ['an HTML page with 400', replyText(400, '<html>Bad request</html>'), { reason: 'unavailable' }],
    ['JSON without a contact', replyJson(200, { object: 'contact' }), { reason: 'unavailable' }],
    ['a reset connection', replyReset(), { reason: 'unavailable' }],
    [
      "a JSON 500 not shaped like Resend's errors (a proxy)",
      replyJson(500, { error: 'upstream failed' }),
      { reason: 'unavailable', detail: 'HTTP 500 unrecognised_error' },
    ],
    [
      "a JSON 503 not shaped like Resend's errors (a proxy)",
      replyJson(503, { message: 'Service Unavailable' }),
      { reason: 'unavailable', detail: 'HTTP 503 unrecognised_error' },
    ],
    ["a JSON 401 not shaped like Resend's errors (a proxy)", replyJson(401, { message: 'Unauthorized' }), { reason: 'misconfigured', check: 'RESEND_API_KEY' }],
    ['a JSON 403 that is a list, not an object', replyJson(403, ['forbidden']), { reason: 'misconfigured', check: 'RESEND_API_KEY' }],
    ['an empty 2xx', replyText(200, '', 'application/json'), { reason: 'unavailable', detail: 'HTTP 200 application_error' }],
  ])('maps %s to its outcome', async (_, reply, outcome) => {
    resend.reply(reply);
    await expect(attempt()).resolves.toEqual(expect.objectContaining(outcome));
  });

  test('gives up on a server that never answers when the signal aborts, and not before', async () => {
    const outcome = await outcomeOnceAborted(resend, (signal) => provider().subscribe('ada@example.com', { signal, timeoutMs: 60_000 }));
    expect(outcome).toEqual(expect.objectContaining({ ok: false, reason: 'unavailable' }));
  });

  test('never puts the key in the detail that is logged', async () => {
    resend.reply(problem(403, 'invalid_api_key', `API key ${KEY} is invalid.`));
    const outcome = await attempt();
    expect(outcome).toMatchObject({ reason: 'misconfigured' });
    expect(JSON.stringify(outcome)).not.toContain(KEY);
  });
});
