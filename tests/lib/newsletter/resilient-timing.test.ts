/**
 * The retry wrapper's timing and turns, on a fake clock with a provider in memory: the
 * pauses, the time each attempt is given, the order of the queue, the release of a turn,
 * and a provider that ignores the abort signal.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import type { NewsletterProvider, SubscribeOptions, SubscribeOutcome } from '../../../packages/site-forms/src/lib/newsletter/provider.ts';
import { withRetries } from '../../../packages/site-forms/src/lib/newsletter/resilient.ts';

beforeEach(() => {
  vi.useFakeTimers({ now: 0, toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const BUSY: SubscribeOutcome = { ok: false, reason: 'unavailable', detail: 'HTTP 503' };
const ADDED: SubscribeOutcome = { ok: true };

/** One call as the provider saw it, and a way to answer a call left hanging. */
type Call = { email: string; at: number; timeoutMs: number | undefined; answer: (outcome: SubscribeOutcome) => void };

/**
 * A provider in memory that answers each call with the next outcome of `script`, or leaves
 * it hanging ('hang') until the test answers it; it never looks at the abort signal.
 */
function scripted(script: Array<SubscribeOutcome | 'hang'>, otherwise: SubscribeOutcome = ADDED) {
  const calls: Call[] = [];
  const provider: NewsletterProvider = {
    name: 'kit',
    subscribe(email: string, options: SubscribeOptions = {}) {
      return new Promise<SubscribeOutcome>((resolve) => {
        calls.push({ email, at: performance.now(), timeoutMs: options.timeoutMs, answer: resolve });
        const next = script.shift() ?? otherwise;
        if (next !== 'hang') resolve(next);
      });
    },
  };
  return { provider, calls };
}

/** Runs the fake clock until every timer has fired, and answers what `work` came to. */
async function settle<T>(work: Promise<T>): Promise<T> {
  await vi.runAllTimersAsync();
  return work;
}

describe('pauses between attempts', () => {
  test.each([
    // Math.random() → the share of the jitter: each pause is between half and all of its step.
    [0, [0, 200, 600], '(3 attempts in 600 ms)'],
    [0.5, [0, 300, 900], '(3 attempts in 900 ms)'],
  ])('with jitter %d, a 400 ms backoff pauses at 0, then %j ms', async (random, times, said) => {
    vi.spyOn(Math, 'random').mockReturnValue(random);
    const { provider, calls } = scripted([], BUSY);
    const outcome = await settle(withRetries(provider, { budgetMs: 10_000, backoffMs: 400, retries: 2 }).subscribe('ada@example.com'));

    expect(calls.map((c) => c.at)).toEqual(times);
    expect(outcome).toEqual({ ok: false, reason: 'unavailable', detail: `HTTP 503 ${said}` });
  });

  test('each attempt is given the time left of the budget', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { provider, calls } = scripted([], BUSY);
    await settle(withRetries(provider, { budgetMs: 10_000, backoffMs: 400, retries: 2 }).subscribe('ada@example.com'));
    expect(calls.map((c) => c.timeoutMs)).toEqual([10_000, 9_700, 9_100]);
  });

  test.each([
    // A budget of 1000 ms: no attempt starts with less than 50 ms (a twentieth) left.
    [900, 2],
    [901, 1],
  ])('a first answer at %i ms, then a 50 ms pause: %i attempts in all', async (answeredAt, attempts) => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { provider, calls } = scripted(['hang'], BUSY);
    const outcome = withRetries(provider, { budgetMs: 1_000, backoffMs: 100, retries: 2 }).subscribe('ada@example.com');
    await vi.advanceTimersByTimeAsync(answeredAt);
    calls[0]!.answer(BUSY);
    await settle(outcome);
    expect(calls).toHaveLength(attempts);
  });

  test.each([
    [0, 1],
    [1, 2],
    [3, 4],
  ])('%i retries make %i attempts in all', async (retries, attempts) => {
    const { provider, calls } = scripted([], BUSY);
    await settle(withRetries(provider, { budgetMs: 60_000, backoffMs: 10, retries }).subscribe('ada@example.com'));
    expect(calls).toHaveLength(attempts);
  });

  test('one attempt only: the detail says "1 attempt", not "1 attempts"', async () => {
    const { provider } = scripted([], BUSY);
    const outcome = await settle(withRetries(provider, { budgetMs: 1_000, backoffMs: 10, retries: 0 }).subscribe('ada@example.com'));
    expect(outcome).toEqual({ ok: false, reason: 'unavailable', detail: 'HTTP 503 (1 attempt in 0 ms)' });
  });

  test('a retry that succeeds answers success as it is', async () => {
    const { provider, calls } = scripted([BUSY, ADDED]);
    await expect(settle(withRetries(provider, { budgetMs: 1_000, backoffMs: 10 }).subscribe('ada@example.com'))).resolves.toEqual({ ok: true });
    expect(calls).toHaveLength(2);
  });
});

