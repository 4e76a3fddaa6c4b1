import { describe, expect, test, vi } from 'vitest';
import { createLogger, silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { handleNewsletter } from '../../../packages/site-forms/src/lib/newsletter/newsletter-handlers.ts';
import type { NewsletterProvider, SubscribeFailure, SubscribeOutcome } from '../../../packages/site-forms/src/lib/newsletter/provider.ts';

function fakeProvider(outcome: SubscribeOutcome = { ok: true }) {
  const subscribe = vi.fn(async (_email: string) => outcome);
  const provider: NewsletterProvider = { name: 'local', subscribe };
  return { provider, subscribe };
}

function post(fields: Record<string, string>): Request {
  const body = new FormData();
  for (const [k, v] of Object.entries(fields)) body.append(k, v);
  return new Request('http://site.test/api/newsletter', { method: 'POST', body });
}

describe('POST /api/newsletter handler', () => {
  test('a signup the provider took is accepted though its consent record cannot be written, and the failure is one warning', async () => {
    const { provider } = fakeProvider();
    const lines: string[] = [];
    const logger = createLogger({ write: (line) => lines.push(line) });
    const consentOnJoin = { record: async () => Promise.reject(new Error('database is locked')) };
    await expect(handleNewsletter(post({ email: 'ada@example.com' }), { provider, logger, consentOnJoin })).resolves.toEqual({ kind: 'accepted' });
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ level: 'warn', event: 'newsletter.consent_not_recorded', provider: 'local', error: 'Error: database is locked' }),
    ]);
  });

  test('subscribes a valid address and accepts it', async () => {
    const { provider, subscribe } = fakeProvider();
    await expect(handleNewsletter(post({ email: ' Ada@Example.com ' }), { provider, logger: silentLogger })).resolves.toEqual({ kind: 'accepted' });
    expect(subscribe).toHaveBeenCalledWith('Ada@Example.com');
  });

  test.each([
    ['an invalid address', { email: 'not-an-email' }, { email: 'not-an-email' }],
    ['an empty address', { email: '' }, { email: '' }],
    ['a missing address', {}, {}],
  ])('fails with 400 and the message of the spec at the email field for %s, and subscribes nobody', async (_, fields, values) => {
    const { provider, subscribe } = fakeProvider();
    await expect(handleNewsletter(post(fields), { provider, logger: silentLogger })).resolves.toEqual({
      kind: 'failure',
      status: 400,
      error: 'Please enter a valid email address',
      field: 'email',
      values,
    });
    expect(subscribe).not.toHaveBeenCalled();
  });

  const failureOf = (reason: SubscribeFailure, detail: string): SubscribeOutcome =>
    reason === 'misconfigured' ? { ok: false, reason, detail, check: 'MAILCHIMP_API_KEY' } : { ok: false, reason, detail };

  const values = { email: 'ada@example.com' };
  test.each<[SubscribeFailure, Record<string, unknown>]>([
    ['invalid-address', { status: 400, error: 'Please enter a valid email address', field: 'email' }],
    [
      'not-resubscribable',
      {
        status: 400,
        error: 'This address unsubscribed earlier, so we cannot add it again here. Use the subscribe link in one of our earlier emails, or contact us.',
        field: 'email',
      },
    ],
    [
      'forgotten',
      {
        status: 400,
        error: 'This address was removed from our list at its owner’s request, so it cannot be added again here. Please contact us to subscribe again.',
        field: 'email',
      },
    ],
    ['unavailable', { status: 503, error: 'The newsletter service is busy right now. Please try again in a few minutes.', headers: { 'retry-after': '120' } }],
    ['misconfigured', { status: 502, error: 'We could not subscribe you right now. Please try again later.' }],
  ])('a provider failure "%s" fails with its status, a readable error and the address typed', async (reason, expected) => {
    const { provider } = fakeProvider(failureOf(reason, 'HTTP 500 raw provider text'));
    const outcome = await handleNewsletter(post(values), { provider, logger: silentLogger });
    expect(outcome).toEqual({ kind: 'failure', headers: undefined, field: undefined, values, ...expected });
    expect(JSON.stringify(outcome)).not.toContain('raw provider text');
  });

  test('logs a misconfiguration as an error naming what to check', async () => {
    const lines: string[] = [];
    const logger = createLogger({ write: (line) => lines.push(line) });
    const { provider } = fakeProvider({ ok: false, reason: 'misconfigured', detail: 'HTTP 404 Resource Not Found', check: 'MAILCHIMP_LIST_ID' });
    await handleNewsletter(post({ email: 'ada@example.com' }), { provider, logger });
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ level: 'error', event: 'newsletter.subscribe_failed', reason: 'misconfigured', check: 'MAILCHIMP_LIST_ID' }),
    ]);
  });

  test.each<SubscribeFailure>(['invalid-address', 'not-resubscribable', 'forgotten', 'unavailable'])(
    'logs "%s" as a warning: nothing for the owner to fix',
    async (reason) => {
      const lines: string[] = [];
      const logger = createLogger({ write: (line) => lines.push(line) });
      const { provider } = fakeProvider(failureOf(reason, 'HTTP 400'));
      await handleNewsletter(post({ email: 'ada@example.com' }), { provider, logger });
      expect(lines.map((line) => JSON.parse(line))).toEqual([expect.objectContaining({ level: 'warn', reason })]);
    },
  );

  test('answers 415 to a JSON body', async () => {
    const { provider } = fakeProvider();
    const request = new Request('http://site.test/api/newsletter', {
      method: 'POST',
      body: '{"email":"a@b.co"}',
      headers: { 'content-type': 'application/json' },
    });
    await expect(handleNewsletter(request, { provider, logger: silentLogger })).resolves.toEqual({
      kind: 'failure',
      status: 415,
      error: 'Send the form as multipart/form-data or application/x-www-form-urlencoded',
    });
  });
});
