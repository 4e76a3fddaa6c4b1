import { describe, expect, test } from 'vitest';
import { createHousekeeping, DAY_MS, HOUR_MS, type HousekeepingJob } from '../../packages/site-forms/src/lib/housekeeping.ts';
import { createLogger, silentLogger } from '../../packages/site-forms/src/lib/log.ts';

/**
 * A timer that records each wait and fires only when the test says. `waited(n)` settles once the
 * housekeeping has asked for its n-th wait: its pass before that wait has ended.
 */
function manualTimer() {
  const waits: number[] = [];
  let pending: (() => void) | undefined;
  const listeners: Array<() => void> = [];
  return {
    waits,
    fire: () => pending?.(),
    waited: (n: number) => new Promise<void>((resolve) => (waits.length >= n ? resolve() : listeners.push(() => waits.length >= n && resolve()))),
    timer: {
      set: (wake: () => void, ms: number) => {
        waits.push(ms);
        pending = wake;
        for (const listener of listeners) listener();
        return waits.length;
      },
      clear: () => {},
    },
  };
}

describe('the housekeeping', () => {
  test('every job runs at start, then each at its own interval', async () => {
    let now = new Date('2026-11-25T00:00:00.000Z');
    const ran: string[] = [];
    const job = (name: string, everyMs: number): HousekeepingJob => ({ name, everyMs, run: async () => void ran.push(name) });
    const { waits, fire, waited, timer } = manualTimer();
    const housekeeping = createHousekeeping([job('hourly', HOUR_MS), job('daily', DAY_MS)], { logger: silentLogger, clock: () => now, timer });
    housekeeping.start();
    await waited(1);
    expect(ran).toEqual(['hourly', 'daily']);
    expect(waits.at(-1)).toBe(HOUR_MS);
    now = new Date(now.getTime() + HOUR_MS);
    fire();
    await waited(2);
    expect(ran).toEqual(['hourly', 'daily', 'hourly']);
    now = new Date(now.getTime() + 23 * HOUR_MS);
    fire();
    await waited(3);
    expect(ran).toEqual(['hourly', 'daily', 'hourly', 'hourly', 'daily']);
    await housekeeping.stop();
  });

  test('a job due at a time of day runs then, before its interval ends', async () => {
    const now = new Date('2026-11-25T07:00:00.000Z');
    const { waits, waited, timer } = manualTimer();
    const digest: HousekeepingJob = { name: 'digest', everyMs: HOUR_MS, dueAt: () => new Date('2026-11-25T07:20:00.000Z'), run: async () => {} };
    const housekeeping = createHousekeeping([digest], { logger: silentLogger, clock: () => now, timer });
    housekeeping.start();
    await waited(1);
    expect(waits.at(-1)).toBe(20 * 60 * 1000);
    await housekeeping.stop();
  });

  test('a failing job is logged with its name, and the others still run', async () => {
    const lines: string[] = [];
    const ran: string[] = [];
    const { timer } = manualTimer();
    const housekeeping = createHousekeeping(
      [
        {
          name: 'message-retention',
          everyMs: DAY_MS,
          run: async () => {
            throw new Error('disk I/O error');
          },
        },
        { name: 'digest', everyMs: HOUR_MS, run: async () => void ran.push('digest') },
      ],
      { logger: createLogger({ write: (line) => lines.push(line) }), timer },
    );
    await housekeeping.runPass();
    expect(ran).toEqual(['digest']);
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ level: 'error', event: 'housekeeping.failed', job: 'message-retention', error: expect.stringContaining('disk I/O error') }),
    ]);
    await housekeeping.stop();
  });

  test('stops as one: waits for the job under way, then runs no other', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let began!: () => void;
    const slowBegan = new Promise<void>((resolve) => (began = resolve));
    const ran: string[] = [];
    const { timer } = manualTimer();
    const housekeeping = createHousekeeping(
      [
        {
          name: 'slow',
          everyMs: HOUR_MS,
          run: async () => {
            began();
            await gate;
            ran.push('slow');
          },
        },
        { name: 'next', everyMs: HOUR_MS, run: async () => void ran.push('next') },
      ],
      { logger: silentLogger, timer },
    );
    housekeeping.start();
    await slowBegan;
    const stopping = housekeeping.stop().then(() => ran.push('stopped'));
    // Held until stop has been asked; whenever stop ends, it must be after the job under way.
    release();
    await stopping;
    expect(ran).toEqual(['slow', 'stopped']);
    expect(housekeeping.start()).toBe(false);
  });

  test('a job with no time of day due just now waits for its interval; a time of day that cannot be known is logged', async () => {
    const now = new Date('2026-11-25T07:00:00.000Z');
    const lines: string[] = [];
    const ran: string[] = [];
    const { timer } = manualTimer();
    const housekeeping = createHousekeeping(
      [
        { name: 'digest-off', everyMs: HOUR_MS, dueAt: () => undefined, run: async () => void ran.push('digest-off') },
        {
          name: 'digest-broken',
          everyMs: HOUR_MS,
          dueAt: () => {
            throw new RangeError('Invalid time zone specified: Mars/Olympus');
          },
          run: async () => void ran.push('digest-broken'),
        },
      ],
      { logger: createLogger({ write: (line) => lines.push(line) }), clock: () => now, timer },
    );
    await housekeeping.runPass();
    await housekeeping.runPass();
    expect(ran).toEqual(['digest-off', 'digest-broken', 'digest-broken']);
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>).map(({ level, event, error }) => ({ level, event, error }))).toEqual([
      { level: 'error', event: 'housekeeping.failed', error: 'RangeError: Invalid time zone specified: Mars/Olympus' },
      { level: 'error', event: 'housekeeping.failed', error: 'RangeError: Invalid time zone specified: Mars/Olympus' },
    ]);
    await housekeeping.stop();
  });
});
