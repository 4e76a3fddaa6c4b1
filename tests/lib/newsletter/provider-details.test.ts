import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { classifyKitAnswer, createKitProvider } from '../../../packages/site-forms/src/lib/newsletter/kit.ts';
import { classifyResendError, createResendProvider, type ResendError, sendToResend } from '../../../packages/site-forms/src/lib/newsletter/resend.ts';
import { type FakeHttpServer, type FakeReply, replyJson, replyReset, replyText, startFakeHttpServer } from '../../support/fake-http.ts';

// Kit's and Resend's answers to their exact outcomes: the detail that is logged and the variable the
// owner is told to check, for each name, status and message the two APIs use.
const KEY_CHECK = 'RESEND_API_KEY';
const BASE = 'RESEND_BASE_URL';
const QUOTA = 'the quota of the Resend account of RESEND_API_KEY';

describe("Resend's errors", () => {
  test.each<[string, ResendError, Record<string, unknown>]>([
    ['an existing contact', { name: 'validation_error', message: 'Contact already exists', statusCode: 409 }, { ok: true }],
    ['an existing contact, in capitals', { name: 'x', message: 'ALREADY EXISTS', statusCode: null }, { ok: true }],
    [
      'a redirect',
      { name: 'application_error', statusCode: 307 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 307 redirect, not followed', check: BASE },
    ],
    [
      'a sending-only key',
      { name: 'restricted_api_key', message: 'This key can only send', statusCode: 401 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 401 restricted_api_key', check: 'RESEND_API_KEY (it needs full access, not sending only)' },
    ],
    [
      'a key error by name alone',
      { name: 'invalid_access', statusCode: 422 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 422 invalid_access', check: KEY_CHECK },
    ],
    [
      'a key error without a status',
      { name: 'security_error', statusCode: null },
      { ok: false, reason: 'misconfigured', detail: 'no status security_error', check: KEY_CHECK },
    ],
    ['a 403 by status alone', { name: 'x', statusCode: 403 }, { ok: false, reason: 'misconfigured', detail: 'HTTP 403 x', check: KEY_CHECK }],
    ['a 401 without a name', { statusCode: 401 }, { ok: false, reason: 'misconfigured', detail: 'HTTP 401 unknown', check: KEY_CHECK }],
    [
      'not found by name',
      { name: 'not_found', statusCode: 400 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 400 not_found', check: 'RESEND_AUDIENCE_ID' },
    ],
    ['a 404 by status', { name: 'x', statusCode: 404 }, { ok: false, reason: 'misconfigured', detail: 'HTTP 404 x', check: 'RESEND_AUDIENCE_ID' }],
    [
      'a daily quota',
      { name: 'daily_quota_exceeded', statusCode: 429 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 429 daily_quota_exceeded', check: QUOTA },
    ],
    [
      'a monthly quota',
      { name: 'monthly_quota_exceeded', statusCode: 429 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 429 monthly_quota_exceeded', check: QUOTA },
    ],
    ['a rate limit', { name: 'rate_limit_exceeded', statusCode: 429 }, { ok: false, reason: 'unavailable', detail: 'HTTP 429 rate_limit_exceeded' }],
    ['no answer', { name: 'application_error', statusCode: null }, { ok: false, reason: 'unavailable', detail: 'no answer or not JSON (application_error)' }],
    ['an internal error', { name: 'internal_server_error' }, { ok: false, reason: 'unavailable', detail: 'no answer or not JSON (internal_server_error)' }],
    [
      'concurrent requests',
      { name: 'concurrent_idempotent_requests', statusCode: 409 },
      { ok: false, reason: 'unavailable', detail: 'HTTP 409 concurrent_idempotent_requests' },
    ],
    ['a 429 of another name', { name: 'x', statusCode: 429 }, { ok: false, reason: 'unavailable', detail: 'HTTP 429 x' }],
    ['a 500 of another name', { name: 'x', statusCode: 500 }, { ok: false, reason: 'unavailable', detail: 'HTTP 500 x' }],
    ['a 499 of another name', { name: 'x', statusCode: 499 }, { ok: false, reason: 'misconfigured', detail: 'HTTP 499 x', check: 'RESEND_AUDIENCE_ID' }],
    [
      'an invalid address',
      { name: 'validation_error', message: 'Invalid `email` field.', statusCode: 422 },
      { ok: false, reason: 'invalid-address', detail: 'HTTP 422 validation_error' },
    ],
    [
      'an invalid e-mail parameter',
      { name: 'invalid_parameter', message: 'The E-Mail is malformed', statusCode: 422 },
      { ok: false, reason: 'invalid-address', detail: 'HTTP 422 invalid_parameter' },
    ],
    [
      'a missing address',
      { name: 'missing_required_field', message: 'Missing `email`', statusCode: 422 },
      { ok: false, reason: 'invalid-address', detail: 'HTTP 422 missing_required_field' },
    ],
    [
      'a validation error about something else',
      { name: 'validation_error', message: 'Invalid `audienceId`', statusCode: 422 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 422 validation_error', check: 'RESEND_AUDIENCE_ID' },
    ],
    [
      'a message that is not text',
      { name: 'validation_error', message: ['email'] as unknown as string, statusCode: 422 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 422 validation_error', check: 'RESEND_AUDIENCE_ID' },
    ],
    [
      'an address error of a name that is not about input',
      { name: 'x', message: 'email', statusCode: 422 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 422 x', check: 'RESEND_AUDIENCE_ID' },
    ],
  ])('%s', (_, error, outcome) => {
    expect(classifyResendError(error, 'RESEND_AUDIENCE_ID')).toEqual(outcome);
  });

  test('a segment that is not found names the segment variable', () => {
    expect(classifyResendError({ name: 'not_found', statusCode: 404 }, 'RESEND_SEGMENT_ID')).toEqual({
      ok: false,
      reason: 'misconfigured',
      detail: 'HTTP 404 not_found',
      check: 'RESEND_SEGMENT_ID',
    });
  });
});

describe("Resend's transport against a real HTTP server", () => {
  let server: FakeHttpServer;
  beforeAll(async () => {
    server = await startFakeHttpServer();
  });
  afterAll(() => server.close());

  const send = () => sendToResend(`${server.url}/contacts`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });

  test.each<[string, FakeReply, unknown]>([
    ['a contact', replyJson(200, { id: 'c1' }), { data: { id: 'c1' }, error: null }],
    ['a 200 that is not JSON', replyText(200, '<html></html>'), { data: null, error: { name: 'application_error', statusCode: 200 } }],
    ['a 200 that is JSON null', replyText(200, 'null', 'application/json'), { data: null, error: { name: 'application_error', statusCode: 200 } }],
    ['a 200 that is a JSON string', replyText(200, '"ok"', 'application/json'), { data: null, error: { name: 'application_error', statusCode: 200 } }],
    [
      "Resend's error",
      replyJson(422, { statusCode: 422, name: 'validation_error', message: 'Invalid `email`' }),
      { data: null, error: { name: 'validation_error', message: 'Invalid `email`', statusCode: 422 } },
    ],
    [
      'JSON of another shape',
      replyJson(503, { error: 'busy', name: 7, message: 8 }),
      { data: null, error: { name: 'unrecognised_error', message: '', statusCode: 503 } },
    ],
    ['an error page', replyText(502, '<h1>Bad gateway</h1>'), { data: null, error: { name: 'application_error', statusCode: 502 } }],
    ['a reset', replyReset(), { data: null, error: { name: 'application_error', statusCode: null } }],
  ])('%s', async (_, reply, answer) => {
    server.reply(reply);
    await expect(send()).resolves.toEqual(answer);
  });

  test('a contact without an id is not taken for one', async () => {
    server.reply(replyJson(200, { object: 'contact' }));
    const provider = createResendProvider({ apiKey: 're_1', target: { kind: 'segment', id: 's1' }, baseUrl: server.url });
    await expect(provider.subscribe('ada@example.com')).resolves.toEqual({ ok: false, reason: 'unavailable', detail: 'HTTP 2xx without a contact' });
  });

  test('Kit v4 asks for JSON, and a reset of its first call is no answer, not an answer', async () => {
    const kit = (version: 'v3' | 'v4') => createKitProvider({ apiKey: 'k', formId: '1', baseUrl: server.url, version });
    server.reply(replyJson(200, { subscriber: { id: 1 } }));
    server.requests.length = 0;
    await expect(kit('v4').subscribe('ada@example.com')).resolves.toEqual({ ok: true });
    expect(server.requests.map((r) => r.headers.accept)).toEqual(['application/json', 'application/json']);
    server.reply(replyReset());
    await expect(kit('v4').subscribe('ada@example.com')).resolves.toEqual({ ok: false, reason: 'unavailable', detail: 'no answer (network error ECONNRESET)' });
    await expect(kit('v3').subscribe('ada@example.com')).resolves.toEqual({ ok: false, reason: 'unavailable', detail: 'no answer (network error ECONNRESET)' });
  });

  test('a redirect is answered, not followed', async () => {
    server.reply((_, res) => void res.writeHead(307, { location: `${server.url}/elsewhere` }).end());
    server.requests.length = 0;
    await expect(send()).resolves.toEqual({ data: null, error: { name: 'application_error', statusCode: 307 } });
    expect(server.requests.map((r) => r.url)).toEqual(['/contacts']);
  });
});

describe("Kit's answers (v3's form subscribe)", () => {
  const GENERIC = 'KIT_API_KEY and KIT_FORM_ID';
  test.each<[string, number, string, Record<string, unknown>]>([
    ['a subscription', 200, '{"subscription":{"id":1}}', { ok: true }],
    ['a subscription created', 201, '{"subscription":{}}', { ok: true }],
    ['a 202 is not a subscription', 202, '{"subscription":{}}', { ok: false, reason: 'misconfigured', detail: 'HTTP 202', check: GENERIC }],
    ['a null subscription', 200, '{"subscription":null}', { ok: false, reason: 'unavailable', detail: 'HTTP 200 without a subscription' }],
    ['a subscription that is text', 200, '{"subscription":"yes"}', { ok: false, reason: 'unavailable', detail: 'HTTP 200 without a subscription' }],
    ['a page', 200, '<html></html>', { ok: false, reason: 'unavailable', detail: 'HTTP 200 without a subscription (not JSON)' }],
    ['JSON text', 201, '"ok"', { ok: false, reason: 'unavailable', detail: 'HTTP 201 without a subscription (not JSON)' }],
    ['a redirect', 302, '', { ok: false, reason: 'misconfigured', detail: 'HTTP 302 redirect, not followed', check: 'KIT_API_BASE_URL' }],
    [
      "v3's error and message",
      401,
      '{"error":"Authorization Failed","message":"API Key not valid"}',
      { ok: false, reason: 'misconfigured', detail: 'HTTP 401 Authorization Failed: API Key not valid', check: 'KIT_API_KEY' },
    ],
    [
      "v4's errors, text only",
      403,
      '{"errors":["Forbidden","Ask the owner",3]}',
      { ok: false, reason: 'misconfigured', detail: 'HTTP 403 Forbidden: Ask the owner', check: 'KIT_API_KEY' },
    ],
    ['errors that are not a list', 403, '{"errors":"Forbidden"}', { ok: false, reason: 'misconfigured', detail: 'HTTP 403', check: 'KIT_API_KEY' }],
    ['a form not found', 404, '{}', { ok: false, reason: 'misconfigured', detail: 'HTTP 404', check: 'KIT_FORM_ID' }],
    ['a rate limit', 429, '{"error":"Slow down"}', { ok: false, reason: 'unavailable', detail: 'HTTP 429 Slow down' }],
    ['a server error', 500, '', { ok: false, reason: 'unavailable', detail: 'HTTP 500' }],
    ['a 499', 499, '{"error":"Closed"}', { ok: false, reason: 'misconfigured', detail: 'HTTP 499 Closed', check: GENERIC }],
    ['a 422 page', 422, '<p>no</p>', { ok: false, reason: 'unavailable', detail: 'HTTP 422 that is not JSON' }],
    ['a 422 of JSON null', 422, 'null', { ok: false, reason: 'unavailable', detail: 'HTTP 422 that is not JSON' }],
    ['an invalid e-mail (422)', 422, '{"error":"E-mail is invalid"}', { ok: false, reason: 'invalid-address', detail: 'HTTP 422 E-mail is invalid' }],
    ['an invalid email (400)', 400, '{"errors":["EMAIL is invalid"]}', { ok: false, reason: 'invalid-address', detail: 'HTTP 400 EMAIL is invalid' }],
    ['a 400 about something else', 400, '{"error":"Form archived"}', { ok: false, reason: 'misconfigured', detail: 'HTTP 400 Form archived', check: GENERIC }],
    ['a 409 about the email', 409, '{"error":"email taken"}', { ok: false, reason: 'misconfigured', detail: 'HTTP 409 email taken', check: GENERIC }],
  ])('%s', (_, status, text, outcome) => {
    expect(classifyKitAnswer(status, text)).toEqual(outcome);
  });

  test('a long message is cut to 200 characters, after the key is hidden', () => {
    const message = `key k123 ${'x'.repeat(300)}`;
    expect(classifyKitAnswer(401, JSON.stringify({ error: message }), 'k123')).toEqual({
      ok: false,
      reason: 'misconfigured',
      detail: `HTTP 401 key *** ${'x'.repeat(192)}`,
      check: 'KIT_API_KEY',
    });
  });

  test('without a key, the message is kept as it is', () => {
    expect(classifyKitAnswer(401, '{"error":"ab"}', '')).toMatchObject({ detail: 'HTTP 401 ab' });
  });
});
