import { describe, expect, test, vi } from 'vitest';
import { HOUSEKEEPING_INTERVAL_MS, keepHouse, scheduleHousekeeping } from '../../../src/lib/admin/housekeeping.ts';
import { createLogger } from '../../../src/lib/log.ts';

/** A timer that only records what it was asked to wait. */
function manualTimer() {
  const waits: number[] = [];
  return { waits, timer: { set: (_: () => void, ms: number) => waits.push(ms), clear: () => {} } };
}

describe('housekeeping', () => {
  test('runs at start, then waits a day', async () => {
    const deleted: Date[] = [];
    const { waits, timer } = manualTimer();
    const now = new Date('2026-11-22T12:00:00.000Z');
    const scheduler = scheduleHousekeeping(
      {
        sessions: undefined,
        queries: {
          deleteOlderThan: async (cutoff) => {
            deleted.push(cutoff);
            return 0;
          },
        },
        audit: undefined,
        retentionDays: 7,
        logger: createLogger({ level: 'silent' }),
        clock: () => now,
      },
      timer,
    );
    scheduler.start();
    await scheduler.runPass();
    expect(deleted[0]).toEqual(new Date('2026-11-15T12:00:00.000Z'));
    await vi.waitFor(() => expect(waits).toContain(HOUSEKEEPING_INTERVAL_MS));
    expect(HOUSEKEEPING_INTERVAL_MS).toBe(86_400_000);
    await scheduler.stop();
  });

  test('a failure is logged and the next day tries again', async () => {
    const lines: string[] = [];
    const { timer } = manualTimer();
    const scheduler = scheduleHousekeeping(
      {
        sessions: undefined,
        queries: {
          deleteOlderThan: async () => {
            throw new Error('disk I/O error');
          },
        },
        audit: undefined,
        retentionDays: 7,
        logger: createLogger({ write: (line) => lines.push(line) }),
      },
      timer,
    );
    await scheduler.runPass();
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ level: 'error', event: 'housekeeping.failed', error: expect.stringContaining('disk I/O error') }),
    ]);
    await scheduler.stop();
  });

  test('without RETENTION_DAYS only sessions are swept, and nothing is logged', async () => {
    const lines: string[] = [];
    const result = await keepHouse({
      sessions: { sweep: async () => 3 } as never,
      queries: {
        deleteOlderThan: async () => {
          throw new Error('must not be called');
        },
      },
      audit: undefined,
      retentionDays: undefined,
      logger: createLogger({ write: (line) => lines.push(line) }),
    });
    expect(result).toEqual({ sessions: 3, messages: 0, auditEntries: 0, events: 0 });
    expect(lines).toEqual([]);
  });
});
