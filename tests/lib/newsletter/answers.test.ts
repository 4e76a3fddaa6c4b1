import { describe, expect, test } from 'vitest';
import { classifyKitAnswer } from '../../../packages/site-forms/src/lib/newsletter/kit.ts';
import { classifyResendError } from '../../../packages/site-forms/src/lib/newsletter/resend.ts';

const KEY = 'kit-secret-key-123';

describe("Kit's answers, word for word", () => {
  test.each([
    ['200 with a subscription', 200, '{"subscription":{"id":1}}', { ok: true }],
    ['201 with a subscription', 201, '{"subscription":{"id":1}}', { ok: true }],
    ['200 whose subscription is null', 200, '{"subscription":null}', { ok: false, reason: 'unavailable', detail: 'HTTP 200 without a subscription' }],
    ['200 whose subscription is text', 200, '{"subscription":"yes"}', { ok: false, reason: 'unavailable', detail: 'HTTP 200 without a subscription' }],
    ['200 that is not JSON', 200, '<html>ok</html>', { ok: false, reason: 'unavailable', detail: 'HTTP 200 without a subscription (not JSON)' }],
    ['200 that is JSON but not an object', 200, '"ok"', { ok: false, reason: 'unavailable', detail: 'HTTP 200 without a subscription (not JSON)' }],
    ['200 that is JSON null', 200, 'null', { ok: false, reason: 'unavailable', detail: 'HTTP 200 without a subscription (not JSON)' }],
    [
      '401 naming the error and a message, the key redacted',
      401,
      `{"error":"Authorization Failed","message":"API Key ${KEY} not valid"}`,
      { ok: false, reason: 'misconfigured', detail: 'HTTP 401 Authorization Failed: API Key *** not valid', check: 'KIT_API_KEY' },
    ],
    ['403 with only a message', 403, '{"message":"Forbidden"}', { ok: false, reason: 'misconfigured', detail: 'HTTP 403 Forbidden', check: 'KIT_API_KEY' }],
    ['404 whose error is not text', 404, '{"error":{"code":1}}', { ok: false, reason: 'misconfigured', detail: 'HTTP 404', check: 'KIT_FORM_ID' }],
    ['307, not followed', 307, '', { ok: false, reason: 'misconfigured', detail: 'HTTP 307 redirect, not followed', check: 'KIT_API_BASE_URL' }],
    ['429', 429, '{"error":"Too many"}', { ok: false, reason: 'unavailable', detail: 'HTTP 429 Too many' }],
    ['500 that is not JSON', 500, 'Bad gateway', { ok: false, reason: 'unavailable', detail: 'HTTP 500' }],
    ['400 that is not JSON', 400, 'nope', { ok: false, reason: 'unavailable', detail: 'HTTP 400 that is not JSON' }],
    [
      '422 about the email',
      422,
      '{"error":"Unprocessable","message":"Email address is invalid"}',
      { ok: false, reason: 'invalid-address', detail: 'HTTP 422 Unprocessable: Email address is invalid' },
    ],
    ['400 about the e-mail', 400, '{"message":"Invalid e-mail"}', { ok: false, reason: 'invalid-address', detail: 'HTTP 400 Invalid e-mail' }],
    [
      '400 about something else',
      400,
      '{"message":"Form is archived"}',
      { ok: false, reason: 'misconfigured', detail: 'HTTP 400 Form is archived', check: 'KIT_API_KEY and KIT_FORM_ID' },
    ],
    [
      '409 about the email: only 400 and 422 count as a bad address',
      409,
      '{"message":"Email conflict"}',
      { ok: false, reason: 'misconfigured', detail: 'HTTP 409 Email conflict', check: 'KIT_API_KEY and KIT_FORM_ID' },
    ],
  ])('%s', (_, status, text, outcome) => {
    expect(classifyKitAnswer(status, text, KEY)).toEqual(outcome);
  });

  test('a message is cut at 200 characters', () => {
    const outcome = classifyKitAnswer(401, JSON.stringify({ message: 'x'.repeat(300) }));
    expect(outcome).toEqual({ ok: false, reason: 'misconfigured', detail: `HTTP 401 ${'x'.repeat(200)}`, check: 'KIT_API_KEY' });
  });

  test('without a key to redact, the words are kept as they are', () => {
    expect(classifyKitAnswer(401, '{"message":"*** stars"}')).toEqual({
      ok: false,
      reason: 'misconfigured',
      detail: 'HTTP 401 *** stars',
      check: 'KIT_API_KEY',
    });
  });
});

