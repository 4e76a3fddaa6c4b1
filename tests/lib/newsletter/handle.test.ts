import { describe, expect, test, vi } from 'vitest';
import { createLogger, silentLogger } from '../../../src/lib/log.ts';
import { handleNewsletter } from '../../../src/lib/newsletter/handle.ts';
import type { NewsletterProvider, SubscribeFailure, SubscribeOutcome } from '../../../src/lib/newsletter/provider.ts';

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

async function answer(response: Response) {
  return { status: response.status, body: await response.json() };
}

describe('POST /api/newsletter handler', () => {
  test('subscribes a valid address and answers 200 { success: true }', async () => {
    const { provider, subscribe } = fakeProvider();
    await expect(handleNewsletter(post({ email: ' Ada@Example.com ' }), { provider, logger: silentLogger }).then(answer)).resolves.toEqual({
      status: 200,
      body: { success: true },
    });
    expect(subscribe).toHaveBeenCalledWith('Ada@Example.com');
  });

  test.each([
    ['an invalid address', { email: 'not-an-email' }],
    ['an empty address', { email: '' }],
    ['a missing address', {}],
  ])('answers 400 with the message of the spec for %s and subscribes nobody', async (_, fields) => {
    const { provider, subscribe } = fakeProvider();
    await expect(handleNewsletter(post(fields), { provider, logger: silentLogger }).then(answer)).resolves.toEqual({
      status: 400,
      body: { success: false, error: 'Please enter a valid email address' },
    });
    expect(subscribe).not.toHaveBeenCalled();
  });

  const failureOf = (reason: SubscribeFailure, detail: string): SubscribeOutcome =>
    reason === 'misconfigured' ? { ok: false, reason, detail, check: 'MAILCHIMP_API_KEY' } : { ok: false, reason, detail };

  test.each<[SubscribeFailure, { status: number; error: string }]>([
    ['invalid-address', { status: 400, error: 'Please enter a valid email address' }],
    [
      'not-resubscribable',
      {
        status: 400,
        error: 'This address unsubscribed earlier, so we cannot add it again here. Use the subscribe link in one of our earlier emails, or contact us.',
      },
    ],
    ['unavailable', { status: 503, error: 'The newsletter service is busy right now. Please try again in a few minutes.' }],
    ['misconfigured', { status: 502, error: 'We could not subscribe you right now. Please try again later.' }],
  ])('answers a provider failure "%s" with its status and a readable error', async (reason, expected) => {
    const { provider } = fakeProvider(failureOf(reason, 'HTTP 500 raw provider text'));
    const response = await handleNewsletter(post({ email: 'ada@example.com' }), { provider, logger: silentLogger });
    expect(response.status).toBe(expected.status);
    const body = await response.json();
    expect(body).toEqual({ success: false, error: expected.error });
    expect(JSON.stringify(body)).not.toContain('raw provider text');
  });

  test('asks to retry later with Retry-After when the provider is unavailable', async () => {
    const { provider } = fakeProvider({ ok: false, reason: 'unavailable', detail: 'timeout' });
    const response = await handleNewsletter(post({ email: 'ada@example.com' }), { provider, logger: silentLogger });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('120');
    await expect(response.json()).resolves.toEqual({ success: false, error: expect.stringMatching(/try again in a few minutes/) });
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

  test.each<SubscribeFailure>(['invalid-address', 'not-resubscribable', 'unavailable'])(
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
    await expect(handleNewsletter(request, { provider, logger: silentLogger }).then(answer)).resolves.toEqual({
      status: 415,
      body: { success: false, error: expect.any(String) },
    });
  });
});
