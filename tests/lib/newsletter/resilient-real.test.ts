import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createMailchimpProvider } from '../../../packages/site-forms/src/lib/newsletter/mailchimp.ts';
import { withRetries } from '../../../packages/site-forms/src/lib/newsletter/resilient.ts';
import { type FakeHttpServer, type FakeReply, replyHang, replyInTurn, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';

// The retry wrapper around the real Mailchimp client and a real HTTP server: the time it reports
// is the time the subscription took (on a fake performance clock), and a caller that has already
// given up does not queue for a turn.
let mailchimp: FakeHttpServer;
beforeAll(async () => {
  mailchimp = await startFakeHttpServer();
});
afterAll(() => mailchimp.close());

const client = () => createMailchimpProvider({ apiKey: 'key123-us21', listId: 'list42', baseUrl: `${mailchimp.url}/3.0` });
const BUSY = replyJson(503, { title: 'Service Unavailable', status: 503 }, { 'content-type': 'application/problem+json' });

describe('the retry wrapper around the real client', () => {
  test('the time given up after is the time the subscription took, not the time since the process started', async () => {
    // A clock that has run 5 s before the subscription starts, and stands still while it runs.
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      vi.advanceTimersByTime(5_000);
      mailchimp.reply(BUSY);
      const outcome = await withRetries(client(), { retries: 0 }).subscribe('ada@example.com');
      expect(outcome).toEqual({ ok: false, reason: 'unavailable', detail: 'HTTP 503 Service Unavailable (1 attempt in 0 ms)' });
    } finally {
      vi.useRealTimers();
    }
  });

  test('a caller that has already given up gets no turn, even when it would have to wait for one', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: FakeReply = async (request, res, req) => {
      await held;
      return replyJson(200, { id: 'abc' })(request, res, req);
    };
    mailchimp.reply(slow);
    mailchimp.requests.length = 0;
    const wrapped = withRetries(client(), { maxInFlight: 1, budgetMs: 5_000 });
    const first = wrapped.subscribe('a@example.com');
    while (mailchimp.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const late = wrapped.subscribe('b@example.com', { signal: AbortSignal.abort() });
    const waited = new Promise((resolve) => setTimeout(() => resolve('still waiting'), 1_000));
    try {
      await expect(Promise.race([late, waited])).resolves.toEqual({
        ok: false,
        reason: 'unavailable',
        detail: expect.stringMatching(/^no turn in time: 1 calls to the provider were in flight for \d+ ms$/),
      });
    } finally {
      release();
    }
    await expect(first).resolves.toEqual({ ok: true });
    expect(mailchimp.requests).toHaveLength(1);
  });

  test('a retry that never gets its turn counts the attempts made, not the one it waited for', async () => {
    mailchimp.reply(replyInTurn(BUSY, replyHang()));
    mailchimp.requests.length = 0;
    const wrapped = withRetries(client(), { maxInFlight: 1, budgetMs: 600, backoffMs: 5 });
    // The first is refused as busy; the second takes the turn meanwhile and holds it until the budget runs out.
    const [first, second] = await Promise.all([wrapped.subscribe('a@example.com'), wrapped.subscribe('b@example.com')]);
    expect(first).toEqual({ ok: false, reason: 'unavailable', detail: expect.stringMatching(/^HTTP 503 Service Unavailable \(1 attempt in \d+ ms\)$/) });
    expect(second).toMatchObject({ ok: false, reason: 'unavailable' });
    expect(mailchimp.requests.map((r) => JSON.parse(r.body).email_address)).toEqual(['a@example.com', 'b@example.com']);
  });
});
