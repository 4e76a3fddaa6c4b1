import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { classifyMailchimpAnswer, classifyMailchimpError, createMailchimpProvider } from '../../../packages/site-forms/src/lib/newsletter/mailchimp.ts';
import { type FakeHttpServer, replyAfter, replyHang, replyJson, replyText, startFakeHttpServer } from '../../support/fake-http.ts';

// Each Mailchimp answer to its exact outcome (the detail that is logged, the variable the owner is
// told to check): first as the real client receives it from a real HTTP server, then the shapes of
// superagent's errors that a server cannot easily produce.
let mailchimp: FakeHttpServer;
beforeAll(async () => {
  mailchimp = await startFakeHttpServer();
});
afterAll(() => mailchimp.close());

const provider = () => createMailchimpProvider({ apiKey: 'key123-us21', listId: 'list42', baseUrl: `${mailchimp.url}/3.0` });
const PROBLEM = { 'content-type': 'application/problem+json' };
const problem = (status: number, body: Record<string, unknown>) => replyJson(status, { status, ...body }, PROBLEM);
const GENERIC = 'MAILCHIMP_API_KEY and MAILCHIMP_LIST_ID';
const MERGE_FIELDS = 'the required merge fields of the audience MAILCHIMP_LIST_ID';

describe('Mailchimp answers through the client, to the exact outcome', () => {
  test.each([
    ['a member', replyJson(200, { id: 'abc' }), { ok: true }],
    ['a member as problem+json', replyJson(200, { id: 'abc' }, PROBLEM), { ok: true }],
    ['a 200 that is JSON null', replyText(200, 'null', 'application/json'), { ok: false, reason: 'unavailable', detail: 'HTTP 200 that is not JSON' }],
    ['a 200 as plain text', replyText(200, '{"id":"abc"}', 'text/plain'), { ok: false, reason: 'unavailable', detail: 'HTTP 200 that is not JSON' }],
    ['an existing member', problem(400, { title: 'Member Exists' }), { ok: true }],
    [
      'a moved API',
      replyText(301, '', 'text/html'),
      {
        ok: false,
        reason: 'misconfigured',
        detail: 'HTTP 301 redirect, not followed',
        check: 'MAILCHIMP_API_BASE_URL, or the data centre at the end of MAILCHIMP_API_KEY',
      },
    ],
    [
      'a bad key',
      problem(401, { title: 'API Key Invalid' }),
      { ok: false, reason: 'misconfigured', detail: 'HTTP 401 API Key Invalid', check: 'MAILCHIMP_API_KEY' },
    ],
    ['a forbidden key without a title', problem(403, {}), { ok: false, reason: 'misconfigured', detail: 'HTTP 403', check: 'MAILCHIMP_API_KEY' }],
    [
      'a wrong list',
      problem(404, { title: 'Resource Not Found' }),
      { ok: false, reason: 'misconfigured', detail: 'HTTP 404 Resource Not Found', check: 'MAILCHIMP_LIST_ID' },
    ],
    ['a rate limit', problem(429, { title: 'Too Many Requests' }), { ok: false, reason: 'unavailable', detail: 'HTTP 429 Too Many Requests' }],
    ['a server error', problem(500, { title: 'Internal Server Error' }), { ok: false, reason: 'unavailable', detail: 'HTTP 500 Internal Server Error' }],
    ['a 400 page that is not JSON', replyText(400, '<p>Bad</p>'), { ok: false, reason: 'unavailable', detail: 'HTTP 400 that is not JSON' }],
    [
      'a 499 with a problem',
      problem(499, { title: 'Client Closed' }),
      { ok: false, reason: 'misconfigured', detail: 'HTTP 499 Client Closed', check: GENERIC },
    ],
    [
      'an invalid address',
      problem(400, { title: 'Invalid Resource', errors: [{ field: 'email_address', message: 'invalid' }] }),
      { ok: false, reason: 'invalid-address', detail: 'HTTP 400 Invalid Resource' },
    ],
    [
      'a missing merge field, said in the detail only',
      problem(400, { title: 'Invalid Resource', detail: 'Your Merge Field was invalid.' }),
      { ok: false, reason: 'misconfigured', detail: 'HTTP 400 Invalid Resource: merge fields', check: MERGE_FIELDS },
    ],
    [
      'a missing merge field among the errors',
      problem(400, { title: 'Invalid Resource', errors: [{ field: 'email_address' }, { field: 'FNAME' }] }),
      { ok: false, reason: 'misconfigured', detail: 'HTTP 400 Invalid Resource: merge fields', check: MERGE_FIELDS },
    ],
    [
      'errors without a field name',
      problem(400, { title: 'Invalid Resource', errors: [{ field: '' }, null, { field: 7 }] }),
      { ok: false, reason: 'invalid-address', detail: 'HTTP 400 Invalid Resource' },
    ],
    [
      'errors that are not a list',
      problem(400, { title: 'Invalid Resource', detail: 7, errors: { field: 'FNAME' } }),
      { ok: false, reason: 'invalid-address', detail: 'HTTP 400 Invalid Resource' },
    ],
    [
      'a forgotten address, in another case',
      problem(400, { title: 'FORGOTTEN EMAIL not subscribed' }),
      { ok: false, reason: 'forgotten', detail: 'HTTP 400 FORGOTTEN EMAIL not subscribed' },
    ],
    [
      'an address in compliance state',
      problem(400, { title: 'Member In Compliance State' }),
      { ok: false, reason: 'not-resubscribable', detail: 'HTTP 400 Member In Compliance State' },
    ],
    ['another 400', problem(400, { title: 'member exists' }), { ok: false, reason: 'misconfigured', detail: 'HTTP 400 member exists', check: GENERIC }],
    [
      'a 422 with the title of an invalid address',
      problem(422, { title: 'Invalid Resource' }),
      { ok: false, reason: 'misconfigured', detail: 'HTTP 422 Invalid Resource', check: GENERIC },
    ],
    [
      'a 402 with the title of an existing member',
      problem(402, { title: 'Member Exists' }),
      { ok: false, reason: 'misconfigured', detail: 'HTTP 402 Member Exists', check: GENERIC },
    ],
    [
      'a 400 whose title says forgotten and compliance both',
      problem(400, { title: 'Forgotten email in compliance state' }),
      { ok: false, reason: 'forgotten', detail: 'HTTP 400 Forgotten email in compliance state' },
    ],
  ])('%s', async (_, reply, outcome) => {
    mailchimp.reply(reply);
    await expect(provider().subscribe('ada@example.com', { timeoutMs: 5_000 })).resolves.toEqual(outcome);
  });

  test('without a time given, a slow answer within ten seconds is still taken', async () => {
    mailchimp.reply(replyAfter(150, replyJson(200, { id: 'abc' })));
    await expect(provider().subscribe('ada@example.com')).resolves.toEqual({ ok: true });
  });

  test('a time under a millisecond still gives the call a millisecond, and a silent server is a timeout', async () => {
    mailchimp.reply(replyHang());
    await expect(provider().subscribe('ada@example.com', { timeoutMs: 0 })).resolves.toEqual({
      ok: false,
      reason: 'unavailable',
      detail: 'no answer (timeout)',
    });
  });
});

