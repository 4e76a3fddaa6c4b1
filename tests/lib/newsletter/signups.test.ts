import { describe, expect, test } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createSignups, SIGNUP_TRY_FOR_MS } from '../../../packages/site-forms/src/lib/newsletter/signups.ts';
import { openStore } from '../../../packages/site-forms/src/lib/database/database.ts';
import { TEST_DATABASE, testEngines } from '../../support/stores.ts';

const T0 = new Date('2026-11-24T12:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const lease = (now: Date) => new Date(now.getTime() + 60_000);
const BUSY = { ok: false, reason: 'unavailable', detail: 'HTTP 503' } as const;

describe.each(testEngines())('signups waiting for the provider on $name', (engine) => {
  const open = async () => {
    const { store, url, dataDir } = await engine.open();
    return { store, url, dataDir, signups: createSignups(store.sql, { retryBaseMs: 1_000, random: () => 0 }) };
  };

  test.skipIf(!engine.available)('a stored signup is tried once due, again later with a growing wait, and added when the provider takes it', async () => {
    const { signups } = await open();
    const id = await signups.enqueue('ada@example.org', 'mailchimp', T0);
    await expect(signups.claim(at(999), lease(at(999)))).resolves.toBeUndefined();
    const first = await signups.claim(at(1_000), lease(at(1_000)));
    expect(first?.signup).toMatchObject({ id, email: 'ada@example.org', provider: 'mailchimp', status: 'waiting', attempts: 1 });
    // Under its lease, nobody else takes it.
    await expect(signups.claim(at(1_000), lease(at(1_000)))).resolves.toBeUndefined();
    await expect(signups.finish(id, first!.lease, BUSY, at(1_000))).resolves.toBe('waiting');
    await expect(signups.pending(10)).resolves.toEqual([
      expect.objectContaining({ id, attempts: 1, nextAttemptAt: at(2_000).toISOString(), lastError: 'unavailable: HTTP 503' }),
    ]);
    const second = await signups.claim(at(2_000), lease(at(2_000)));
    await expect(signups.finish(id, second!.lease, BUSY, at(2_000))).resolves.toBe('waiting');
    expect((await signups.pending(10))[0]?.nextAttemptAt).toBe(at(4_000).toISOString());
    const third = await signups.claim(at(4_000), lease(at(4_000)));
    await expect(signups.finish(id, third!.lease, { ok: true }, at(4_000))).resolves.toBe('added');
    await expect(signups.pending(10)).resolves.toEqual([]);
    // A finish under a lease that is no longer the row's changes nothing.
    await expect(signups.finish(id, third!.lease, BUSY, at(5_000))).resolves.toBeUndefined();
  });

  test.skipIf(!engine.available)('what the provider refuses for good is given up at once; the owner may retry it', async () => {
    const { signups } = await open();
    const id = await signups.enqueue('bad@example.org', 'kit', T0);
    const taken = await signups.claim(at(1_000), lease(at(1_000)));
    await expect(signups.finish(id, taken!.lease, { ok: false, reason: 'invalid-address', detail: 'fake' }, at(1_000))).resolves.toBe('failed');
    await expect(signups.pending(10)).resolves.toEqual([expect.objectContaining({ id, status: 'failed', lastError: 'invalid-address: fake' })]);
    await expect(signups.retry(id, at(2_000))).resolves.toBe(true);
    await expect(signups.retry(id, at(2_000))).resolves.toBe(false);
    await expect(signups.claim(at(2_000), lease(at(2_000)))).resolves.toMatchObject({ signup: { id, status: 'waiting', attempts: 1 } });
  });

  test.skipIf(!engine.available)('a provider down for more than a day: the signup is given up', async () => {
    const { signups } = await open();
    const id = await signups.enqueue('late@example.org', 'resend', T0);
    let now = at(1_000);
    let status: string | undefined = 'waiting';
    for (let tries = 0; status === 'waiting' && tries < 100; tries++) {
      const taken = await signups.claim(now, lease(now));
      status = await signups.finish(id, taken!.lease, BUSY, now);
      now = new Date(Date.parse((await signups.pending(1))[0]!.nextAttemptAt ?? now.toISOString()));
    }
    expect(status).toBe('failed');
    expect(now.getTime() - T0.getTime()).toBeLessThanOrEqual(SIGNUP_TRY_FOR_MS + 3_600_000);
  });

  test.skipIf(!engine.available)('two instances take each signup once', async () => {
    const { url, dataDir, signups } = await open();
    const other = openStore({ ...TEST_DATABASE, url, dataDir }, createLogger({ level: 'silent' }));
    await other.ready;
    try {
      for (let n = 0; n < 8; n++) await signups.enqueue(`reader${n}@example.org`, 'mailchimp', T0);
      const theirs = createSignups(other.sql, { retryBaseMs: 1_000, random: () => 0 });
      const taken = await Promise.all(Array.from({ length: 12 }, (_, n) => (n % 2 ? theirs : signups).claim(at(1_000), lease(at(1_000)))));
      const ids = taken.filter((t) => t !== undefined).map((t) => t!.signup.id);
      expect(ids).toHaveLength(8);
      expect(new Set(ids).size).toBe(8);
    } finally {
      await other.close();
    }
  });
});
