import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { clientDelayMs, createSignInThrottle, overallDelayMs, type SignInGate } from '../../../packages/site-forms/src/lib/admin/throttle.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { type RedisServer, redisAvailable, startRedis } from '../../support/redis.ts';

describe('the delay before a password is checked', () => {
  test.each([
    [0, 0],
    [2, 0],
    [3, 1000],
    [4, 2000],
    [5, 4000],
    [6, 8000],
    [9, 8000],
  ])('after %i earlier attempts of the client: %i ms', (earlier, delay) => {
    expect(clientDelayMs(earlier)).toBe(delay);
  });

  test.each([
    [0, 0],
    [99, 0],
    [100, 250],
    [199, 250],
    [200, 500],
    [1199, 2750],
    [1200, 3000],
    [100_000, 3000],
  ])('after %i earlier attempts of everyone: %i ms', (earlier, delay) => {
    expect(overallDelayMs(earlier)).toBe(delay);
  });
});

async function attempts(throttle: { attempt(k: string): Promise<SignInGate> }, key: string, times: number): Promise<SignInGate[]> {
  const gates = [];
  for (let i = 0; i < times; i++) gates.push(await throttle.attempt(key));
  return gates;
}

describe('sign-in attempts in memory', () => {
  afterEach(() => vi.useRealTimers());

  test('a client waits longer after each attempt and gets 429 at the eleventh within 15 minutes', async () => {
    const throttle = createSignInThrottle({ logger: silentLogger });
    const gates = await attempts(throttle, '203.0.113.7', 11);
    expect(gates.slice(0, 10).map((g) => g.ok && g.delayMs)).toEqual([0, 0, 0, 1000, 2000, 4000, 8000, 8000, 8000, 8000]);
    expect(gates[10]).toEqual({ ok: false, retryAfterSeconds: 900 });
  });

  test('the refusal ends 15 minutes after the first attempt', async () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 22, 8, 0, 0) });
    const throttle = createSignInThrottle({ logger: silentLogger });
    await attempts(throttle, 'a', 10);
    vi.advanceTimersByTime(14 * 60_000);
    await expect(throttle.attempt('a')).resolves.toEqual({ ok: false, retryAfterSeconds: 60 });
    vi.advanceTimersByTime(60_000);
    await expect(throttle.attempt('a')).resolves.toEqual({ ok: true, delayMs: 0 });
  });

  test('signing in forgets the attempts, so the owner who mistyped starts afresh', async () => {
    const throttle = createSignInThrottle({ logger: silentLogger });
    await attempts(throttle, 'owner', 9);
    await throttle.succeeded('owner');
    await expect(throttle.attempt('owner')).resolves.toEqual({ ok: true, delayMs: 0 });
  });

  test("an attacker's refusal does not touch the owner's address", async () => {
    const throttle = createSignInThrottle({ logger: silentLogger });
    await attempts(throttle, 'attacker', 11);
    await expect(throttle.attempt('owner')).resolves.toEqual({ ok: true, delayMs: 0 });
  });

  test('attempts from many addresses slow everyone down but refuse no one', async () => {
    const throttle = createSignInThrottle({ logger: silentLogger });
    for (let i = 0; i < 200; i++) await throttle.attempt(`10.0.${i >> 8}.${i & 255}`);
    await expect(throttle.attempt('owner')).resolves.toEqual({ ok: true, delayMs: 500 });
  });

  test('the delays can be replaced (the HTTP tests use none)', async () => {
    const throttle = createSignInThrottle({ logger: silentLogger, delays: { client: (n) => n * 10, overall: () => 5 } });
    const gates = await attempts(throttle, 'a', 3);
    expect(gates).toEqual([
      { ok: true, delayMs: 5 },
      { ok: true, delayMs: 10 },
      { ok: true, delayMs: 20 },
    ]);
  });
});

// Skipped without redis-server outside CI: `apt-get install redis-server` to run them.
describe.skipIf(!redisAvailable)('sign-in attempts shared through a real Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis.stop());

  test('two instances count one client once: the eleventh attempt across both is refused', async () => {
    const [a, b] = [new Redis(redis.url), new Redis(redis.url)];
    // Until a connection is ready the throttle counts in memory (its insurance), which is not what this test is about.
    await Promise.all([a, b].map((c) => new Promise((ready) => c.once('ready', ready))));
    try {
      const one = createSignInThrottle({ redis: a, logger: silentLogger, delays: { client: () => 0, overall: () => 0 } });
      const two = createSignInThrottle({ redis: b, logger: silentLogger, delays: { client: () => 0, overall: () => 0 } });
      await attempts(one, '198.51.100.4', 5);
      await attempts(two, '198.51.100.4', 5);
      await expect(one.attempt('198.51.100.4')).resolves.toEqual({ ok: false, retryAfterSeconds: expect.any(Number) });
      await two.succeeded('198.51.100.4');
      await expect(one.attempt('198.51.100.4')).resolves.toEqual({ ok: true, delayMs: 0 });
      // The keys every instance (and every version of it) counts under.
      expect((await a.keys('site-forms:*')).sort()).toEqual(['site-forms:sign-in-all:all', 'site-forms:sign-in:198.51.100.4']);
      expect(Number(await a.get('site-forms:sign-in-all:all'))).toBe(11);
    } finally {
      a.disconnect();
      b.disconnect();
    }
  });

  test('with Redis down, a sign-in is counted in memory at once rather than queued until Redis is back', async () => {
    const dead = await startRedis();
    // A client with ioredis's offline queue (src/lib/redis.ts turns it off): a command would wait
    // in it through 20 reconnections (here 40 s); the throttle does not wait for Redis to be ready.
    const client = new Redis(dead.url, { retryStrategy: () => 2000 });
    client.on('error', () => {});
    await new Promise((ready) => client.once('ready', ready));
    const closed = new Promise((done) => client.once('close', done));
    await dead.stop();
    await closed;
    try {
      const throttle = createSignInThrottle({ redis: client, logger: silentLogger, delays: { client: () => 0, overall: () => 0 } });
      const gates = await attempts(throttle, 'b', 11);
      expect(gates.map((g) => g.ok)).toEqual([true, true, true, true, true, true, true, true, true, true, false]);
    } finally {
      client.disconnect();
    }
  }, 10_000);

  test('keeps counting in memory while Redis is unreachable', async () => {
    const dead = await startRedis();
    const client = new Redis(dead.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => 200 });
    client.on('error', () => {});
    await dead.stop();
    try {
      const throttle = createSignInThrottle({ redis: client, logger: silentLogger, delays: { client: () => 0, overall: () => 0 } });
      const gates = await attempts(throttle, 'a', 11);
      expect(gates.map((g) => g.ok)).toEqual([true, true, true, true, true, true, true, true, true, true, false]);
    } finally {
      client.disconnect();
    }
  });
});
