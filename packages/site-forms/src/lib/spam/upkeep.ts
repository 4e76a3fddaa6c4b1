import type { SmtpConfig } from '../mail/mailer-settings.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { ContactEmailSite } from '../mail/email.ts';
import { HOUR_MS, type HousekeepingJob } from '../housekeeping.ts';
import type { Logger } from '../log.ts';
import { composeDigest, DIGEST_LIST_LIMIT, type DigestTime, nextDigestAt } from './digest.ts';
import type { DigestRecipient, Recipients } from '../people/recipients.ts';
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
  /** Who asked for the digest, with their forms (people/recipients.ts); without it, CONTACT_TO, every form, as before people. */
  recipients?: Pick<Recipients, 'forDigest'> | undefined;
};

/** What became of a digest: sent (with how many held), or why not. */
export type DigestOutcome = HousekeepingResult['digest'];

/** A digest sent on request, and the addresses it reached (none unless `sent`). */
export type DigestReport = { outcome: DigestOutcome; sentTo: string[] };

/** Sends the digest now, as the owner asks it (`npm run inbox -- digest`), and says whom it reached. */
export async function digestNow(deps: HousekeepingDeps, now: Date): Promise<DigestReport> {
  const sentTo: string[] = [];
  const outcome = await sendDigest(deps, now, { force: true, sentTo });
  return { outcome, sentTo };
}

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
 * owner asked, `npm run inbox -- digest`). Of several instances only one takes it. With people,
 * one mail to each who asked for it, listing only their forms (none to whom nothing of theirs
 * was held); nobody asked and CONTACT_TO nobody's: to CONTACT_TO, as before people.
 * Hint: one digest is taken for the round and given back only when every mail failed, so the next
 * pass tries again; nobody to send to takes nothing, so what was held waits for whoever asks next.
 */
export async function sendDigest(
  { spam, mailer, smtp, site, retentionDays, digestAt, logger, recipients }: HousekeepingDeps,
  now: Date,
  { force, sentTo }: { force: boolean /** Given: each address a mail went to is added to it. */; sentTo?: string[] },
): Promise<DigestOutcome> {
  if (!mailer || !smtp) return 'no mail server';
  const readers: DigestRecipient[] = recipients ? await recipients.forDigest() : [{ id: undefined, to: smtp.to, scope: { all: true } }];
  if (readers.length === 0) return 'nothing held';
  const taken = await spam.takeDigest(now, { at: digestAt, force });
  if (!taken) return 'not due';
  let sent = 0;
  const failures: Array<Record<string, unknown>> = [];
  for (const reader of readers) {
    const held = await spam.heldSince(taken.previous, DIGEST_LIST_LIMIT, reader.scope);
    if (held.count === 0) continue;
    // CONTACT_TO's digest keeps the Message-ID of before people; a person's is told apart by their id.
    const tag = reader.id === undefined || reader.to === smtp.to ? undefined : String(reader.id);
    const person = reader.id === undefined ? {} : { person: reader.id };
    const result = await mailer.send(composeDigest(held, smtp, site, { now, retentionDays, to: reader.to, tag }));
    if (result.ok) {
      sent += 1;
      sentTo?.push(reader.to);
      logger.info('spam.digest_sent', { held: held.count, ...person });
    } else failures.push({ reason: result.reason, held: held.count, ...person });
  }
  // Given back only when nothing went: a digest sent to one person is the day's for everyone.
  const note = sent > 0 ? 'not sent again: the next digest lists what is held after this one' : 'tried again at the next pass';
  for (const failure of failures) logger.warn('spam.digest_failed', { ...failure, note });
  if (sent > 0) return 'sent';
  await taken.undo();
  return failures.length > 0 ? 'failed' : 'nothing held';
}
