import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createLogger, type Logger, silentLogger } from '../../packages/site-forms/src/lib/log.ts';
import { type AbuseLimits, createAbuseLimits, createBoundedMemoryLimiter } from '../../packages/site-forms/src/lib/rate-limit.ts';
import { connectRedis } from '../../packages/site-forms/src/lib/redis.ts';
import { type RedisServer, redisAvailable, startRedis } from '../support/redis.ts';
import { eventually } from '../support/smtp.ts';

const config = (max: number) => ({ rateLimit: { max, windowSeconds: 600 } });

/** Limits shared through a Redis client of their own, closed with them, as the services own one. */
function sharedLimits(max: number, url: string, logger: Logger = silentLogger): AbuseLimits & { ready: Promise<unknown>; errors: () => number } {
  const redis = connectRedis(url, logger);
  const limits = createAbuseLimits(config(max), logger, redis);
  let errors = 0;
  redis.on('error', () => errors++);
  return {
    // Connected: until then the limits are the memory's, which the shared tests must not read.
    ready: new Promise((resolve) => redis.once('ready', resolve)),
    errors: () => errors,
    enabled: limits.enabled,
    checkClient: limits.checkClient,
    refundClient: limits.refundClient,
    checkAddress: limits.checkAddress,
    forgetAddress: limits.forgetAddress,
    async close() {
      await limits.close();
      redis.disconnect();
    },
  };
}

async function countAllowed(check: () => Promise<{ ok: boolean }>, times: number) {
  let allowed = 0;
  for (let i = 0; i < times; i++) if ((await check()).ok) allowed++;
  return allowed;
}

describe('abuse limits in memory', () => {
  test('allows RATE_LIMIT_MAX posts per client and route, then answers with a retry delay', async () => {
    const limits = createAbuseLimits(config(5), silentLogger);
    await expect(countAllowed(() => limits.checkClient('contact', '203.0.113.7'), 8)).resolves.toBe(5);
    const verdict = await limits.checkClient('contact', '203.0.113.7');
    expect(verdict).toEqual({ ok: false, retryAfterSeconds: expect.any(Number) });
    expect(verdict.ok === false && verdict.retryAfterSeconds).toBeGreaterThan(500);
    // The window is 600 s: a wait counted in milliseconds would be a thousand times this.
    expect(verdict.ok === false && verdict.retryAfterSeconds).toBeLessThanOrEqual(600);
  });

  test("an owner's form counts against its own budget, with its own maximum and window", async () => {
    const limits = createAbuseLimits(config(5), silentLogger);
    const own = { max: 2, windowSeconds: 3600 };
    await expect(countAllowed(() => limits.checkClient('form:quote', '203.0.113.7', own), 4)).resolves.toBe(2);
    const verdict = await limits.checkClient('form:quote', '203.0.113.7', own);
    expect(verdict.ok === false && verdict.retryAfterSeconds).toBeGreaterThan(3000);
    // The contact form's budget is untouched by the quotes.
    await expect(countAllowed(() => limits.checkClient('contact', '203.0.113.7'), 8)).resolves.toBe(5);
  });

  test('a post that is not accepted gives its count back: mistakes never lock a visitor out', async () => {
    const limits = createAbuseLimits(config(5), silentLogger);
    const verdicts = [];
    for (let i = 0; i < 12; i++) {
      const verdict = await limits.checkClient('contact', 'typo');
      verdicts.push(verdict.ok);
      // Two in three posts are refused for a typo; every third is accepted.
      if (i % 3 !== 2) await limits.refundClient('contact', 'typo');
    }
    expect(verdicts).toEqual(Array(12).fill(true));
    // Four accepted so far: one more is allowed, then none.
    expect([(await limits.checkClient('contact', 'typo')).ok, (await limits.checkClient('contact', 'typo')).ok]).toEqual([true, false]);
  });

  test('every post, accepted or not, counts against a looser budget: 4 × RATE_LIMIT_MAX per window', async () => {
    const limits = createAbuseLimits(config(5), silentLogger);
    let allowed = 0;
    for (let i = 0; i < 30; i++) {
      if ((await limits.checkClient('newsletter', 'flood')).ok) {
        allowed++;
        await limits.refundClient('newsletter', 'flood');
      }
    }
    expect(allowed).toBe(20);
    const verdict = await limits.checkClient('newsletter', 'flood');
    expect(verdict.ok === false && verdict.retryAfterSeconds).toBeGreaterThan(500);
    await expect(limits.checkClient('contact', 'flood')).resolves.toEqual({ ok: true });
  });

  test('other clients and the other route are unaffected', async () => {
    const limits = createAbuseLimits(config(2), silentLogger);
    await countAllowed(() => limits.checkClient('contact', 'a'), 5);
    await expect(limits.checkClient('contact', 'b')).resolves.toEqual({ ok: true });
    await expect(limits.checkClient('newsletter', 'a')).resolves.toEqual({ ok: true });
  });

  test('allows 3 subscriptions per address per day, whatever its case', async () => {
    const limits = createAbuseLimits(config(100), silentLogger);
    const emails = ['Ada@Example.com', 'ada@example.com', 'ADA@EXAMPLE.COM', 'ada@example.com'];
    const verdicts = [];
    for (const email of emails) verdicts.push((await limits.checkAddress(email)).ok);
    expect(verdicts).toEqual([true, true, true, false]);
    const refused = await limits.checkAddress('ada@example.com');
    expect(refused.ok === false && refused.retryAfterSeconds).toBeGreaterThan(86_000);
    expect(refused.ok === false && refused.retryAfterSeconds).toBeLessThanOrEqual(86_400);
  });

  test('an erasure forgets an address’s count, whatever its case: the address may subscribe 3 times again', async () => {
    const limits = createAbuseLimits(config(100), silentLogger);
    for (let i = 0; i < 3; i++) await limits.checkAddress('ada@example.com');
    await expect(limits.forgetAddress('ADA@Example.com')).resolves.toBe(true);
    await expect(countAllowed(() => limits.checkAddress('ada@example.com'), 4)).resolves.toBe(3);
    await expect(limits.forgetAddress('nobody@example.com')).resolves.toBe(false);
  });

  test.each<[string, string[], boolean[]]>([
    ['a +tag, at any domain', ['bomb@example.org', 'bomb+1@example.org', 'BOMB+two@Example.org', 'bomb+3@example.org'], [true, true, true, false]],
    ['dots and googlemail at Gmail', ['bomb@gmail.com', 'b.o.m.b@gmail.com', 'bo.mb+x@googlemail.com', 'B.O.M.B@GMAIL.COM'], [true, true, true, false]],
    ['dots elsewhere are another mailbox', ['bomb@example.org', 'b.omb@example.org', 'bo.mb@example.org', 'bom.b@example.org'], [true, true, true, true]],
    ['a local part that is only a tag is itself', ['+a@example.org', '+a@example.org', '+a@example.org', '+b@example.org'], [true, true, true, true]],
  ])('the daily limit per address counts the mailbox, not its spellings: %s', async (_, emails, expected) => {
    const limits = createAbuseLimits(config(100), silentLogger);
    const verdicts = [];
    for (const email of emails) verdicts.push((await limits.checkAddress(email)).ok);
    expect(verdicts).toEqual(expected);
  });

  test('RATE_LIMIT_MAX=0 turns limiting off', async () => {
    const limits = createAbuseLimits(config(0), silentLogger);
    expect(limits.enabled).toBe(false);
    expect(createAbuseLimits(config(1), silentLogger).enabled).toBe(true);
    await expect(countAllowed(() => limits.checkClient('contact', 'a'), 50)).resolves.toBe(50);
    await expect(countAllowed(() => limits.checkAddress('a@b.co'), 50)).resolves.toBe(50);
    await expect(limits.refundClient('contact', 'a')).resolves.toBeUndefined();
  });
});

