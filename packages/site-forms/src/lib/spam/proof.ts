import { createHmac, randomInt } from 'node:crypto';
import { type Challenge, createChallenge, type Solution, verifySolution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import type { UsedChallenges } from './used-challenges.ts';

// The field's name is one of the reserved ones a form's field may not take: it lives with them.
export { PROOF_FIELD } from '../forms/reserved.ts';

/**
 * How hard and how long-lived a challenge is.
 * Hint: in ALTCHA's deterministic mode the server picks the answer at random below
 * `maxCounter`, so a solver tries `maxCounter / 2` hashes on average and never more than
 * `maxCounter`; 10,000 single SHA-256 hashes take about 0.1 s in Chromium on this machine
 * (decision 0091), and the script starts while the visitor is still typing.
 */
export const PROOF_SETTINGS = { algorithm: 'SHA-256', cost: 1, maxCounter: 10_000, ttlMs: 12 * 3600 * 1000 } as const;

/** Why a proof was not accepted, each a reason of the verdict. */
export type ProofFailure = 'missing' | 'malformed' | 'expired' | 'forged' | 'wrong' | 'replayed';

/** The answer of `checkProof`: when the challenge was issued, or why the proof fails. */
/** A proof's challenge, to record as used: its nonce and until when the proof could be replayed. */
export type ProofNonce = { id: string; expiresAtMs: number };

/** What a proof came to; a good one carries its nonce, for the store to consume. */
export type ProofCheck = { ok: true; issuedAt: number; nonce: ProofNonce } | { ok: false; reason: ProofFailure };

/** Which secret signs the challenges, and when "now" is (tests pass a clock). */
export type ProofOptions = { secret: string; now?: () => number };

/**
 * Issues a signed challenge that expires after `PROOF_SETTINGS.ttlMs` and records when it
 * was issued, so the verdict can tell a form filled in faster than a person could.
 */
export async function issueChallenge({ secret, now = Date.now }: ProofOptions): Promise<Challenge> {
  const issuedAt = now();
  return createChallenge({
    algorithm: PROOF_SETTINGS.algorithm,
    cost: PROOF_SETTINGS.cost,
    counter: randomInt(0, PROOF_SETTINGS.maxCounter + 1),
    deriveKey,
    data: { issuedAt },
    expiresAt: new Date(issuedAt + PROOF_SETTINGS.ttlMs),
    hmacSignatureSecret: secret,
    hmacKeySignatureSecret: keySecret(secret),
  });
}

/**
 * Checks a proof as the form sent it (ALTCHA's base64 JSON of `{ challenge, solution }`):
 * signature, expiry, solution, and finally, given `used`, that its challenge was not used before.
 * Hint: a challenge is recorded as used only once everything else holds, so forged or
 * wrong proofs cannot fill the record. Without `used`, the caller consumes the nonce in the
 * transaction that stores what the proof vouches for, so a failed save leaves it usable.
 */
export async function checkProof(payload: unknown, used: UsedChallenges | undefined, { secret, now = Date.now }: ProofOptions): Promise<ProofCheck> {
  if (typeof payload !== 'string' || payload === '') return fail('missing');
  const decoded = decode(payload);
  if (!decoded) return fail('malformed');
  const { challenge, solution, issuedAt, expiresAt } = decoded;
  if (expiresAt * 1000 <= now()) return fail('expired');

  let result: Awaited<ReturnType<typeof verifySolution>>;
  try {
    result = await verifySolution({ challenge, solution, deriveKey, hmacSignatureSecret: secret, hmacKeySignatureSecret: keySecret(secret) });
  } catch {
    // altcha-lib throws on parameters it cannot read (a nonce that is not hex, say).
    return fail('malformed');
  }
  if (result.expired) return fail('expired');
  if (result.invalidSignature) return fail('forged');
  if (!result.verified) return fail('wrong');
  const nonce = { id: challenge.parameters.nonce, expiresAtMs: expiresAt * 1000 };
  // Consumed by the caller's own transaction (a contact message is stored with it), or here.
  if (used && !(await used.claim(nonce.id, nonce.expiresAtMs))) return fail('replayed');
  return { ok: true, issuedAt, nonce };
}

/** The second secret, for the derived key's signature: one setting, two keys that differ. */
function keySecret(secret: string): string {
  return createHmac('sha256', secret).update('altcha-key-signature').digest('hex');
}

type Decoded = { challenge: Challenge; solution: Solution; issuedAt: number; expiresAt: number };

function decode(payload: string): Decoded | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payload, 'base64').toString('utf8'));
  } catch {
    return undefined;
  }
  const { challenge, solution } = (value ?? {}) as { challenge?: Challenge; solution?: Solution };
  const parameters = challenge?.parameters;
  if (!parameters || typeof parameters !== 'object' || typeof parameters.nonce !== 'string') return undefined;
  if (!solution || typeof solution !== 'object') return undefined;
  const issuedAt = parameters.data?.issuedAt;
  const expiresAt = parameters.expiresAt;
  // A challenge of ours always carries both; the signature check below proves they are ours.
  if (typeof issuedAt !== 'number' || typeof expiresAt !== 'number') return undefined;
  return { challenge, solution, issuedAt, expiresAt };
}

function fail(reason: ProofFailure): ProofCheck {
  return { ok: false, reason };
}
