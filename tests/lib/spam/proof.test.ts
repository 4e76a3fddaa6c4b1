import { type Challenge, solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { describe, expect, test } from 'vitest';
import { checkProof, issueChallenge } from '../../../packages/site-forms/src/lib/spam/proof.ts';
import { createMemoryUsedChallenges } from '../../../packages/site-forms/src/lib/spam/used-challenges.ts';

const SECRET = 'test-secret-of-this-site';
const NOW = Date.UTC(2026, 10, 22, 22, 0, 0);
const at = (ms: number) => () => ms;

/** Solves a challenge with altcha-lib's own solver, as ALTCHA's widget would. */
async function solve(challenge: Challenge): Promise<string> {
  const solution = await solveChallenge({ challenge, deriveKey });
  if (!solution) throw new Error('unsolved');
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
}

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64');
}

describe('challenges', () => {
  test('a challenge is signed, expires after 12 hours and records when it was issued', async () => {
    const challenge = await issueChallenge({ secret: SECRET, now: at(NOW) });
    expect(challenge.signature).toMatch(/^[0-9a-f]{64}$/);
    expect(challenge.parameters).toMatchObject({ algorithm: 'SHA-256', cost: 1, keyLength: 32, expiresAt: NOW / 1000 + 43_200, data: { issuedAt: NOW } });
    expect(challenge.parameters.keyPrefix).toMatch(/^[0-9a-f]{32}$/);
    expect(challenge.parameters.keySignature).toMatch(/^[0-9a-f]{64}$/);
  });

  test('two challenges differ', async () => {
    const [a, b] = await Promise.all([issueChallenge({ secret: SECRET }), issueChallenge({ secret: SECRET })]);
    expect(a.parameters.nonce).not.toBe(b.parameters.nonce);
  });

  test('the answer lies below the documented bound', async () => {
    const challenge = await issueChallenge({ secret: SECRET });
    const solution = await solveChallenge({ challenge, deriveKey });
    expect(solution!.counter).toBeLessThanOrEqual(10_000);
  });
});

