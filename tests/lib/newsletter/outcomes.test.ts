/**
 * The answer a visitor gets for every provider outcome, for every remote provider: the
 * handler, the retry wrapper and the real provider against a real HTTP server.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { handleNewsletter } from '../../../packages/site-forms/src/lib/newsletter/newsletter-handlers.ts';
import { renderJson } from '../../../packages/site-forms/src/lib/http/outcome.ts';
import { createKitProvider } from '../../../packages/site-forms/src/lib/newsletter/kit.ts';
import { createMailchimpProvider } from '../../../packages/site-forms/src/lib/newsletter/mailchimp.ts';
import type { NewsletterProvider } from '../../../packages/site-forms/src/lib/newsletter/provider.ts';
import { createResendProvider } from '../../../packages/site-forms/src/lib/newsletter/resend.ts';
import { withRetries } from '../../../packages/site-forms/src/lib/newsletter/resilient.ts';
import { type FakeHttpServer, type FakeReply, replyHang, replyJson, replyReset, replyText, startFakeHttpServer } from '../../support/fake-http.ts';

let server: FakeHttpServer;
beforeAll(async () => {
  server = await startFakeHttpServer();
});
afterAll(() => server.close());

const KEY = 'secret-key-0123456789-us21';

/** How each provider says each thing, as its API does. */
type Dialect = {
  create: () => NewsletterProvider;
  added: FakeReply;
  member: FakeReply;
  invalid: FakeReply;
  /** Only Mailchimp refuses to re-subscribe by API. */
  notResubscribable?: FakeReply;
  status: (status: number) => FakeReply;
  /** The variable the error log must name for 401/403 and for 404. */
  keyVariable: string;
  targetVariable: string;
};

const mailchimpProblem = (status: number, title: string) =>
  replyJson(status, { title, status, detail: `Your API key ${KEY} may be invalid` }, { 'content-type': 'application/problem+json' });
const resendProblem = (statusCode: number, name: string, message: string) => replyJson(statusCode, { statusCode, name, message: `${message} ${KEY}` });

const DIALECTS: Record<string, Dialect> = {
  Mailchimp: {
    create: () => createMailchimpProvider({ apiKey: KEY, listId: 'abc123', baseUrl: server.url }),
    added: replyJson(200, { id: 'x', status: 'subscribed' }),
    member: mailchimpProblem(400, 'Member Exists'),
    invalid: mailchimpProblem(400, 'Invalid Resource'),
    notResubscribable: mailchimpProblem(400, 'Member In Compliance State'),
    status: (status) => mailchimpProblem(status, `Status ${status}`),
    keyVariable: 'MAILCHIMP_API_KEY',
    targetVariable: 'MAILCHIMP_LIST_ID',
  },
  Kit: {
    create: () => createKitProvider({ apiKey: KEY, formId: '1234567', baseUrl: server.url, version: 'v3' }),
    added: replyJson(200, { subscription: { id: 1, state: 'inactive' } }),
    member: replyJson(200, { subscription: { id: 1, state: 'active' } }),
    invalid: replyJson(422, { error: 'Email address is invalid' }),
    status: (status) => replyJson(status, { error: `Status ${status}`, message: `key ${KEY}` }),
    keyVariable: 'KIT_API_KEY',
    targetVariable: 'KIT_FORM_ID',
  },
  Resend: {
    create: () => createResendProvider({ apiKey: KEY, target: { kind: 'audience', id: 'aud-1' }, baseUrl: server.url }),
    added: replyJson(200, { object: 'contact', id: 'c1' }),
    member: replyJson(200, { object: 'contact', id: 'c1' }),
    invalid: resendProblem(422, 'validation_error', 'Invalid `email` field.'),
    status: (status) =>
      resendProblem(
        status,
        { 401: 'missing_api_key', 403: 'invalid_api_key', 404: 'not_found', 429: 'rate_limit_exceeded' }[status] ?? 'internal_server_error',
        `Status ${status}`,
      ),
    keyVariable: 'RESEND_API_KEY',
    targetVariable: 'RESEND_AUDIENCE_ID',
  },
};

function post(email: string): Request {
  const body = new FormData();
  body.append('email', email);
  return new Request('http://site.test/api/newsletter', { method: 'POST', body });
}

