import { createScheduler, type Scheduler, type Timer } from '../contact/scheduler.ts';
import { describeError, type Logger } from '../log.ts';
import { AUDIT_DEFAULT_RETENTION_DAYS, type AuditLog } from './audit.ts';
import type { Deliveries } from '../webhooks/deliveries.ts';
import type { AdminQueries } from './queries.ts';
import type { Sessions } from './session.ts';

/** How often the admin's housekeeping runs: retention is "once a day". */
export const HOUSEKEEPING_INTERVAL_MS = 24 * 60 * 60 * 1000;

/** What one round of housekeeping needs: the sessions to sweep (when the admin is on) and the retention to apply (when set). */
export type HousekeepingParts = {
  sessions: Sessions | undefined;
  queries: Pick<AdminQueries, 'deleteOlderThan'>;
  audit: AuditLog | undefined;
  retentionDays: number | undefined;
  /** The webhooks' events and deliveries, kept two weeks (they copy the messages they tell of). */
  webhooks?: Pick<Deliveries, 'prune'> | undefined;
  /** Whom the automatic reply answered, kept two days for its once-a-day rule. */
  autoReplies?: { prune(before: Date): Promise<number> } | undefined;
  logger: Logger;
  clock?: () => Date;
};

/** How long the news of a message is kept for webhooks and chat alerts, once nothing waits to be sent. */
export const EVENT_RETENTION_DAYS = 14;

/**
 * One round: deletes expired sessions, and with `RETENTION_DAYS` every message received
 * more than that many days ago, with its history; logs and audits what it deleted.
 */
export async function keepHouse({
  sessions,
  queries,
  audit,
  retentionDays,
  webhooks,
  autoReplies,
  logger,
  clock = () => new Date(),
}: HousekeepingParts): Promise<{ sessions: number; messages: number; auditEntries: number; events: number }> {
  const expired = sessions ? await sessions.sweep() : 0;
  let messages = 0;
  const now = clock();
  if (retentionDays !== undefined) {
    messages = await queries.deleteOlderThan(new Date(now.getTime() - retentionDays * 24 * 60 * 60 * 1000));
    if (messages > 0) {
      logger.info('retention.deleted', { messages, olderThanDays: retentionDays });
      await audit?.record({ at: now.toISOString(), action: 'retention', detail: `${messages} older than ${retentionDays} days`, client: 'server' });
    }
  }
  // The audit log is kept as long as the messages, or a year without RETENTION_DAYS: never forever.
  const auditDays = retentionDays ?? AUDIT_DEFAULT_RETENTION_DAYS;
  const auditEntries = audit ? await audit.deleteBefore(new Date(now.getTime() - auditDays * 24 * 60 * 60 * 1000)) : 0;
  if (auditEntries > 0) logger.info('retention.audit_deleted', { entries: auditEntries, olderThanDays: auditDays });
  const events = webhooks ? await webhooks.prune(new Date(now.getTime() - EVENT_RETENTION_DAYS * 24 * 60 * 60 * 1000)) : 0;
  if (events > 0) logger.info('retention.events_deleted', { events, olderThanDays: EVENT_RETENTION_DAYS });
  await autoReplies?.prune(new Date(now.getTime() - 2 * 24 * 60 * 60 * 1000));
  return { sessions: expired, messages, auditEntries, events };
}

/** Runs `keepHouse` at start and then once a day, one round at a time, logging a failure once per round. */
export function scheduleHousekeeping(parts: HousekeepingParts, timer?: Timer): Scheduler {
  return createScheduler({
    pass: async () => void (await keepHouse(parts)),
    nextDueAt: () => undefined,
    pollIntervalMs: HOUSEKEEPING_INTERVAL_MS,
    onError: (error) => parts.logger.error('housekeeping.failed', { error: describeError(error) }),
    ...(parts.clock && { clock: parts.clock }),
    ...(timer && { timer }),
  });
}