// Skipped without redis-server outside CI: `apt-get install redis-server` to run them.
describe.skipIf(!redisAvailable)('abuse limits shared through a real Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis.stop());

  test('two instances share one budget', async () => {
    const one = sharedLimits(4, redis.url, silentLogger);
    const two = sharedLimits(4, redis.url, silentLogger);
    await Promise.all([one.ready, two.ready]);
    let allowed = 0;
    for (let i = 0; i < 4; i++) {
      if ((await one.checkClient('newsletter', 'shared-client')).ok) allowed++;
      if ((await two.checkClient('newsletter', 'shared-client')).ok) allowed++;
    }
    expect(allowed).toBe(4);
    const client = new Redis(redis.url);
    await expect(client.get('site-forms:newsletter:shared-client')).resolves.toBe('8');
    client.disconnect();
    await one.close();
    await two.close();
  });

  test('a refund is shared too: the accepted count in Redis goes back down', async () => {
    const limits = sharedLimits(4, redis.url, silentLogger);
    await limits.ready;
    await limits.checkClient('contact', 'refunded-client');
    await limits.checkClient('contact', 'refunded-client');
    await limits.refundClient('contact', 'refunded-client');
    const client = new Redis(redis.url);
    await expect(client.get('site-forms:contact:refunded-client')).resolves.toBe('1');
    await expect(client.get('site-forms:attempts:contact:refunded-client')).resolves.toBe('2');
    client.disconnect();
    await limits.close();
  });

  test('an erasure while Redis is down fails rather than leave the count there unsaid', async () => {
    const dead = await startRedis();
    const limits = sharedLimits(2, dead.url);
    await expect(countAllowed(() => limits.checkAddress('ada@example.com'), 1)).resolves.toBe(1);
    await dead.stop();
    await expect(limits.forgetAddress('ada@example.com')).rejects.toThrow();
    await limits.close();
  });

  test('falls back to memory when Redis is unreachable, logging it once', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', write: (line) => lines.push(line) });
    const dead = await startRedis();
    const limits = sharedLimits(2, dead.url, logger);
    await limits.ready;
    await dead.stop();
    // Still limited, now by the in-memory insurance.
    await expect(countAllowed(() => limits.checkClient('contact', 'while-down'), 5)).resolves.toBe(2);
    // Once: the client has failed again (it retries every half second or so), and no second line came.
    await eventually('a second failure to reach Redis', () => limits.errors() >= 2, 10_000);
    expect(lines.filter((l) => l.includes('redis.unreachable'))).toHaveLength(1);
    await limits.close();
  });
});