describe("Resend's errors, word for word", () => {
  test.each([
    ['already exists', { name: 'validation_error', message: 'Contact already exists', statusCode: 409 }, { ok: true }],
    [
      'a redirect',
      { name: 'application_error', statusCode: 301 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 301 redirect, not followed', check: 'RESEND_BASE_URL' },
    ],
    [
      'a key refused',
      { name: 'invalid_api_key', statusCode: 403 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 403 invalid_api_key', check: 'RESEND_API_KEY' },
    ],
    [
      'a sending-only key',
      { name: 'restricted_api_key', statusCode: 401 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 401 restricted_api_key', check: 'RESEND_API_KEY (it needs full access, not sending only)' },
    ],
    ['401 of another name', { name: 'odd', statusCode: 401 }, { ok: false, reason: 'misconfigured', detail: 'HTTP 401 odd', check: 'RESEND_API_KEY' }],
    ['not_found without a status', { name: 'not_found' }, { ok: false, reason: 'misconfigured', detail: 'no status not_found', check: 'RESEND_AUDIENCE_ID' }],
    ['404 of another name', { name: 'odd', statusCode: 404 }, { ok: false, reason: 'misconfigured', detail: 'HTTP 404 odd', check: 'RESEND_AUDIENCE_ID' }],
    [
      'a quota',
      { name: 'daily_quota_exceeded', statusCode: 429 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 429 daily_quota_exceeded', check: 'the quota of the Resend account of RESEND_API_KEY' },
    ],
    ['busy, with a status', { name: 'rate_limit_exceeded', statusCode: 429 }, { ok: false, reason: 'unavailable', detail: 'HTTP 429 rate_limit_exceeded' }],
    ['429 of another name', { name: 'odd', statusCode: 429 }, { ok: false, reason: 'unavailable', detail: 'HTTP 429 odd' }],
    ['500 of another name', { name: 'odd', statusCode: 500 }, { ok: false, reason: 'unavailable', detail: 'HTTP 500 odd' }],
    [
      'no answer at all',
      { name: 'application_error', statusCode: null },
      { ok: false, reason: 'unavailable', detail: 'no answer or not JSON (application_error)' },
    ],
    ['no name and no status', {}, { ok: false, reason: 'misconfigured', detail: 'no status unknown', check: 'RESEND_AUDIENCE_ID' }],
    [
      'an address refused',
      { name: 'validation_error', message: 'Invalid `email` field', statusCode: 422 },
      { ok: false, reason: 'invalid-address', detail: 'HTTP 422 validation_error' },
    ],
    [
      'an input error about something else',
      { name: 'validation_error', message: 'Invalid audience', statusCode: 422 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 422 validation_error', check: 'RESEND_AUDIENCE_ID' },
    ],
    [
      'a message that is not text',
      { name: 'validation_error', message: 42 as unknown as string, statusCode: 422 },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 422 validation_error', check: 'RESEND_AUDIENCE_ID' },
    ],
    [
      'a status that is not a number',
      { name: 'odd', statusCode: '500' as unknown as number },
      { ok: false, reason: 'misconfigured', detail: 'no status odd', check: 'RESEND_AUDIENCE_ID' },
    ],
  ])('%s', (_, error, outcome) => {
    expect(classifyResendError(error, 'RESEND_AUDIENCE_ID')).toEqual(outcome);
  });
});
