import type { SmtpConfig } from '../config.ts';
import type { Mailer } from '../contact/mailer.ts';
import type { Logger } from '../log.ts';
import type { ContactEmailSite } from '../contact/message.ts';
import { composeDigest, DIGEST_LIST_LIMIT, type DigestTime } from './digest.ts';
import type { SpamStore } from './store.ts';

/** How often the server tidies up held spam and considers the digest. */
export const HOUSEKEEPING_INTERVAL_MS = 60 * 60 * 1000;

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
 * One pass: delete held spam older than the retention and challenges that expired, then send
 * the digest of what was held since the last one, when it is due, over every instance at once.
 */
export async function tidySpam(deps: HousekeepingDeps, now = new Date()): Promise<HousekeepingResult> {
  const { spam, retentionDays, logger } = deps;
  const cutoff = new Date(now.getTime() - retentionDays * 24 * 3600 * 1000).toISOString();
  const deleted = await spam.deleteHeldBefore(cutoff);
  const expiredChallenges = await spam.usedChallenges.deleteExpired(now.getTime());
  if (deleted > 0) logger.info('spam.deleted_held', { count: deleted, olderThan: cutoff });
  return { deleted, expiredChallenges, digest: await sendDigest(deps, now, { force: false }) };
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