describe("superagent's answers and errors, to the exact outcome", () => {
  const json = (body: unknown, type = 'application/json') => ({ status: 200, headers: { 'content-type': type }, body });

  test.each([
    ['a JSON object', json({ id: 'abc' }), { ok: true }],
    ['a JSON type in capitals', json({ id: 'abc' }, 'Application/JSON; charset=utf-8'), { ok: true }],
    ['a vendor JSON type', json({ id: 'abc' }, 'application/vnd.mailchimp+json'), { ok: true }],
    ['a type that only starts like JSON', json({ id: 'abc' }, 'application/jsonp'), { ok: false, reason: 'unavailable', detail: 'HTTP 200 that is not JSON' }],
    [
      'a type with json but no slash or plus',
      json({ id: 'abc' }, 'application/x-json'),
      { ok: false, reason: 'unavailable', detail: 'HTTP 200 that is not JSON' },
    ],
    ['a JSON string', json('ok'), { ok: false, reason: 'unavailable', detail: 'HTTP 200 that is not JSON' }],
    ['JSON null', json(null), { ok: false, reason: 'unavailable', detail: 'HTTP 200 that is not JSON' }],
    [
      'no headers at all',
      { status: 201, headers: undefined as unknown as Record<string, string>, body: {} },
      { ok: false, reason: 'unavailable', detail: 'HTTP 201 that is not JSON' },
    ],
  ])('a 2xx answer with %s', (_, answer, outcome) => {
    expect(classifyMailchimpAnswer(answer)).toEqual(outcome);
  });

  const problemResponse = (status: number, body: unknown) => ({ status, headers: { 'content-type': 'application/problem+json' }, body });

  test.each([
    ['no status at all', new Error('socket hang up'), { ok: false, reason: 'unavailable', detail: 'no answer (network error)' }],
    ['a timeout', Object.assign(new Error('Timeout of 10ms exceeded'), { timeout: 10 }), { ok: false, reason: 'unavailable', detail: 'no answer (timeout)' }],
    ['a status code without the raw text of a parse failure', { statusCode: 500 }, { ok: false, reason: 'unavailable', detail: 'no answer (network error)' }],
    [
      'JSON that did not parse, on a 200',
      { statusCode: 200, rawResponse: '{"id":' },
      { ok: false, reason: 'unavailable', detail: 'HTTP 200 that is not JSON' },
    ],
    ['JSON that did not parse, on a 502', { statusCode: 502, rawResponse: '{' }, { ok: false, reason: 'unavailable', detail: 'HTTP 502' }],
    [
      'JSON that did not parse, whatever response came with it',
      { status: 400, rawResponse: '{', response: problemResponse(400, { title: 'Member Exists' }) },
      { ok: false, reason: 'unavailable', detail: 'HTTP 400 that is not JSON' },
    ],
    [
      'a status before the status code',
      { status: 404, statusCode: 500, rawResponse: '', response: problemResponse(404, { title: 'Resource Not Found' }) },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 404', check: 'MAILCHIMP_LIST_ID' },
    ],
    [
      'a title that is not text',
      { status: 400, response: problemResponse(400, { title: ['Member Exists'] }) },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 400', check: GENERIC },
    ],
    ['a 400 without a response', { status: 400 }, { ok: false, reason: 'unavailable', detail: 'HTTP 400 that is not JSON' }],
    [
      'the first redirect status',
      { status: 300 },
      {
        ok: false,
        reason: 'misconfigured',
        detail: 'HTTP 300 redirect, not followed',
        check: 'MAILCHIMP_API_BASE_URL, or the data centre at the end of MAILCHIMP_API_KEY',
      },
    ],
    ['a 503 without a body', { status: 503 }, { ok: false, reason: 'unavailable', detail: 'HTTP 503' }],
    [
      'a 409 with the title of a forgotten address',
      { status: 409, response: problemResponse(409, { title: 'Forgotten Email Not Subscribed' }) },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 409 Forgotten Email Not Subscribed', check: GENERIC },
    ],
    [
      'a 409 with the title of a compliance state',
      { status: 409, response: problemResponse(409, { title: 'Member In Compliance State' }) },
      { ok: false, reason: 'misconfigured', detail: 'HTTP 409 Member In Compliance State', check: GENERIC },
    ],
  ])('an error with %s', (_, error, outcome) => {
    expect(classifyMailchimpError(error)).toEqual(outcome);
  });
});
