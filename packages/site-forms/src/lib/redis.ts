import type { Redis } from 'ioredis';
import { requireWhenNeeded } from './lazy.ts';
import { describeError, type Logger } from './log.ts';

/**
 * The process's one Redis connection, shared by the abuse limits and the admin's sign-in
 * throttle and closed with the services. It fails fast while Redis is down (both fall back to
 * memory then) and says so once, and once more when Redis is back.
 */
export function connectRedis(url: string, logger: Logger): Redis {
  const { Redis } = requireWhenNeeded('ioredis') as typeof import('ioredis');
  const redis = new Redis(url, {
    // Fail fast while disconnected; the memory limiters take over.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 500, 5000),
  });
  let down = false;
  redis.on('error', (error) => {
    if (down) return;
    down = true;
    logger.warn('redis.unreachable', { error: describeError(error), note: 'limits and the sign-in throttle are kept in memory until Redis is back' });
  });
  redis.on('ready', () => {
    if (down) logger.info('redis.back');
    down = false;
  });
  return redis;
}
