import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { createScheduler, NODE_TIMER, nextWait, type SchedulerOptions } from '../../packages/site-forms/src/lib/scheduler.ts';

const at = (ms: number) => new Date(ms);

describe('the wait after a pass', () => {
  test.each([
    ['nothing is due', undefined, 5_000],
    ['a retry falls due in 2 s', 12_000, 2_000],
    ['a retry falls due in 1 ms', 10_001, 1],
    ['a retry falls due exactly at the poll', 15_000, 5_000],
    ['a retry falls due after the poll', 19_000, 5_000],
    ['something is due right now', 10_000, 1_000],
    ['something was due a minute ago', -50_000, 1_000],
  ])('when %s, at 10 s with a 5 s poll, waits %i ms', (_, due, wait) => {
    expect(nextWait(at(10_000), due === undefined ? undefined : at(due), 5_000)).toBe(wait);
  });

  test('never waits longer than the poll, even for something already due', () => {
    expect(nextWait(at(10_000), at(9_000), 200)).toBe(200);
  });
});

describe("Node's timer", () => {
  test('does not keep the process alive on its own', () => {
    const handle = NODE_TIMER.set(() => {}, 60_000) as ReturnType<typeof setTimeout>;
    try {
      expect(handle.hasRef()).toBe(false);
    } finally {
      NODE_TIMER.clear(handle);
    }
  });
});

