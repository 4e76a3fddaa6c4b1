import { describe, expect, test } from 'vitest';
import { applyRetention, retentionJobs } from '../../../src/lib/admin/retention.ts';
import { DAY_MS } from '../../../src/lib/housekeeping.ts';
import { createLogger, silentLogger } from '../../../src/lib/log.ts';

const NOW = new Date('2026-11-22T12:00:00.000Z');

describe('retention', () => {
  test('only what is configured has a job, each once a day', () => {
    const none = retentionJobs({
      sessions: undefined,
      queries: { deleteOlderThan: async () => 0 },
      audit: undefined,
      retentionDays: undefined,
      logger: silentLogger,
    });
    expect(none).toEqual([]);
    const all = retentionJobs({
      sessions: { sweep: async () => 0 } as never,
      queries: { deleteOlderThan: async () => 0 },
      audit: { deleteBefore: async () => 0 } as never,
      retentionDays: 30,
      webhooks: { prune: async () => 0 },
      autoReplies: { prune: async () => 0 },
      logger: silentLogger,
    });
    expect(all.map((job) => job.name)).toEqual(['admin-sessions', 'message-retention', 'audit-log-retention', 'event-retention', 'auto-reply-records']);
    expect(all.every((job) => job.everyMs === 86_400_000)).toBe(true);
  });

  test('each job deletes what is older than its own period', async () => {
    const cutoffs: Record<string, Date> = {};
    /** A deletion that records its cutoff under `name` and deletes nothing. */
    const recording = (name: string) => async (cutoff: Date) => {
      cutoffs[name] = cutoff;
      return 0;
    };
    const jobs = retentionJobs({
      sessions: undefined,
      queries: { deleteOlderThan: recording('messages') },
      audit: { deleteBefore: recording('audit') } as never,
      retentionDays: 7,
      webhooks: { prune: recording('events') },
      autoReplies: { prune: recording('autoReplies') },
      logger: silentLogger,
    });
    for (const job of jobs) await job.run(NOW);
    expect(cutoffs).toEqual({
      messages: new Date('2026-11-15T12:00:00.000Z'),
      audit: new Date('2026-11-15T12:00:00.000Z'),
      events: new Date('2026-11-08T12:00:00.000Z'),
      autoReplies: new Date('2026-11-20T12:00:00.000Z'),
    });
  });

  test('without RETENTION_DAYS only sessions are swept, the audit log after a year, and nothing is logged', async () => {
    const lines: string[] = [];
    const auditCutoffs: Date[] = [];
    const result = await applyRetention(
      {
        sessions: { sweep: async () => 3 } as never,
        queries: {
          deleteOlderThan: async () => {
            throw new Error('must not be called');
          },
        },
        audit: {
          deleteBefore: async (cutoff: Date) => {
            auditCutoffs.push(cutoff);
            return 0;
          },
        } as never,
        retentionDays: undefined,
        logger: createLogger({ write: (line) => lines.push(line) }),
      },
      NOW,
    );
    expect(result).toEqual({ sessions: 3, messages: 0, auditEntries: 0, events: 0 });
    expect(auditCutoffs).toEqual([new Date(NOW.getTime() - 365 * DAY_MS)]);
    expect(lines).toEqual([]);
  });
});
