import type { Config } from '../config/config.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { HousekeepingJob } from '../housekeeping.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../database/database.ts';
import { createRecipients } from '../people/recipients.ts';
import { siteForMail } from '../site/site.ts';
import { createSpamService, type SpamService } from '../spam/service.ts';
import type { SpamStore } from '../spam/spam-store.ts';
import { spamJobs } from '../spam/upkeep.ts';
import type { UsedChallenges } from '../spam/used-challenges.ts';

/** The spam filter of a running server: the service the handlers ask, its records, and its jobs of the housekeeping. */
export type SpamParts = {
  service: SpamService;
  store: SpamStore;
  /** Deletes old held spam and expired challenges, and sends the daily digest (src/lib/spam/upkeep.ts). */
  jobs: HousekeepingJob[];
};

/**
 * Builds the spam filter: its records, and the used-challenge record, in the database.
 * Hint: the database is the one authority on used proofs, shared by every instance and kept
 * across restarts: a record in Redis forgot them when Redis restarted or failed over
 * (docs/decisions/0120-one-state-machine.md). The challenge secret is made once and kept there too (decision 0091).
 */
export function createSpamParts(config: Config, database: Store, mailer: Mailer | undefined, logger: Logger): SpamParts {
  const store = database.spam;
  const used: UsedChallenges = store.usedChallenges;
  const service = createSpamService(config.spam, {
    secret: () => store.proofSecret(),
    used,
    logger,
    // Akismet's `blog`: the site's public address; without PUBLIC_URL, the address it listens on.
    blog: config.publicUrl ?? `http://${config.host}:${config.port}`,
  });
  const jobs = spamJobs({
    spam: store,
    mailer,
    smtp: config.smtp,
    site: siteForMail(config),
    retentionDays: config.spam.retentionDays,
    digestAt: config.spam.digestTime,
    logger,
    // Each person who asked for the digest, read at each round (people/recipients.ts).
    recipients: config.smtp && createRecipients(database.sql, config.smtp.to, logger),
  });
  return { service, store, jobs };
}