describe.skipIf(!redisAvailable)('the Redis connection and the address counts in it', () => {
  test('says once that Redis is unreachable, and once that it is back; a first connection says nothing', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const server = await startRedis();
    const limits = sharedLimits(2, server.url, logger);
    await limits.ready;
    expect(lines).toEqual([]);
    await server.stop();
    await eventually('Redis to be missed', () => lines.length >= 1, 10_000);
    await server.start();
    await eventually('Redis to be back', () => lines.length >= 2, 10_000);
    expect(lines.map(({ level, event, note }) => ({ level, event, note }))).toEqual([
      { level: 'warn', event: 'redis.unreachable', note: 'limits and the sign-in throttle are kept in memory until Redis is back' },
      { level: 'info', event: 'redis.back', note: undefined },
    ]);
    await limits.close();
    await server.stop();
  });

  test('an address counted in Redis for a day is forgotten once: true, then false', async () => {
    const server = await startRedis();
    const limits = sharedLimits(2, server.url);
    await limits.ready;
    await limits.checkAddress('Ada@Example.com');
    const client = new Redis(server.url);
    const ttl = await client.ttl('site-forms:address:ada@example.com');
    expect(ttl > 86_000 && ttl <= 86_400).toBe(true);
    await expect(limits.forgetAddress('ada@example.com')).resolves.toBe(true);
    await expect(client.exists('site-forms:address:ada@example.com')).resolves.toBe(0);
    await expect(limits.forgetAddress('ada@example.com')).resolves.toBe(false);
    client.disconnect();
    await limits.close();
    await server.stop();
  });

  test('with the limits off, an erasure still forgets a count left in Redis, and without Redis finds none', async () => {
    const server = await startRedis();
    const redis = connectRedis(server.url, silentLogger);
    await new Promise((resolve) => redis.once('ready', resolve));
    await redis.set('site-forms:address:bob@example.com', '2');
    await expect(createAbuseLimits(config(0), silentLogger, redis).forgetAddress('Bob@example.com')).resolves.toBe(true);
    await expect(redis.exists('site-forms:address:bob@example.com')).resolves.toBe(0);
    await expect(createAbuseLimits(config(0), silentLogger).forgetAddress('bob@example.com')).resolves.toBe(false);
    redis.disconnect();
    await server.stop();
  });
});

describe('the in-memory budget remembers a bounded number of clients', () => {
  const sizeOf = (limiter: object) => (limiter as { _memoryStorage: { _storage: Map<string, unknown> } })._memoryStorage._storage.size;

  test('a flood of 1,000 new keys against a bound of 100 keeps 100, and the newest still counted', async () => {
    const limiter = createBoundedMemoryLimiter({ keyPrefix: 't', points: 2, duration: 600 }, 100);
    for (let i = 0; i < 1_000; i++) await limiter.consume(`2001:db8:${i.toString(16)}::/64`);
    expect(sizeOf(limiter)).toBe(100);
    const newest = '2001:db8:3e7::/64';
    await limiter.consume(newest);
    await expect(limiter.consume(newest)).rejects.toMatchObject({ msBeforeNext: expect.any(Number) });
    // The oldest windows were forgotten: that client starts afresh.
    await expect(limiter.consume('2001:db8:0::/64')).resolves.toMatchObject({ consumedPoints: 1 });
  });

  test.each([
    [19_999, false],
    [20_000, true],
  ])('the server’s budgets keep 20,000 clients: after %i others, the first is forgotten: %s', async (others, forgotten) => {
    const limits = createAbuseLimits(config(1), silentLogger);
    await expect(limits.checkClient('contact', 'first')).resolves.toMatchObject({ ok: true });
    await expect(limits.checkClient('contact', 'first')).resolves.toMatchObject({ ok: false });
    for (let i = 0; i < others; i++) await limits.checkClient('contact', `other-${i}`);
    await expect(limits.checkClient('contact', 'first')).resolves.toMatchObject({ ok: forgotten });
    await limits.close();
  });
});