describe('turns', () => {
  test('a turn is given back when its call ends: one after another, every subscription gets one', async () => {
    const { provider, calls } = scripted([]);
    const wrapped = withRetries(provider, { budgetMs: 1_000, maxInFlight: 1 });
    for (const email of ['a@example.com', 'b@example.com', 'c@example.com']) {
      await expect(settle(wrapped.subscribe(email))).resolves.toEqual({ ok: true });
    }
    expect(calls.map((c) => c.email)).toEqual(['a@example.com', 'b@example.com', 'c@example.com']);
  });

  test('whoever waits longest goes first', async () => {
    const { provider, calls } = scripted(['hang']);
    const wrapped = withRetries(provider, { budgetMs: 10_000, maxInFlight: 1 });
    const outcomes = ['a', 'b', 'c', 'd'].map((name) => wrapped.subscribe(`${name}@example.com`));
    await vi.advanceTimersByTimeAsync(100);
    expect(calls.map((c) => c.email)).toEqual(['a@example.com']);

    calls[0]!.answer(ADDED);
    await expect(settle(Promise.all(outcomes))).resolves.toEqual([ADDED, ADDED, ADDED, ADDED]);
    expect(calls.map((c) => c.email)).toEqual(['a@example.com', 'b@example.com', 'c@example.com', 'd@example.com']);
  });

  test('waiting counts against the budget: of 30 at once, 10 in flight, 300 ms each and 800 ms in all, 20 are served', async () => {
    const answered: number[] = [];
    const provider: NewsletterProvider = {
      name: 'kit',
      subscribe: () => new Promise((resolve) => setTimeout(() => resolve(ADDED), 300)),
    };
    const wrapped = withRetries(provider, { budgetMs: 800, backoffMs: 20, maxInFlight: 10 });
    const outcomes = Array.from({ length: 30 }, (_, i) => wrapped.subscribe(`reader${i}@example.com`).finally(() => answered.push(performance.now())));
    const settledOutcomes = await settle(Promise.all(outcomes));
    // Two rounds of 10 fit; the third starts at 600 ms with 200 ms left and runs out at 800.
    expect(settledOutcomes.filter((o) => o.ok)).toHaveLength(20);
    expect(settledOutcomes.filter((o) => !o.ok)).toEqual(
      Array.from({ length: 10 }, () => ({ ok: false, reason: 'unavailable', detail: 'timeout (1 attempt in 800 ms)' })),
    );
    expect(Math.max(...answered)).toBe(800);
  });

  test('a waiting subscription that runs out of time leaves the queue: the next one still gets the turn', async () => {
    const { provider, calls } = scripted(['hang']);
    const slow = withRetries(provider, { budgetMs: 10_000, maxInFlight: 1 });
    const first = slow.subscribe('a@example.com');
    const impatient = slow.subscribe('b@example.com', { signal: AbortSignal.timeout(50) });
    const patient = slow.subscribe('c@example.com');
    await vi.advanceTimersByTimeAsync(100);
    await expect(impatient).resolves.toMatchObject({ reason: 'unavailable', detail: expect.stringMatching(/^no turn in time/) });

    calls[0]!.answer(ADDED);
    await expect(settle(Promise.all([first, patient]))).resolves.toEqual([ADDED, ADDED]);
    expect(calls.map((c) => c.email)).toEqual(['a@example.com', 'c@example.com']);
  });
});

describe('a provider that ignores the abort signal', () => {
  test('the subscription still ends when the budget does, as unavailable', async () => {
    const { provider } = scripted(['hang']);
    const outcome = settle(withRetries(provider, { budgetMs: 1_000, maxInFlight: 1 }).subscribe('a@example.com'));
    await expect(outcome).resolves.toEqual({ ok: false, reason: 'unavailable', detail: 'timeout (1 attempt in 1000 ms)' });
  });

  test('its turn is held until the call really ends, so nobody else gets one meanwhile', async () => {
    const { provider, calls } = scripted(['hang']);
    const wrapped = withRetries(provider, { budgetMs: 1_000, maxInFlight: 1 });
    const overrun = wrapped.subscribe('a@example.com');
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(overrun).resolves.toMatchObject({ reason: 'unavailable' });

    // The call that overran is still open: a new subscription waits its whole budget in vain.
    await expect(settle(wrapped.subscribe('b@example.com'))).resolves.toEqual({
      ok: false,
      reason: 'unavailable',
      detail: 'no turn in time: 1 calls to the provider were in flight for 1000 ms',
    });

    calls[0]!.answer(ADDED);
    await expect(settle(wrapped.subscribe('c@example.com'))).resolves.toEqual({ ok: true });
    expect(calls.map((c) => c.email)).toEqual(['a@example.com', 'c@example.com']);
  });
});
