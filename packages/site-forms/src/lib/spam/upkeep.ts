import type { SmtpConfig } from '../mail/mailer-settings.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { ContactEmailSite } from '../mail/email.ts';
import { HOUR_MS, type HousekeepingJob } from '../housekeeping.ts';
import type { Logger } from '../log.ts';
import { composeDigest, DIGEST_LIST_LIMIT, type DigestTime, nextDigestAt } from './digest.ts';
import type { SpamStore } from './spam-store.ts';

/**
 * The spam filter's jobs of the housekeeping (src/lib/housekeeping.ts), each hourly: held spam
 * past its retention, used challenges that expired, and the digest when it is due (at the
 * owner's `DIGEST_TIME`, not up to an hour after it).
 */
export function spamJobs(deps: HousekeepingDeps): HousekeepingJob[] {
  const { digestAt } = deps;
  return [
    { name: 'spam-retention', everyMs: HOUR_MS, run: async (now) => void (await deleteOldSpam(deps, now)) },
    { name: 'used-challenges', everyMs: HOUR_MS, run: async (now) => void (await deps.spam.usedChallenges.deleteExpired(now.getTime())) },
    {
      name: 'digest',
      everyMs: HOUR_MS,
      dueAt: digestAt && ((now) => nextDigestAt(now, digestAt)),
      run: async (now) => void (await sendDigest(deps, now, { force: false })),
    },
  ];
}

/** What one pass did, for the log and the tests. */
export type HousekeepingResult = { deleted: number; expiredChallenges: number; digest: 'sent' | 'not due' | 'nothing held' | 'failed' | 'no mail server' };

/** What a pass needs: the store, the mailer when SMTP is configured, and the retention. */
export type HousekeepingDeps = {
  spam: SpamStore;
  mailer: Mailer | undefined;
  smtp: SmtpConfig | undefined;
  /** Which site the digest is from, and where the owner reviews held messages. */
  site: ContactEmailSite;
  retentionDays: number;
  /** The owner's time of day for the digest (`DIGEST_TIME`); without it, a day after the last. */
  digestAt?: DigestTime | undefined;
  logger: Logger;
};

/** What became of a digest: sent (with how many held), or why not. */
export type DigestOutcome = HousekeepingResult['digest'];

/**
 * Every spam job at once (the tests' and an owner's one-off pass): delete held spam older than the retention and challenges that expired, then send
 * the digest of what was held since the last one, when it is due, over every instance at once.
 */
export async function tidySpam(deps: HousekeepingDeps, now = new Date()): Promise<HousekeepingResult> {
  const deleted = await deleteOldSpam(deps, now);
  const expiredChallenges = await deps.spam.usedChallenges.deleteExpired(now.getTime());
  return { deleted, expiredChallenges, digest: await sendDigest(deps, now, { force: false }) };
}

async function deleteOldSpam({ spam, retentionDays, logger }: HousekeepingDeps, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * 24 * 3600 * 1000).toISOString();
  const deleted = await spam.deleteHeldBefore(cutoff);
  if (deleted > 0) logger.info('spam.deleted_held', { count: deleted, olderThan: cutoff });
  return deleted;
}

/**
 * Sends the digest of what was held since the last one: when it is due, or now (`force`: the
 * owner asked, `npm run inbox -- digest`). Of several instances only one takes it.
 * Hint: a digest that cannot be sent is given back, so the next pass tries again.
 */
export async function sendDigest(
  { spam, mailer, smtp, site, retentionDays, digestAt, logger }: HousekeepingDeps,
  now: Date,
  { force }: { force: boolean },
): Promise<DigestOutcome> {
  if (!mailer || !smtp) return 'no mail server';
  const taken = await spam.takeDigest(now, { at: digestAt, force });
  if (!taken) return 'not due';
  const held = await spam.heldSince(taken.previous, DIGEST_LIST_LIMIT);
  if (held.count === 0) {
    await taken.undo();
    return 'nothing held';
  }
  const sent = await mailer.send(composeDigest(held, smtp, site, { now, retentionDays }));
  if (!sent.ok) {
    await taken.undo();
    logger.warn('spam.digest_failed', { reason: sent.reason, held: held.count, note: 'tried again at the next pass' });
    return 'failed';
  }
  logger.info('spam.digest_sent', { held: held.count });
  return 'sent';
}