/** Posts one address through the handler and answers what the visitor and the log saw. */
async function subscribeThrough(provider: NewsletterProvider) {
  const lines: string[] = [];
  const logger = createLogger({ write: (line) => lines.push(line) });
  const answer = renderJson(await handleNewsletter(post('ada@example.com'), { provider, logger }));
  return {
    status: answer.status,
    retryAfter: answer.headers['retry-after'] ?? null,
    body: JSON.parse(answer.body ?? '') as Record<string, unknown>,
    log: lines.join(''),
    entries: lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const UNAVAILABLE = {
  status: 503,
  body: { success: false, error: 'The newsletter service is busy right now. Please try again in a few minutes.' },
  retryAfter: '120',
};
const MISCONFIGURED = { status: 502, body: { success: false, error: 'We could not subscribe you right now. Please try again later.' }, retryAfter: null };

describe.each(Object.entries(DIALECTS))('what a visitor is told (%s)', (_, dialect) => {
  // A small budget keeps a hang short, yet room for a loaded machine (500 ms was seen to run out on a 403); the rest is as the server runs it.
  const provider = () => withRetries(dialect.create(), { budgetMs: 2_000, backoffMs: 10 });

  test.each<[string, () => FakeReply, Record<string, unknown>]>([
    ['an added address: 200 { success: true }', () => dialect.added, { status: 200, body: { success: true }, retryAfter: null }],
    [
      'an address already subscribed: the same 200, so the form reveals nothing',
      () => dialect.member,
      { status: 200, body: { success: true }, retryAfter: null },
    ],
    [
      'an address the provider rejects: 400 with the message of the spec',
      () => dialect.invalid,
      { status: 400, body: { success: false, error: 'Please enter a valid email address' } },
    ],
    ['429: 503 with Retry-After', () => dialect.status(429), UNAVAILABLE],
    ['500: 503 with Retry-After', () => dialect.status(500), UNAVAILABLE],
    ['502: 503 with Retry-After', () => dialect.status(502), UNAVAILABLE],
    ['503: 503 with Retry-After', () => dialect.status(503), UNAVAILABLE],
    ['an HTML page: 503 with Retry-After', () => replyText(200, '<!doctype html><title>Login</title>'), UNAVAILABLE],
    ['a reset connection: 503 with Retry-After', () => replyReset(), UNAVAILABLE],
    ['no answer at all: 503 with Retry-After, within the budget', () => replyHang(), UNAVAILABLE],
    ['401: 502 with a generic error', () => dialect.status(401), MISCONFIGURED],
    ['403: 502 with a generic error', () => dialect.status(403), MISCONFIGURED],
    ['404: 502 with a generic error', () => dialect.status(404), MISCONFIGURED],
  ])('%s', async (_, reply, expected) => {
    server.reply(reply());
    const seen = await subscribeThrough(provider());
    expect(seen).toMatchObject(expected);
    expect(JSON.stringify(seen.body)).not.toContain(KEY);
  });

  test.each([
    [401, 'keyVariable'],
    [403, 'keyVariable'],
    [404, 'targetVariable'],
  ] as const)('%i logs one error naming the variable to check, and never the key', async (status, variable) => {
    server.reply(dialect.status(status));
    const seen = await subscribeThrough(provider());
    expect(seen.entries).toEqual([expect.objectContaining({ level: 'error', reason: 'misconfigured', check: expect.stringContaining(dialect[variable]) })]);
    expect(seen.log).not.toContain(KEY);
    expect(seen.log).not.toContain('0123456789');
  });

  if (dialect.notResubscribable) {
    const reply = dialect.notResubscribable;
    test('an address that cannot be re-subscribed by API: 400 telling the visitor what to do, tried once', async () => {
      server.reply(reply);
      server.requests.length = 0;
      const seen = await subscribeThrough(provider());
      expect(seen).toMatchObject({
        status: 400,
        body: {
          success: false,
          error: 'This address unsubscribed earlier, so we cannot add it again here. Use the subscribe link in one of our earlier emails, or contact us.',
        },
      });
      expect(server.requests).toHaveLength(1);
    });
  }
});