describe('checking a proof', () => {
  test('a solved challenge is accepted once, with the time it was issued', async () => {
    const used = createMemoryUsedChallenges();
    const payload = await solve(await issueChallenge({ secret: SECRET }));
    const first = await checkProof(payload, used, { secret: SECRET });
    expect(first.ok).toBe(true);
    await expect(checkProof(payload, used, { secret: SECRET })).resolves.toEqual({ ok: false, reason: 'replayed' });
  });

  test('the time it was issued is the challenge’s', async () => {
    const issued = Date.now() - 5_000;
    const payload = await solve(await issueChallenge({ secret: SECRET, now: at(issued) }));
    await expect(checkProof(payload, createMemoryUsedChallenges(), { secret: SECRET })).resolves.toEqual({
      ok: true,
      issuedAt: issued,
      nonce: { id: expect.stringMatching(/^[0-9a-f]+$/), expiresAtMs: expect.any(Number) },
    });
  });

  test.each<[string, unknown]>([
    ['no field', undefined],
    ['an empty field', ''],
    ['a file instead of text', new Blob(['x'])],
  ])('%s is a missing proof', async (_, payload) => {
    await expect(checkProof(payload, createMemoryUsedChallenges(), { secret: SECRET })).resolves.toEqual({ ok: false, reason: 'missing' });
  });

  test.each<[string, string]>([
    ['text that is not base64 JSON', 'not a proof'],
    ['JSON that is not an object', encode(42)],
    ['a challenge without a solution', encode({ challenge: { parameters: { nonce: 'ab', data: { issuedAt: 1 }, expiresAt: 9e9 } } })],
    ['a solution without a challenge', encode({ solution: { counter: 1, derivedKey: 'ab' } })],
    ['a challenge without the time it was issued', encode({ challenge: { parameters: { nonce: 'ab', expiresAt: 9e9 } }, solution: {} })],
    ['a challenge without an expiry', encode({ challenge: { parameters: { nonce: 'ab', data: { issuedAt: 1 } } }, solution: {} })],
  ])('%s is a malformed proof', async (_, payload) => {
    await expect(checkProof(payload, createMemoryUsedChallenges(), { secret: SECRET })).resolves.toEqual({ ok: false, reason: 'malformed' });
  });

  test('a challenge signed with another secret is forged', async () => {
    const payload = await solve(await issueChallenge({ secret: 'another site' }));
    await expect(checkProof(payload, createMemoryUsedChallenges(), { secret: SECRET })).resolves.toEqual({ ok: false, reason: 'forged' });
  });

  test('a challenge whose time was changed is forged', async () => {
    const challenge = await issueChallenge({ secret: SECRET });
    const solution = await solveChallenge({ challenge, deriveKey });
    const earlier = { ...challenge, parameters: { ...challenge.parameters, data: { issuedAt: 1 } } };
    await expect(checkProof(encode({ challenge: earlier, solution }), createMemoryUsedChallenges(), { secret: SECRET })).resolves.toEqual({
      ok: false,
      reason: 'forged',
    });
  });

  test('a wrong answer is wrong, and does not use up the challenge', async () => {
    const used = createMemoryUsedChallenges();
    const challenge = await issueChallenge({ secret: SECRET });
    const solution = await solveChallenge({ challenge, deriveKey });
    const wrong = { counter: solution!.counter + 1, derivedKey: '00'.repeat(32) };
    await expect(checkProof(encode({ challenge, solution: wrong }), used, { secret: SECRET })).resolves.toEqual({ ok: false, reason: 'wrong' });
    await expect(checkProof(encode({ challenge, solution }), used, { secret: SECRET })).resolves.toMatchObject({ ok: true });
  });

  test('a nonce that is not hex is malformed, not a crash', async () => {
    const challenge = await issueChallenge({ secret: SECRET });
    const odd = { ...challenge, parameters: { ...challenge.parameters, nonce: 'zz' } };
    await expect(
      checkProof(encode({ challenge: odd, solution: { counter: 1, derivedKey: 'ab' } }), createMemoryUsedChallenges(), { secret: SECRET }),
    ).resolves.toMatchObject({ ok: false });
  });

  test.each([
    ['one millisecond before its expiry', 43_200_000 - 1, true],
    ['at its expiry', 43_200_000, false],
    ['a day later', 86_400_000, false],
  ])('a proof checked %s is accepted: %s', async (_, after, accepted) => {
    // Whole seconds: a challenge's expiry is counted in seconds (ALTCHA's format).
    const issued = Math.floor(Date.now() / 1000) * 1000 - 1_000;
    const payload = await solve(await issueChallenge({ secret: SECRET, now: at(issued) }));
    const check = await checkProof(payload, createMemoryUsedChallenges(), { secret: SECRET, now: at(issued + after) });
    expect(check).toEqual(
      accepted ? { ok: true, issuedAt: issued, nonce: expect.objectContaining({ id: expect.any(String) }) } : { ok: false, reason: 'expired' },
    );
  });

  test('a challenge past its expiry by the real clock is expired even when the given clock says otherwise', async () => {
    const issued = Date.now() - 43_300_000;
    const payload = await solve(await issueChallenge({ secret: SECRET, now: at(issued) }));
    await expect(checkProof(payload, createMemoryUsedChallenges(), { secret: SECRET, now: at(issued + 1_000) })).resolves.toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  test('a proof issued more than 12 hours ago is expired by the clock too', async () => {
    const payload = await solve(await issueChallenge({ secret: SECRET, now: at(Date.now() - 43_300_000) }));
    await expect(checkProof(payload, createMemoryUsedChallenges(), { secret: SECRET })).resolves.toEqual({ ok: false, reason: 'expired' });
  });
});
