import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { createKitProvider } from '../../../packages/site-forms/src/lib/newsletter/kit.ts';
import { createMailchimpProvider } from '../../../packages/site-forms/src/lib/newsletter/mailchimp.ts';
import type { NewsletterProvider, SubscribeOutcome } from '../../../packages/site-forms/src/lib/newsletter/provider.ts';
import { createResendProvider } from '../../../packages/site-forms/src/lib/newsletter/resend.ts';
import { withRetries } from '../../../packages/site-forms/src/lib/newsletter/resilient.ts';
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

/**
 * Runs `work` on a fake clock (the retry wrapper's timers and `performance.now`) that moves
 * 1 ms each time the event loop has turned, so the real sockets keep pace with it; answers what
 * the work came to and the clock's reading then. The time asserted is the time the code asks
 * for, never how fast this machine is.
 */
async function onFakeClock<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  try {
    const started = performance.now();
    let done = false;
    const running = work().finally(() => {
      done = true;
    });
    while (!done) {
      await new Promise((resolve) => setImmediate(resolve));
      if (!done) await vi.advanceTimersByTimeAsync(1);
    }
    return { value: await running, ms: performance.now() - started };
  } finally {
    vi.useRealTimers();
  }
}

/** Turns the event loop until `condition` holds, without moving a fake clock. */
async function turnsUntil(condition: () => boolean): Promise<void> {
  for (let turn = 0; !condition(); turn++) {
    if (turn > 100_000) throw new Error('the condition never held');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('retries', () => {
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
  afterEach(() => vi.restoreAllMocks());

  test('a server that never answers is given up on when the budget runs out, not a millisecond later', async () => {
    server.reply(replyHang());
    const { value, ms } = await onFakeClock(() => withRetries(kit(), { budgetMs: 500, backoffMs: 20 }).subscribe('ada@example.com'));
    expect(value).toEqual({ ok: false, reason: 'unavailable', detail: 'timeout (1 attempt in 500 ms)' });
    expect(ms).toBe(500);
  });

  test('each attempt gets only what is left: a hang after two failures still ends when the budget does', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    server.reply(replyInTurn(busy, busy, replyHang()));
    const { value, ms } = await onFakeClock(() => withRetries(kit(), { budgetMs: 600, backoffMs: 20 }).subscribe('ada@example.com'));
    expect(value).toEqual({ ok: false, reason: 'unavailable', detail: 'timeout (3 attempts in 600 ms)' });
    expect(server.requests).toHaveLength(3);
    expect(ms).toBe(600);
  });

  test('no retry starts when the budget is nearly spent: the answer goes back at once, before the budget ends', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    // Answered at 400 ms of 500: a 100 ms pause would leave less than the 25 ms an attempt needs.
    server.reply(replyAfter(400, busy));
    const { value, ms } = await onFakeClock(() => withRetries(kit(), { budgetMs: 500, backoffMs: 200 }).subscribe('ada@example.com'));
    expect(value).toMatchObject({ ok: false, reason: 'unavailable', detail: expect.stringMatching(/\(1 attempt in 4\d\d ms\)$/) });
    expect(server.requests).toHaveLength(1);
    expect(ms).toBeGreaterThanOrEqual(400);
    expect(ms).toBeLessThan(500);
  });

  test('by default: 10 calls in flight, and every one of 11 hanging subscriptions ends at 10 s, not at 9 999 ms', async () => {
    server.reply(replyHang());
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const provider = withRetries(kit());
      const ended: SubscribeOutcome[] = [];
      const all = Array.from({ length: 11 }, (_, i) => provider.subscribe(`reader${i}@example.com`).then((outcome) => ended.push(outcome)));
      await turnsUntil(() => server.requests.length === 10);
      await vi.advanceTimersByTimeAsync(9_999);
      expect(server.requests).toHaveLength(10);
      expect(ended).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      await Promise.all(all);
      expect(ended.map((outcome) => (outcome.ok ? 'ok' : `${outcome.reason}: ${outcome.detail}`)).sort()).toEqual([
        'unavailable: no turn in time: 10 calls to the provider were in flight for 10000 ms',
        ...Array.from({ length: 10 }, () => 'unavailable: timeout (1 attempt in 10000 ms)'),
      ]);
    } finally {
      vi.useRealTimers();
    }
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
