import { describe, expect, test } from 'vitest';
import { createSignups, SIGNUP_TRY_FOR_MS } from '../../../packages/site-forms/src/lib/newsletter/signups.ts';
import { testEngines } from '../../support/stores.ts';

// The rules of the signup queue at their edges: what is worth another try, the longest wait, the
// last moment of the day a signup is tried for, what the owner's retry resets, and when the next
// one is due.
const T0 = new Date('2026-11-24T12:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const MINUTE = 60_000;

describe.each(testEngines())('the signup queue on $name', (engine) => {
  const open = async (retryBaseMs: number) => createSignups((await engine.open()).store.sql, { retryBaseMs, random: () => 0 });

  test.skipIf(!engine.available)('a wrong key is worth another try, as the owner may fix it; the error kept is cut to 200 characters', async () => {
    const signups = await open(1_000);
    const id = await signups.enqueue('ada@example.org', 'mailchimp', T0);
    const taken = await signups.claim(at(1_000), at(61_000));
    await expect(
      signups.finish(id, taken!.lease, { ok: false, reason: 'misconfigured', detail: 'x'.repeat(300), check: 'MAILCHIMP_API_KEY' }, at(1_000)),
    ).resolves.toBe('waiting');
    await expect(signups.pending(10)).resolves.toEqual([
      {
        id,
        email: 'ada@example.org',
        provider: 'mailchimp',
        status: 'waiting',
        attempts: 1,
        nextAttemptAt: '2026-11-24T12:00:02.000Z',
        lastError: `misconfigured: ${'x'.repeat(185)}`,
        createdAt: '2026-11-24T12:00:00.000Z',
      },
    ]);
  });

  test.skipIf(!engine.available)('the wait doubles up to an hour, never more', async () => {
    const signups = await open(40 * MINUTE);
    const id = await signups.enqueue('ada@example.org', 'kit', T0);
    const busy = { ok: false, reason: 'unavailable', detail: 'HTTP 503' } as const;
    const first = await signups.claim(at(40 * MINUTE), at(41 * MINUTE));
    await signups.finish(id, first!.lease, busy, at(40 * MINUTE));
    await expect(signups.nextDueAt()).resolves.toEqual(at(80 * MINUTE));
    const second = await signups.claim(at(80 * MINUTE), at(81 * MINUTE));
    await signups.finish(id, second!.lease, busy, at(80 * MINUTE));
    // Not 80 minutes: an hour.
    await expect(signups.nextDueAt()).resolves.toEqual(at(140 * MINUTE));
  });

  test.skipIf(!engine.available)('a try whose next one would fall exactly at the end of the day waits; a millisecond later it is given up', async () => {
    const signups = await open(1_000);
    const busy = { ok: false, reason: 'unavailable', detail: 'HTTP 503' } as const;
    const last = await signups.enqueue('last@example.org', 'resend', T0);
    const late = await signups.enqueue('late@example.org', 'resend', T0);
    const edge = at(SIGNUP_TRY_FOR_MS - 1_000);
    const one = await signups.claim(edge, at(SIGNUP_TRY_FOR_MS));
    expect(one?.signup.id).toBe(last);
    await expect(signups.finish(last, one!.lease, busy, edge)).resolves.toBe('waiting');
    const beyond = at(SIGNUP_TRY_FOR_MS - 999);
    const two = await signups.claim(beyond, at(SIGNUP_TRY_FOR_MS));
    expect(two?.signup.id).toBe(late);
    await expect(signups.finish(late, two!.lease, busy, beyond)).resolves.toBe('failed');
    await expect(signups.pending(10)).resolves.toEqual([
      expect.objectContaining({ id: late, status: 'failed', nextAttemptAt: null, lastError: 'unavailable: HTTP 503' }),
      expect.objectContaining({ id: last, status: 'waiting', nextAttemptAt: at(SIGNUP_TRY_FOR_MS).toISOString() }),
    ]);
  });

  test.skipIf(!engine.available)("the owner's retry gives a given-up signup a fresh day from now, due at once", async () => {
    const signups = await open(1_000);
    const id = await signups.enqueue('ada@example.org', 'kit', T0);
    const taken = await signups.claim(at(1_000), at(61_000));
    await signups.finish(id, taken!.lease, { ok: false, reason: 'forgotten', detail: 'HTTP 400' }, at(1_000));
    await expect(signups.nextDueAt()).resolves.toBeUndefined();
    const later = at(3 * SIGNUP_TRY_FOR_MS);
    await expect(signups.retry(id, later)).resolves.toBe(true);
    await expect(signups.nextDueAt()).resolves.toEqual(later);
    await expect(signups.pending(10)).resolves.toEqual([
      {
        id,
        email: 'ada@example.org',
        provider: 'kit',
        status: 'waiting',
        attempts: 0,
        nextAttemptAt: later.toISOString(),
        lastError: 'forgotten: HTTP 400',
        createdAt: later.toISOString(),
      },
    ]);
    // A day counted from the retry: a busy provider a minute on gets another try.
    const again = await signups.claim(later, new Date(later.getTime() + MINUTE));
    await expect(signups.finish(id, again!.lease, { ok: false, reason: 'unavailable', detail: 'HTTP 503' }, new Date(later.getTime() + MINUTE))).resolves.toBe(
      'waiting',
    );
  });

  test.skipIf(!engine.available)('the next due time is the earliest waiting one; pending lists at most the number asked, newest first', async () => {
    const signups = await open(1_000);
    await expect(signups.nextDueAt()).resolves.toBeUndefined();
    await signups.enqueue('late@example.org', 'kit', at(5_000));
    await signups.enqueue('early@example.org', 'kit', at(2_000));
    await signups.enqueue('latest@example.org', 'kit', at(9_000));
    await expect(signups.nextDueAt()).resolves.toEqual(at(3_000));
    expect((await signups.pending(2)).map((s) => s.email)).toEqual(['latest@example.org', 'early@example.org']);
    // The earliest due is taken first, whatever the order they came in.
    await expect(signups.claim(at(10_000), at(70_000))).resolves.toMatchObject({ signup: { email: 'early@example.org' } });
  });
});
