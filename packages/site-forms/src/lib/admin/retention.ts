import { DAY_MS, type HousekeepingJob } from '../housekeeping.ts';
import type { Logger } from '../log.ts';
import type { Deliveries } from '../webhooks/deliveries.ts';
import { AUDIT_DEFAULT_RETENTION_DAYS, type AuditLog } from './audit.ts';
import type { AdminQueries } from './queries.ts';
import type { Challenges } from '../people/challenges.ts';
import type { Sessions } from './session.ts';

/** What the retention needs: the sessions to sweep (when the admin is on) and what to keep how long. */
export type RetentionParts = {
  sessions: Sessions | undefined;
  queries: Pick<AdminQueries, 'deleteOlderThan'>;
  audit: AuditLog | undefined;
  /** `RETENTION_DAYS`: messages older than this are deleted; unset, they are kept. */
  retentionDays: number | undefined;
  /** The webhooks' events and deliveries, kept two weeks (they copy the messages they tell of). */
  webhooks?: Pick<Deliveries, 'prune'> | undefined;
  /** Whom the automatic reply answered, kept two days for its once-a-day rule. */
  autoReplies?: { prune(before: Date): Promise<number> } | undefined;
  /** The passkey ceremonies' challenges nobody answered in their 5 minutes. */
  challenges?: Pick<Challenges, 'sweep'> | undefined;
  logger: Logger;
};

/** How long the news of a message is kept for webhooks and chat alerts, once nothing waits to be sent. */
export const EVENT_RETENTION_DAYS = 14;

/** How long whom the automatic reply answered is kept: its rule is once a day per address. */
const AUTO_REPLY_RECORD_DAYS = 2;

/**
 * The retention jobs of the housekeeping (src/lib/housekeeping.ts), each once a day: the
 * admin's expired sessions, messages past `RETENTION_DAYS`, the audit log, the webhooks'
 * events, whom the automatic reply answered, and the passkeys' unanswered challenges. Only the jobs of what is configured.
 */
export function retentionJobs(parts: RetentionParts): HousekeepingJob[] {
  const { sessions, audit, retentionDays, webhooks, autoReplies, challenges } = parts;
  const jobs: (HousekeepingJob | false | undefined)[] = [
    sessions && { name: 'admin-sessions', everyMs: DAY_MS, run: async () => void (await sessions.sweep()) },
    retentionDays !== undefined && { name: 'message-retention', everyMs: DAY_MS, run: async (now) => void (await deleteOldMessages(parts, now)) },
    audit && { name: 'audit-log-retention', everyMs: DAY_MS, run: async (now) => void (await deleteOldAuditEntries(parts, now)) },
    webhooks && { name: 'event-retention', everyMs: DAY_MS, run: async (now) => void (await pruneEvents(parts, now)) },
    autoReplies && {
      name: 'auto-reply-records',
      everyMs: DAY_MS,
      run: async (now) => void (await autoReplies.prune(new Date(now.getTime() - AUTO_REPLY_RECORD_DAYS * DAY_MS))),
    },
    challenges && { name: 'passkey-challenges', everyMs: DAY_MS, run: async (now) => void (await challenges.sweep(now)) },
  ];
  return jobs.filter((job): job is HousekeepingJob => Boolean(job));
}

/**
 * Every retention job at once, with what each deleted: what the jobs do in a day, for the
 * tests and for an owner's one-off run.
 */
export async function applyRetention(
  parts: RetentionParts,
  now = new Date(),
): Promise<{ sessions: number; messages: number; auditEntries: number; events: number }> {
  const sessions = parts.sessions ? await parts.sessions.sweep() : 0;
  const messages = await deleteOldMessages(parts, now);
  const auditEntries = await deleteOldAuditEntries(parts, now);
  const events = await pruneEvents(parts, now);
  await parts.autoReplies?.prune(new Date(now.getTime() - AUTO_REPLY_RECORD_DAYS * DAY_MS));
  return { sessions, messages, auditEntries, events };
}

/** With `RETENTION_DAYS`, deletes every message received more than that many days ago, with its history; logs and audits it. */
async function deleteOldMessages({ queries, audit, retentionDays, logger }: RetentionParts, now: Date): Promise<number> {
  if (retentionDays === undefined) return 0;
  const messages = await queries.deleteOlderThan(new Date(now.getTime() - retentionDays * DAY_MS));
  if (messages > 0) {
    logger.info('retention.deleted', { messages, olderThanDays: retentionDays });
    await audit?.record({ at: now.toISOString(), action: 'retention', detail: `${messages} older than ${retentionDays} days`, client: 'server' });
  }
  return messages;
}

/** The audit log is kept as long as the messages, or a year without `RETENTION_DAYS`: never forever. */
async function deleteOldAuditEntries({ audit, retentionDays, logger }: RetentionParts, now: Date): Promise<number> {
  if (!audit) return 0;
  const days = retentionDays ?? AUDIT_DEFAULT_RETENTION_DAYS;
  const entries = await audit.deleteBefore(new Date(now.getTime() - days * DAY_MS));
  if (entries > 0) logger.info('retention.audit_deleted', { entries, olderThanDays: days });
  return entries;
}

async function pruneEvents({ webhooks, logger }: RetentionParts, now: Date): Promise<number> {
  if (!webhooks) return 0;
  const events = await webhooks.prune(new Date(now.getTime() - EVENT_RETENTION_DAYS * DAY_MS));
  if (events > 0) logger.info('retention.events_deleted', { events, olderThanDays: EVENT_RETENTION_DAYS });
  return events;
}