/** A promise the test settles by hand, to hold a pass or a question open. */
function gate() {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

let passes: number[];
let errors: unknown[];
let signals: AbortSignal[];

beforeEach(() => {
  vi.useFakeTimers({ now: 0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  passes = [];
  errors = [];
  signals = [];
});
afterEach(() => {
  vi.useRealTimers();
});

/** A scheduler polling every 5 s whose passes record when they started, on the faked clock. */
function scheduler(options: Partial<SchedulerOptions> & { hold?: () => Promise<void> } = {}) {
  const { hold, ...rest } = options;
  return createScheduler({
    pass: async (signal) => {
      passes.push(Date.now());
      signals.push(signal);
      await hold?.();
    },
    nextDueAt: () => undefined,
    pollIntervalMs: 5_000,
    onError: (error) => errors.push(error),
    clock: () => new Date(),
    ...rest,
  });
}

/** Lets the faked clock run for `ms`, settling promises between timers. */
const advance = (ms: number) => vi.advanceTimersByTimeAsync(ms);

describe('the scheduler', () => {
  test('runs a pass at start, then one on every poll, never in between', async () => {
    const s = scheduler();
    expect(s.start()).toBe(true);
    await advance(4_999);
    expect(passes).toEqual([0]);
    await advance(1);
    expect(passes).toEqual([0, 5_000]);
    await advance(10_000);
    expect(passes).toEqual([0, 5_000, 10_000, 15_000]);
    await s.stop();
  });

  test('a second start neither answers true nor runs a second loop', async () => {
    const s = scheduler();
    s.start();
    expect(s.start()).toBe(false);
    await advance(5_000);
    expect(passes).toEqual([0, 5_000]);
    await s.stop();
  });

  test('wakes for a retry due before the next poll, not earlier', async () => {
    let due: Date | undefined = at(2_000);
    const s = scheduler({ nextDueAt: () => due });
    s.start();
    await advance(1_999);
    expect(passes).toEqual([0]);
    due = undefined;
    await advance(1);
    expect(passes).toEqual([0, 2_000]);
    await advance(5_000);
    expect(passes).toEqual([0, 2_000, 7_000]);
    await s.stop();
  });

  test('something still due after a pass is tried again each second, not in a loop', async () => {
    const s = scheduler({ nextDueAt: () => new Date() });
    s.start();
    await advance(3_000);
    expect(passes).toEqual([0, 1_000, 2_000, 3_000]);
    await s.stop();
  });

  test('a poke while waiting runs a pass right after the caller, and the poll counts from it', async () => {
    const s = scheduler();
    s.start();
    await advance(100);
    s.poke();
    expect(passes).toEqual([0]);
    await advance(0);
    expect(passes).toEqual([0, 100]);
    await advance(4_999);
    expect(passes).toEqual([0, 100]);
    await advance(1);
    expect(passes).toEqual([0, 100, 5_100]);
    await s.stop();
  });

  test('any number of pokes during a pass give exactly one more pass, right after it', async () => {
    let held = gate();
    const s = scheduler({ hold: () => held.promise });
    s.start();
    await advance(500);
    s.poke();
    s.poke();
    s.poke();
    await advance(0);
    expect(passes).toEqual([0]);
    const first = held;
    held = gate();
    held.open();
    first.open();
    await advance(0);
    expect(passes).toEqual([0, 500]);
    await advance(4_999);
    expect(passes).toEqual([0, 500]);
    await advance(1);
    expect(passes).toEqual([0, 500, 5_500]);
    await s.stop();
  });

  test('a poke while the next wait is being worked out gives one more pass', async () => {
    let answer = gate();
    const s = scheduler({
      nextDueAt: async () => {
        await answer.promise;
        return undefined;
      },
    });
    s.start();
    await advance(10);
    s.poke();
    const first = answer;
    answer = gate();
    answer.open();
    first.open();
    await advance(0);
    expect(passes).toEqual([0, 10]);
    await advance(5_000);
    expect(passes).toEqual([0, 10, 5_010]);
    await s.stop();
  });

  test('a poke before start or after stop runs nothing', async () => {
    const s = scheduler();
    s.poke();
    await advance(10_000);
    expect(passes).toEqual([]);
    s.start();
    await s.stop();
    s.poke();
    await advance(10_000);
    expect(passes).toEqual([10_000]);
  });

  test('stop while a pass runs aborts its signal, waits for it to end, and no pass follows', async () => {
    const held = gate();
    const s = scheduler({ hold: () => held.promise });
    s.start();
    let stopped = false;
    const stopping = s.stop().then(() => (stopped = true));
    expect(signals[0]?.aborted).toBe(true);
    await advance(10_000);
    expect(stopped).toBe(false);
    held.open();
    await stopping;
    await advance(60_000);
    expect(passes).toEqual([0]);
  });

  test('a poke during a pass that is then stopped runs no further pass', async () => {
    const held = gate();
    const s = scheduler({ hold: () => held.promise });
    s.start();
    s.poke();
    const stopping = s.stop();
    held.open();
    await stopping;
    await advance(60_000);
    expect(passes).toEqual([0]);
  });

  test('stop while the next wait is being worked out waits for that answer too', async () => {
    const answer = gate();
    const s = scheduler({ nextDueAt: () => answer.promise.then(() => undefined) });
    s.start();
    await advance(0);
    let stopped = false;
    const stopping = s.stop().then(() => (stopped = true));
    await advance(0);
    expect(stopped).toBe(false);
    answer.open();
    await stopping;
    await advance(60_000);
    expect(passes).toEqual([0]);
  });

  test('stop waits for a pass run by hand', async () => {
    const held = gate();
    const s = scheduler({ hold: () => held.promise });
    const running = s.runPass();
    let stopped = false;
    const stopping = s.stop().then(() => (stopped = true));
    await advance(0);
    expect(stopped).toBe(false);
    held.open();
    await Promise.all([running, stopping]);
    expect(passes).toEqual([0]);
  });

  test('stop while waiting cancels the wait', async () => {
    const s = scheduler();
    s.start();
    await advance(1_000);
    await s.stop();
    await advance(60_000);
    expect(passes).toEqual([0]);
  });

  test('a stopped scheduler does not start again', async () => {
    const s = scheduler();
    await s.stop();
    expect(s.start()).toBe(false);
    await advance(10_000);
    expect(passes).toEqual([]);
  });

  test('a pass that throws is reported once and followed by a whole poll, even with something due', async () => {
    const failure = new Error('database is locked');
    const s = scheduler({
      pass: async () => {
        passes.push(Date.now());
        throw failure;
      },
      nextDueAt: () => new Date(),
    });
    s.start();
    await advance(4_999);
    expect(passes).toEqual([0]);
    expect(errors).toEqual([failure]);
    await advance(1);
    expect(passes).toEqual([0, 5_000]);
    await s.stop();
  });

  test('a failure to read the next due time is reported, and the poll still comes', async () => {
    const failure = new Error('disk I/O error');
    const s = scheduler({
      nextDueAt: () => {
        throw failure;
      },
    });
    s.start();
    await advance(5_000);
    expect(passes).toEqual([0, 5_000]);
    expect(errors).toEqual([failure, failure]);
    await s.stop();
  });

  test('running a pass by hand joins the one under way rather than starting a second', async () => {
    const held = gate();
    const s = scheduler({ hold: () => held.promise });
    s.start();
    let joined = false;
    const joining = s.runPass().then(() => (joined = true));
    await advance(0);
    expect(passes).toEqual([0]);
    expect(joined).toBe(false);
    held.open();
    await joining;
    expect(passes).toEqual([0]);
    await s.stop();
  });

  test('running a pass by hand works without starting, and runs nothing after it', async () => {
    const s = scheduler();
    await s.runPass();
    await advance(10_000);
    expect(passes).toEqual([0]);
    expect(signals[0]?.aborted).toBe(false);
  });
});
