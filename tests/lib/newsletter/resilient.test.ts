import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { createKitProvider } from '../../../src/lib/newsletter/kit.ts';
import { createMailchimpProvider } from '../../../src/lib/newsletter/mailchimp.ts';
import type { NewsletterProvider } from '../../../src/lib/newsletter/provider.ts';
import { createResendProvider } from '../../../src/lib/newsletter/resend.ts';
import { RESILIENCE_DEFAULTS, withRetries } from '../../../src/lib/newsletter/resilient.ts';
import { type FakeHttpServer, replyAfter, replyHang, replyInTurn, replyJson, replyReset, replyText, startFakeHttpServer } from '../../support/fake-http.ts';

let server: FakeHttpServer;
beforeAll(async () => {
  server = await startFakeHttpServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.load.maxInFlight = 0;
});

const kitOk = replyJson(200, { subscription: { id: 1 } });
const busy = replyJson(503, { error: 'Service Unavailable' });
const kit = () => createKitProvider({ apiKey: 'k', formId: '1', baseUrl: server.url, version: 'v3' });
/** Small numbers so that the suite stays fast; the shape is the one the server runs with. */
const fast = { budgetMs: 1_000, backoffMs: 20 };

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work;
  return { value, ms: performance.now() - started };
}

describe('retries', () => {
  test('the server runs with 2 retries, a 10 s budget and 10 calls in flight', () => {
    expect(RESILIENCE_DEFAULTS).toMatchObject({ retries: 2, budgetMs: 10_000, maxInFlight: 10 });
  });

  test.each([
    ['503', busy],
    ['429', replyJson(429, { error: 'Too Many Requests' })],
    ['an HTML page', replyText(502, '<html>Bad gateway</html>')],
    ['a reset connection', replyReset()],
  ])('tries %s three times in all, then answers unavailable saying so', async (_, reply) => {
    server.reply(reply);
    const outcome = await withRetries(kit(), fast).subscribe('ada@example.com');
    expect(outcome).toEqual({ ok: false, reason: 'unavailable', detail: expect.stringMatching(/\(3 attempts in \d+ ms\)$/) });
    expect(server.requests).toHaveLength(3);
  });

  test('succeeds when a retry does', async () => {
    server.reply(replyInTurn(busy, replyReset(), kitOk));
    await expect(withRetries(kit(), fast).subscribe('ada@example.com')).resolves.toEqual({ ok: true });
    expect(server.requests).toHaveLength(3);
  });

  test.each([
    ['a bad key', replyJson(401, { error: 'Authorization Failed' }), 'misconfigured'],
    ['a wrong form', replyJson(404, { error: 'Not Found' }), 'misconfigured'],
    ['an invalid address', replyJson(422, { error: 'Email address is invalid' }), 'invalid-address'],
  ])('never retries %s: only the owner or the visitor can change it', async (_, reply, reason) => {
    server.reply(reply);
    await expect(withRetries(kit(), fast).subscribe('ada@example.com')).resolves.toMatchObject({ ok: false, reason });
    expect(server.requests).toHaveLength(1);
  });

  test('backs off between attempts, longer each time', async () => {
    server.reply(busy);
    await withRetries(kit(), { budgetMs: 5_000, backoffMs: 100 }).subscribe('ada@example.com');
    expect(server.requests).toHaveLength(3);
    // Jitter keeps each pause between half and all of 100 ms, then of 200 ms.
    const gaps = server.requests.slice(1).map((r, i) => r.receivedAt - server.requests[i]!.receivedAt);
    expect(gaps[0]).toBeGreaterThanOrEqual(45);
    expect(gaps[1]).toBeGreaterThanOrEqual(95);
  });
});

describe('one time budget for the whole subscription', () => {
  test('a server that never answers is given up on when the budget runs out', async () => {
    server.reply(replyHang());
    const { value, ms } = await timed(withRetries(kit(), { budgetMs: 500, backoffMs: 20 }).subscribe('ada@example.com'));
    expect(value).toMatchObject({ ok: false, reason: 'unavailable', detail: expect.stringMatching(/timeout/) });
    expect(ms).toBeGreaterThanOrEqual(450);
    expect(ms).toBeLessThan(900);
  });

  test('each attempt gets only what is left: a hang after two failures still ends on time', async () => {
    server.reply(replyInTurn(busy, busy, replyHang()));
    const { value, ms } = await timed(withRetries(kit(), { budgetMs: 600, backoffMs: 20 }).subscribe('ada@example.com'));
    expect(value).toMatchObject({ ok: false, reason: 'unavailable' });
    expect(server.requests).toHaveLength(3);
    expect(ms).toBeLessThan(1_000);
  });

  test('no retry starts when the budget is nearly spent', async () => {
    server.reply(replyAfter(400, busy));
    const { value, ms } = await timed(withRetries(kit(), { budgetMs: 500, backoffMs: 200 }).subscribe('ada@example.com'));
    expect(value).toMatchObject({ ok: false, reason: 'unavailable', detail: expect.stringMatching(/1 attempt in/) });
    expect(server.requests).toHaveLength(1);
    expect(ms).toBeLessThan(500);
  });
});

describe.each<[string, () => NewsletterProvider, () => void]>([
  [
    'Mailchimp',
    () => createMailchimpProvider({ apiKey: 'k-us1', listId: 'l', baseUrl: server.url }),
    () => server.reply(replyAfter(100, replyJson(200, { id: 'x' }))),
  ],
  ['Kit', kit, () => server.reply(replyAfter(100, kitOk))],
  [
    'Resend',
    () => createResendProvider({ apiKey: 're_k', target: { kind: 'audience', id: 'a' }, baseUrl: server.url }),
    () => server.reply(replyAfter(100, replyJson(200, { object: 'contact', id: 'x' }))),
  ],
])('at most 10 calls in flight (%s)', (_, create, answerSlowly) => {
  test('30 simultaneous subscriptions never put more than 10 calls in flight, and all 30 are answered', async () => {
    answerSlowly();
    const provider = withRetries(create());
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => provider.subscribe(`reader${i}@example.com`)));
    expect(outcomes).toEqual(Array.from({ length: 30 }, () => ({ ok: true })));
    expect(server.requests).toHaveLength(30);
    expect(server.load.maxInFlight).toBeLessThanOrEqual(10);
    expect(server.load.maxInFlight).toBeGreaterThan(1);
  });
});

describe('waiting for a turn', () => {
  test('a subscription that never gets a turn says why', async () => {
    server.reply(replyHang());
    const provider = withRetries(kit(), { budgetMs: 300, backoffMs: 20, maxInFlight: 1 });
    const [first, second] = await Promise.all([provider.subscribe('a@example.com'), provider.subscribe('b@example.com')]);
    expect(first).toMatchObject({ reason: 'unavailable' });
    expect(second).toMatchObject({ reason: 'unavailable', detail: expect.stringMatching(/^no turn in time/) });
    expect(server.requests).toHaveLength(1);
  });
});
