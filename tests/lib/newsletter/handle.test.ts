import { describe, expect, test, vi } from 'vitest';
import { silentLogger } from '../../../src/lib/log.ts';
import { handleNewsletter, NEWSLETTER_FAILURES } from '../../../src/lib/newsletter/handle.ts';
import type { NewsletterProvider, SubscribeOutcome } from '../../../src/lib/newsletter/provider.ts';

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

  test.each(Object.entries(NEWSLETTER_FAILURES))('answers a provider failure "%s" with its status and a readable error', async (reason, expected) => {
    const { provider } = fakeProvider({ ok: false, reason: reason as keyof typeof NEWSLETTER_FAILURES, detail: 'HTTP 500 raw provider text' });
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
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  test('answers 415 to a JSON body', async () => {
    const { provider } = fakeProvider();
    const request = new Request('http://site.test/api/newsletter', { method: 'POST', body: '{"email":"a@b.co"}', headers: { 'content-type': 'application/json' } });
    await expect(handleNewsletter(request, { provider, logger: silentLogger }).then(answer)).resolves.toEqual({
      status: 415,
      body: { success: false, error: expect.any(String) },
    });
  });
});
