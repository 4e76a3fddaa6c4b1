import { createHash } from 'node:crypto';
import type { Sql } from '../sql/sql.ts';

/** What a passkey ceremony's challenge was made for: signing in, or adding a passkey to a person. */
export type ChallengePurpose = 'authenticate' | 'register';

/** How long a challenge can be answered: the ceremony's own timeout (the browser's prompt). */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

/**
 * Whom a registration's challenge belongs to: the person and the session that asked for it
 * (the SHA-256 of its token, as the sessions' table keeps it). A sign-in's belongs to nobody.
 */
export type ChallengeOwner = { userId: number; sessionHash: string };

/** The challenges of the passkey ceremonies, kept in the database so that every instance can consume them. */
export interface Challenges {
  /** Keeps a challenge just handed to a browser (base64url, as the library makes it), for 5 minutes. */
  issue(challenge: string, purpose: ChallengePurpose, owner: ChallengeOwner | undefined, now: Date): Promise<void>;
  /**
   * Whether this challenge was issued for this purpose (and, for a registration, this person and
   * session) and had not expired, consuming it: true once, on every instance, however many
   * answers race for it.
   */
  consume(challenge: string, purpose: ChallengePurpose, owner: ChallengeOwner | undefined, now: Date): Promise<boolean>;
  /** Deletes the expired challenges nobody answered; answers how many. */
  sweep(now: Date): Promise<number>;
}

/** The stored form of a challenge: its SHA-256 in hex (a copy of the table answers no ceremony). */
export function hashChallenge(challenge: string): string {
  return createHash('sha256').update(challenge).digest('hex');
}

/**
 * The challenges in table `admin_webauthn_challenges`. Hint: consuming is one conditional
 * `DELETE` whose `changes` says who won, so two answers to one challenge (two tabs, two
 * instances, a replay) succeed once on both engines, with no transaction and no lock.
 */
export function createChallenges(sql: Sql): Challenges {
  return {
    async issue(challenge, purpose, owner, now) {
      await sql.run('INSERT INTO admin_webauthn_challenges (challenge_hash, purpose, user_id, session_hash, expires_at) VALUES (?, ?, ?, ?, ?)', [
        hashChallenge(challenge),
        purpose,
        owner?.userId ?? null,
        owner?.sessionHash ?? null,
        new Date(now.getTime() + CHALLENGE_TTL_MS).toISOString(),
      ]);
    },
    async consume(challenge, purpose, owner, now) {
      // A sign-in's challenge has no person; a registration's is its person's and session's only.
      const whose = owner ? 'user_id = ? AND session_hash = ?' : 'user_id IS NULL AND session_hash IS NULL';
      const { changes } = await sql.run(`DELETE FROM admin_webauthn_challenges WHERE challenge_hash = ? AND purpose = ? AND expires_at > ? AND ${whose}`, [
        hashChallenge(challenge),
        purpose,
        now.toISOString(),
        ...(owner ? [owner.userId, owner.sessionHash] : []),
      ]);
      return changes === 1;
    },
    async sweep(now) {
      const { changes } = await sql.run('DELETE FROM admin_webauthn_challenges WHERE expires_at <= ?', [now.toISOString()]);
      return changes;
    },
  };
}
