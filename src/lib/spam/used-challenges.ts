import type { Redis } from 'ioredis';
import { describeError, type Logger } from '../log.ts';

/** The record of challenges already answered, which makes each proof single-use. */
export interface UsedChallenges {
  /** Records `id` as used until `expiresAtMs`; answers false when it was already used. */
  claim(id: string, expiresAtMs: number): Promise<boolean>;
}

/** How many used challenges memory keeps at most; beyond it the oldest expiring go first. */
export const MEMORY_LIMIT = 100_000;

/**
 * The record in this process's memory: right for one instance, and the fall-back while Redis
 * is unreachable.
 * Hint: entries are dropped once their challenge has expired, since an expired proof is
 * refused anyway.
 */
export function createMemoryUsedChallenges(now: () => number = Date.now, limit = MEMORY_LIMIT): UsedChallenges {
  const used = new Map<string, number>();
  return {
    async claim(id, expiresAtMs) {
      const time = now();
      if ((used.get(id) ?? 0) > time) return false;
      if (used.size >= limit) prune(used, time, limit);
      used.set(id, expiresAtMs);
      return true;
    },
  };
}

function prune(used: Map<string, number>, time: number, limit: number): void {
  for (const [id, expiresAt] of used) if (expiresAt <= time) used.delete(id);
  // Still full of live entries: forget the oldest inserted, which expire first.
  for (const id of used.keys()) {
    if (used.size < limit) break;
    used.delete(id);
  }
}

/** The key prefix of used challenges in Redis, beside the rate limiter's keys. */
export const REDIS_PREFIX = 'site-forms:used-challenge:';

/**
 * The record in Redis, shared by every instance: `SET NX` with the challenge's expiry, so
 * two instances given the same proof at once accept it once.
 * Hint: while Redis fails, `fallback` (memory) decides, and the failure is logged once
 * until Redis answers again, so no message is lost to an outage.
 */
export function createRedisUsedChallenges(redis: Pick<Redis, 'set'>, fallback: UsedChallenges, logger: Logger): UsedChallenges {
  let failing = false;
  return {
    async claim(id, expiresAtMs) {
      try {
        const answer = await redis.set(`${REDIS_PREFIX}${id}`, '1', 'PXAT', Math.ceil(expiresAtMs), 'NX');
        if (failing) logger.info('spam.used_challenges_redis_back');
        failing = false;
        return answer === 'OK';
      } catch (error) {
        if (!failing)
          logger.warn('spam.used_challenges_redis_failed', { error: describeError(error), note: 'used challenges are kept in memory until Redis is back' });
        failing = true;
        return fallback.claim(id, expiresAtMs);
      }
    },
  };
}
