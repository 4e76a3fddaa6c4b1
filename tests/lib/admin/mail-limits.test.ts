/**
 * The limits on what sends a link (issue 42, admin/mail-limits.ts, decision 0288), on the fake
 * clock of decision 0215: 3 link mails per address in 24 hours, 5 reset requests per client and
 * 20 invitations per owner in an hour; each at both sides of its edge, and shared through Redis.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { createMailLimits, type MailGate } from '../../../packages/site-forms/src/lib/admin/mail-limits.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { type RedisServer, redisAvailable, startRedis } from '../../support/redis.ts';

const HOUR = 60 * 60_000;

async function times<T>(count: number, step: () => Promise<T>): Promise<T[]> {
  const answers: T[] = [];
  for (let i = 0; i < count; i++) answers.push(await step());
  return answers;
}

describe('the limits on link mails in memory', () => {
  afterEach(() => vi.useRealTimers());

  test('an address gets 3 link mails in 24 hours, the 4th none, and one again 24 hours after the first', async () => {
    vi.useFakeTimers({ now: Date.UTC(2030, 0, 1, 8, 0, 0) });
    const limits = createMailLimits({ logger: silentLogger });
    expect(await times(3, () => limits.linkMail('eddie@example.org'))).toEqual([true, true, true]);
    expect(await limits.linkMail('EDDIE@example.org ')).toBe(false);
    // Another address is counted apart.
    expect(await limits.linkMail('rita@example.org')).toBe(true);
    vi.advanceTimersByTime(24 * HOUR - 1000);
    expect(await limits.linkMail('eddie@example.org')).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(await limits.linkMail('eddie@example.org')).toBe(true);
  });

  test('a client makes 5 reset requests in an hour; the 6th is refused until the hour ends', async () => {
    vi.useFakeTimers({ now: Date.UTC(2030, 0, 1, 8, 0, 0) });
    const limits = createMailLimits({ logger: silentLogger });
    expect(await times(5, () => limits.resetRequest('203.0.113.7'))).toEqual(Array<MailGate>(5).fill({ ok: true }));
    expect(await limits.resetRequest('203.0.113.7')).toEqual({ ok: false, retryAfterSeconds: 3600 });
    expect(await limits.resetRequest('203.0.113.8')).toEqual({ ok: true });
    vi.advanceTimersByTime(HOUR - 1000);
    expect(await limits.resetRequest('203.0.113.7')).toEqual({ ok: false, retryAfterSeconds: 1 });
    vi.advanceTimersByTime(1000);
    expect(await limits.resetRequest('203.0.113.7')).toEqual({ ok: true });
  });

  test('an owner sends 20 invitations in an hour; the 21st is refused, another owner is not', async () => {
    vi.useFakeTimers({ now: Date.UTC(2030, 0, 1, 8, 0, 0) });
    const limits = createMailLimits({ logger: silentLogger });
    expect((await times(20, () => limits.invitation(1))).every((gate) => gate.ok)).toBe(true);
    expect(await limits.invitation(1)).toEqual({ ok: false, retryAfterSeconds: 3600 });
    expect(await limits.invitation(2)).toEqual({ ok: true });
    vi.advanceTimersByTime(HOUR);
    expect(await limits.invitation(1)).toEqual({ ok: true });
  });
});

// Skipped without redis-server outside CI: `apt-get install redis-server` to run them.
describe.skipIf(!redisAvailable)('the limits on link mails shared through a real Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis.stop());

  test('two instances count one address once, under its SHA-256 only', async () => {
    const [a, b] = [new Redis(redis.url), new Redis(redis.url)];
    await Promise.all([a, b].map((c) => new Promise((ready) => c.once('ready', ready))));
    try {
      const one = createMailLimits({ redis: a, logger: silentLogger });
      const two = createMailLimits({ redis: b, logger: silentLogger });
      expect(await one.linkMail('ada@example.org')).toBe(true);
      expect(await two.linkMail('ada@example.org')).toBe(true);
      expect(await one.linkMail('ada@example.org')).toBe(true);
      expect(await two.linkMail('ada@example.org')).toBe(false);
      const keys = await a.keys('site-forms:link-mail:*');
      expect(keys).toHaveLength(1);
      expect(keys[0]).not.toContain('ada');
    } finally {
      a.disconnect();
      b.disconnect();
    }
  });
});
