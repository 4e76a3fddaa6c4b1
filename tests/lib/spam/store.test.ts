import { describe, expect, test } from 'vitest';
import { testEngines } from '../../support/stores.ts';

const INPUT = { name: 'Spammy', email: 'spam@example.com', message: 'Buy https://a.test https://b.test https://c.test', honeypot: '' };

describe.each(testEngines())('the spam filter’s records on $name', (engine) => {
  const open = async () => {
    if (!engine.available) return undefined;
    const { store } = await engine.open();
    return { store, spam: store.spam };
  };

  test.skipIf(!engine.available)('a held message is stored as spam with its reasons and is never due', async () => {
    const { store, spam } = (await open())!;
    const id = await spam.hold(INPUT, { reasons: ['proof-missing', 'too-many-links'], ip: '203.0.113.7', userAgent: 'curl/8' });
    await expect(spam.details(id)).resolves.toEqual({ reasons: ['proof-missing', 'too-many-links'], ip: '203.0.113.7', userAgent: 'curl/8' });
    const [listed] = await store.outbox.list();
    expect(listed).toMatchObject({ id, status: 'spam', nextAttemptAt: null });
    const later = new Date(Date.now() + 86_400_000);
    await expect(store.outbox.claim(later, later)).resolves.toBeUndefined();
  });

  test.skipIf(!engine.available)('release puts a held message in the queue once; a second release changes nothing', async () => {
    const { spam } = (await open())!;
    const id = await spam.hold(INPUT, { reasons: ['too-fast'] });
    await expect(spam.release(id)).resolves.toEqual({ found: true, from: 'spam', changed: true, to: 'pending' });
    await expect(spam.release(id)).resolves.toEqual({ found: true, from: 'pending', changed: false });
    await expect(spam.release(9999)).resolves.toEqual({ found: false });
  });

  test.skipIf(!engine.available)('marking as spam holds a pending message with the owner’s reason', async () => {
    const { store, spam } = (await open())!;
    const id = await store.submissions.save(INPUT);
    await expect(spam.markSpam(id)).resolves.toEqual({ found: true, from: 'pending', changed: true, to: 'spam' });
    await expect(spam.markSpam(id)).resolves.toEqual({ found: true, from: 'spam', changed: false });
    await expect(spam.details(id)).resolves.toMatchObject({ reasons: ['marked-by-owner'] });
    await expect(spam.markSpam(424242)).resolves.toEqual({ found: false });
  });

  test.skipIf(!engine.available)('held messages since a time: counted, the newest few cut to their start, and deleted after the retention', async () => {
    const { spam } = (await open())!;
    const before = new Date(Date.now() - 1000).toISOString();
    const a = await spam.hold(INPUT, { reasons: ['too-fast'] });
    const b = await spam.hold({ ...INPUT, name: 'Other', message: `${'é'.repeat(299)}xyz` }, { reasons: ['link-in-name'] });
    const c = await spam.hold({ ...INPUT, name: 'Third' }, { reasons: ['too-fast'] });
    const held = await spam.heldSince(before, 2);
    expect(held.count).toBe(3);
    expect(held.newest.map((m) => [m.id, m.name, m.reasons])).toEqual([
      [c, 'Third', ['too-fast']],
      [b, 'Other', ['link-in-name']],
    ]);
    expect(held.newest[1]?.message).toBe(`${'é'.repeat(299)}x`);
    expect(a).toBeLessThan(b);
    await expect(spam.heldSince(new Date(Date.now() + 1000).toISOString(), 50)).resolves.toEqual({ count: 0, newest: [] });
    await expect(spam.deleteHeldBefore(before)).resolves.toBe(0);
    await expect(spam.deleteHeldBefore(new Date(Date.now() + 1000).toISOString())).resolves.toBe(3);
    await expect(spam.heldSince(undefined, 50)).resolves.toEqual({ count: 0, newest: [] });
  });

  test.skipIf(!engine.available)('a challenge is used once, and forgotten once expired', async () => {
    const { spam } = (await open())!;
    const expires = Date.now() + 60_000;
    await expect(spam.usedChallenges.claim('nonce-1', expires)).resolves.toBe(true);
    await expect(spam.usedChallenges.claim('nonce-1', expires)).resolves.toBe(false);
    await expect(spam.usedChallenges.deleteExpired(expires - 1)).resolves.toBe(0);
    await expect(spam.usedChallenges.deleteExpired(expires)).resolves.toBe(1);
  });

  test.skipIf(!engine.available)('the proof secret is made once and then always the same', async () => {
    const { spam } = (await open())!;
    const [one, two] = await Promise.all([spam.proofSecret(), spam.proofSecret()]);
    expect(one).toMatch(/^[0-9a-f]{64}$/);
    expect(two).toBe(one);
    await expect(spam.proofSecret()).resolves.toBe(one);
  });

  test.skipIf(!engine.available)('the digest is taken at most once a day, and given back when it could not be sent', async () => {
    const { spam } = (await open())!;
    const now = new Date('2026-11-22T23:00:00.000Z');
    const first = await spam.takeDigest(now);
    expect(first?.previous).toBeUndefined();
    await expect(spam.takeDigest(now)).resolves.toBeUndefined();
    await expect(spam.takeDigest(new Date('2026-11-23T22:59:59.999Z'))).resolves.toBeUndefined();
    await first!.undo();
    const again = await spam.takeDigest(now);
    expect(again?.previous).toBeUndefined();
    const tomorrow = await spam.takeDigest(new Date('2026-11-23T23:00:00.000Z'));
    expect(tomorrow?.previous).toBe('2026-11-22T23:00:00.000Z');
  });
});
