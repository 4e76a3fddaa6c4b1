import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { Mailer } from '../contact/mailer.ts';
import { createScheduler, type Scheduler } from '../contact/scheduler.ts';
import { requireWhenNeeded } from '../lazy.ts';
import { describeError, type Logger } from '../log.ts';
import type { Store } from '../store/store.ts';
import { HOUSEKEEPING_INTERVAL_MS, tidySpam } from './housekeeping.ts';
import { createSpamService, type SpamService } from './service.ts';
import { createSpamStore, type SpamStore } from './store.ts';
import { createRedisUsedChallenges, type UsedChallenges } from './used-challenges.ts';

/** The spam filter of a running server: the service the handlers ask, its records, and its hourly tidying. */
export type SpamParts = {
  service: SpamService;
  store: SpamStore;
  /** Deletes old held spam and sends the daily digest; started by the server once it listens. */
  housekeeping: Scheduler;
  close(): Promise<void>;
};

/**
 * Builds the spam filter: records in the store, the used-challenge record in Redis when
 * `REDIS_URL` is set (the database while Redis is down), otherwise in the database.
 * Hint: the challenge secret is made once and kept in the database (decision 0091).
 */
export function createSpamParts(config: Config, database: Store, mailer: Mailer | undefined, logger: Logger): SpamParts {
  const store = createSpamStore(database.sql);
  const redis = config.redisUrl ? connectRedis(config.redisUrl) : undefined;
  const used: UsedChallenges = redis ? createRedisUsedChallenges(redis, store.usedChallenges, logger) : store.usedChallenges;
  const service = createSpamService(config.spam, {
    secret: () => store.proofSecret(),
    used,
    logger,
    // Akismet's `blog`: the site's public address; without PUBLIC_URL, the address it listens on.
    blog: config.publicUrl ?? `http://${config.host}:${config.port}`,
  });
  const housekeeping = createScheduler({
    pass: async () => {
      await tidySpam({ spam: store, mailer, smtp: config.smtp, retentionDays: config.spam.retentionDays, logger });
    },
    nextDueAt: () => undefined,
    pollIntervalMs: HOUSEKEEPING_INTERVAL_MS,
    onError: (error) => logger.warn('spam.housekeeping_failed', { error: describeError(error), note: 'tried again within the hour' }),
  });
  return {
    service,
    store,
    housekeeping,
    async close() {
      await housekeeping.stop();
      redis?.disconnect();
    },
  };
}

function connectRedis(url: string): Redis {
  const { Redis } = requireWhenNeeded('ioredis') as typeof import('ioredis');
  // Queued while connecting (the first post after a start), but never more than a second: then
  // the database decides, and used-challenges.ts logs the outage once.
  const redis = new Redis(url, {
    commandTimeout: 1000,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 500, 5000),
  });
  // Without a listener ioredis prints every connection error; the failed commands are what we report.
  redis.on('error', () => {});
  return redis;
}
