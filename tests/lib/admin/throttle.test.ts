import { Redis } from 'ioredis';
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import {
  clientDelayMs,
  createSignInThrottle,
  overallDelayMs,
  personKey,
  type SignInGate,
  type SignInThrottle,
} from '../../../packages/site-forms/src/lib/admin/throttle.ts';
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

describe('sign-in attempts per person (issue 42): counted by what was typed, whether the account exists or not', () => {
  afterEach(() => vi.useRealTimers());
  // Each from its own address, so that only the person's count is at work (the client's is 10).
  const asPerson = async (throttle: SignInThrottle, email: string, times: number, known = false, from = 0) => {
    const gates: SignInGate[] = [];
    for (let i = 0; i < times; i++) gates.push(await throttle.attempt(`192.0.2.${from + i}`, { key: personKey(email), known }));
    return gates;
  };

  test('the key: SHA-256 of the email as typed, trimmed and lower-cased; `person:env` for an empty one', () => {
    expect(personKey(' Ada@Example.org ')).toBe(`person:${createHash('sha256').update('ada@example.org').digest('hex')}`);
    expect(personKey('')).toBe('person:env');
    expect(personKey('   ')).toBe('person:env');
  });

  test('nothing for the first five failures, then 1, 2, 4 and 8 seconds; the 21st within 15 minutes is refused to a browser without the device cookie', async () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 29, 9, 0, 0) });
    const throttle = createSignInThrottle({ logger: silentLogger });
    const gates = await asPerson(throttle, 'nobody@example.org', 21);
    expect(gates.slice(0, 20).map((g) => g.ok && g.delayMs)).toEqual([
      0, 0, 0, 0, 0, 1000, 2000, 4000, 8000, 8000, 8000, 8000, 8000, 8000, 8000, 8000, 8000, 8000, 8000, 8000,
    ]);
    expect(gates[20]).toEqual({ ok: false, retryAfterSeconds: 900 });
    vi.advanceTimersByTime(15 * 60_000 - 1000);
    await expect(asPerson(throttle, 'nobody@example.org', 1, false, 100)).resolves.toEqual([{ ok: false, retryAfterSeconds: 1 }]);
    vi.advanceTimersByTime(1000);
    await expect(asPerson(throttle, 'nobody@example.org', 1, false, 101)).resolves.toEqual([{ ok: true, delayMs: 0 }]);
  });

  test('a browser with the device cookie is slowed but never refused', async () => {
    const throttle = createSignInThrottle({ logger: silentLogger });
    await asPerson(throttle, 'owner@example.org', 30);
    await expect(asPerson(throttle, 'owner@example.org', 1, true, 200)).resolves.toEqual([{ ok: true, delayMs: 8000 }]);
  });

  test('one person’s count touches no other, and signing in forgets it', async () => {
    const throttle = createSignInThrottle({ logger: silentLogger });
    await asPerson(throttle, 'ada@example.org', 21);
    await expect(asPerson(throttle, '', 1, false, 100)).resolves.toEqual([{ ok: true, delayMs: 0 }]);
    await throttle.succeeded('192.0.2.200', personKey('ada@example.org'));
    await expect(asPerson(throttle, 'ADA@example.org', 1, false, 201)).resolves.toEqual([{ ok: true, delayMs: 0 }]);
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
