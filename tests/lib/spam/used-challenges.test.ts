import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createLogger } from '../../../src/lib/log.ts';
import { createMemoryUsedChallenges, createRedisUsedChallenges, REDIS_PREFIX } from '../../../src/lib/spam/used-challenges.ts';
import { type RedisServer, redisAvailable, startRedis } from '../../support/redis.ts';

const NOW = 1_000_000;

describe('used challenges in memory', () => {
  test('a challenge is accepted once until it expires', async () => {
    let now = NOW;
    const used = createMemoryUsedChallenges(() => now);
    await expect(used.claim('a', NOW + 1_000)).resolves.toBe(true);
    await expect(used.claim('a', NOW + 1_000)).resolves.toBe(false);
    await expect(used.claim('b', NOW + 1_000)).resolves.toBe(true);
    now = NOW + 999;
    await expect(used.claim('a', NOW + 1_000)).resolves.toBe(false);
    // Expired, so the proof itself is refused; the record need not hold it any more.
    now = NOW + 1_000;
    await expect(used.claim('a', NOW + 2_000)).resolves.toBe(true);
  });

  test('when full, expired entries go first, then the oldest', async () => {
    let now = NOW;
    const used = createMemoryUsedChallenges(() => now, 3);
    await used.claim('expires-soon', NOW + 10);
    await used.claim('old', NOW + 5_000);
    await used.claim('newer', NOW + 5_000);
    now = NOW + 20;
    await expect(used.claim('fourth', NOW + 5_000)).resolves.toBe(true);
    // 'expires-soon' made room: the live ones are all still remembered.
    await expect(used.claim('old', NOW + 5_000)).resolves.toBe(false);
    await expect(used.claim('newer', NOW + 5_000)).resolves.toBe(false);
    await expect(used.claim('fifth', NOW + 5_000)).resolves.toBe(true);
    // Full of live entries: the oldest inserted was forgotten.
    await expect(used.claim('old', NOW + 5_000)).resolves.toBe(true);
    await expect(used.claim('fifth', NOW + 5_000)).resolves.toBe(false);
  });
});

describe.skipIf(!redisAvailable)('used challenges in Redis (skipped without redis-server)', () => {
  let server: RedisServer;
  let redis: Redis;
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', write: (line) => lines.push(line) });
  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => 100 });
    await new Promise((resolve) => redis.once('ready', resolve));
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  test('two instances given the same proof accept it once', async () => {
    const one = createRedisUsedChallenges(redis, createMemoryUsedChallenges(), logger);
    const two = createRedisUsedChallenges(redis, createMemoryUsedChallenges(), logger);
    const expires = Date.now() + 60_000;
    const answers = await Promise.all([one.claim('shared', expires), two.claim('shared', expires)]);
    expect(answers.sort()).toEqual([false, true]);
  });

  test('the record expires with the challenge', async () => {
    const used = createRedisUsedChallenges(redis, createMemoryUsedChallenges(), logger);
    const expires = Date.now() + 60_000;
    await used.claim('timed', expires);
    const ttl = await redis.pttl(`${REDIS_PREFIX}timed`);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  test('while Redis is down, memory decides, and the outage is logged once', async () => {
    const used = createRedisUsedChallenges(redis, createMemoryUsedChallenges(), logger);
    lines.length = 0;
    await server.stop();
    const expires = Date.now() + 60_000;
    await expect(used.claim('during-outage', expires)).resolves.toBe(true);
    await expect(used.claim('during-outage', expires)).resolves.toBe(false);
    await expect(used.claim('another', expires)).resolves.toBe(true);
    const events = lines.map((line) => JSON.parse(line).event);
    expect(events).toEqual(['spam.used_challenges_redis_failed']);
    await server.start();
    await new Promise((resolve) => redis.once('ready', resolve));
    await expect(used.claim('after-outage', expires)).resolves.toBe(true);
    expect(lines.map((line) => JSON.parse(line).event)).toEqual(['spam.used_challenges_redis_failed', 'spam.used_challenges_redis_back']);
  });
});
