import { describe, expect, test } from 'vitest';
import type { AuditEntry } from '../../../packages/site-forms/src/lib/admin/audit.ts';
import { applyRetention, retentionJobs } from '../../../packages/site-forms/src/lib/admin/retention.ts';
import { DAY_MS } from '../../../packages/site-forms/src/lib/housekeeping.ts';
import { createLogger, silentLogger } from '../../../packages/site-forms/src/lib/log.ts';

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

describe('what retention deleted', () => {
  test('is logged, each with its period, and the deleted messages are audited', async () => {
    const lines: string[] = [];
    const recorded: AuditEntry[] = [];
    const autoReplyCutoffs: Date[] = [];
    const result = await applyRetention(
      {
        sessions: { sweep: async () => 1 } as never,
        queries: { deleteOlderThan: async () => 3 },
        audit: {
          record: async (entry: AuditEntry) => void recorded.push(entry),
          deleteBefore: async () => 2,
        } as never,
        retentionDays: 7,
        webhooks: { prune: async () => 4 },
        autoReplies: {
          prune: async (cutoff) => {
            autoReplyCutoffs.push(cutoff);
            return 5;
          },
        },
        logger: createLogger({ write: (line) => lines.push(line) }),
      },
      NOW,
    );
    expect(result).toEqual({ sessions: 1, messages: 3, auditEntries: 2, events: 4 });
    expect(lines.map((line) => ({ ...JSON.parse(line), time: undefined }))).toEqual([
      { level: 'info', event: 'retention.deleted', messages: 3, olderThanDays: 7 },
      { level: 'info', event: 'retention.audit_deleted', entries: 2, olderThanDays: 7 },
      { level: 'info', event: 'retention.events_deleted', events: 4, olderThanDays: 14 },
    ]);
    expect(recorded).toEqual([{ at: '2026-11-22T12:00:00.000Z', action: 'retention', detail: '3 older than 7 days', client: 'server' }]);
    expect(autoReplyCutoffs).toEqual([new Date('2026-11-20T12:00:00.000Z')]);
  });

  test('messages are deleted without an audit log too, and a day that deleted nothing is neither audited nor logged', async () => {
    const deleted = await applyRetention(
      { sessions: undefined, queries: { deleteOlderThan: async () => 2 }, audit: undefined, retentionDays: 30, logger: silentLogger },
      NOW,
    );
    expect(deleted).toEqual({ sessions: 0, messages: 2, auditEntries: 0, events: 0 });
    const recorded: AuditEntry[] = [];
    const lines: string[] = [];
    const quiet = await applyRetention(
      {
        sessions: undefined,
        queries: { deleteOlderThan: async () => 0 },
        audit: { record: async (entry: AuditEntry) => void recorded.push(entry), deleteBefore: async () => 0 } as never,
        retentionDays: 30,
        webhooks: { prune: async () => 0 },
        autoReplies: { prune: async () => 0 },
        logger: createLogger({ write: (line) => lines.push(line) }),
      },
      NOW,
    );
    expect(quiet).toEqual({ sessions: 0, messages: 0, auditEntries: 0, events: 0 });
    expect(recorded).toEqual([]);
    expect(lines).toEqual([]);
  });

  test("the sessions' job sweeps them, and the messages' job audits what it deleted", async () => {
    const swept: string[] = [];
    const recorded: AuditEntry[] = [];
    const jobs = retentionJobs({
      sessions: {
        sweep: async () => {
          swept.push('swept');
          return 2;
        },
      } as never,
      queries: { deleteOlderThan: async () => 6 },
      audit: { record: async (entry: AuditEntry) => void recorded.push(entry), deleteBefore: async () => 0 } as never,
      retentionDays: 90,
      logger: silentLogger,
    });
    for (const job of jobs) await job.run(NOW);
    expect(swept).toEqual(['swept']);
    expect(recorded).toEqual([{ at: '2026-11-22T12:00:00.000Z', action: 'retention', detail: '6 older than 90 days', client: 'server' }]);
  });
});
