import type { Sql } from '../store/sql.ts';
import type { SubscribeOutcome } from './provider.ts';

/** How long a signup is tried before it is given up (the owner can still retry it). */
export const SIGNUP_TRY_FOR_MS = 24 * 3600 * 1000;

/** The wait after the first failed try, doubling up to an hour (`DELIVERY_RETRY_BASE_MS` sets another). */
export const SIGNUP_RETRY_BASE_MS = 60_000;
const SIGNUP_RETRY_MAX_MS = 3600_000;

/** A signup's state: waiting for the provider (or being sent, under a lease), added, or given up. */
export type SignupStatus = 'waiting' | 'added' | 'failed';

/** A signup the provider could not take at once. */
export type Signup = {
  id: number;
  email: string;
  provider: string;
  status: SignupStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  createdAt: string;
};

/**
 * The only writer of the signup queue: a signup stored when the provider was busy or down,
 * taken under a lease by one instance at a time, and ended by each try's outcome.
 */
export interface Signups {
  /** Stores a signup to try again soon; answers its id. */
  enqueue(email: string, provider: string, now: Date): Promise<number>;
  /** Takes the oldest due signup no live lease holds, until `leaseUntil`. */
  claim(now: Date, leaseUntil: Date): Promise<{ signup: Signup; lease: string } | undefined>;
  /** Records a try's outcome under its lease: added, tried again later, or given up; answers the new status. */
  finish(id: number, lease: string, outcome: SubscribeOutcome, now: Date): Promise<SignupStatus | undefined>;
  /** Tries a failed signup again with a fresh day (the owner's "Retry"); answers whether it changed. */
  retry(id: number, now: Date): Promise<boolean>;
  /** The signups waiting or given up, newest first. */
  pending(limit: number): Promise<Signup[]>;
  /** When the next waiting signup is due, if any. */
  nextDueAt(): Promise<Date | undefined>;
}

type Row = {
  id: number | string;
  email: string;
  provider: string;
  status: SignupStatus;
  attempts: number | string;
  next_attempt_at: string | null;
  last_error: string | null;
  created_at: string;
};

const toSignup = (row: Row): Signup => ({
  id: Number(row.id),
  email: row.email,
  provider: row.provider,
  status: row.status,
  attempts: Number(row.attempts),
  nextAttemptAt: row.next_attempt_at,
  lastError: row.last_error,
  createdAt: row.created_at,
});

/** The signup queue over the store's SQL (SQLite or PostgreSQL). */
export function createSignups(sql: Sql, { retryBaseMs = SIGNUP_RETRY_BASE_MS }: { retryBaseMs?: number } = {}): Signups {
  const skipLocked = sql.engine === 'postgresql' ? 'FOR UPDATE SKIP LOCKED' : '';
  return {
    async enqueue(email, provider, now) {
      const at = now.toISOString();
      const row = await sql.get<{ id: number | string }>(
        `INSERT INTO signup_queue (email, provider, status, attempts, next_attempt_at, created_at) VALUES (?, ?, 'waiting', 0, ?, ?) RETURNING id`,
        [email, provider, new Date(now.getTime() + retryBaseMs).toISOString(), at],
      );
      return Number(row!.id);
    },

    claim: (now, leaseUntil) =>
      sql.transaction(async (tx) => {
        const at = now.toISOString();
        const lease = leaseUntil.toISOString();
        const row = await tx.get<Row>(
          `UPDATE signup_queue SET lease_until = ?
           WHERE id = (
             SELECT id FROM signup_queue WHERE status = 'waiting' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
             ORDER BY next_attempt_at, id LIMIT 1 ${skipLocked}
           )
           RETURNING id, email, provider, status, attempts, next_attempt_at, last_error, created_at`,
          [lease, at, at],
        );
        return row ? { signup: toSignup(row), lease } : undefined;
      }),

    finish: (id, lease, outcome, now) =>
      sql.transaction(async (tx) => {
        const row = await tx.get<{ attempts: number | string; created_at: string }>(
          `SELECT attempts, created_at FROM signup_queue WHERE id = ? AND status = 'waiting' AND lease_until = ?`,
          [id, lease],
        );
        if (!row) return undefined;
        const attempts = Number(row.attempts) + 1;
        const at = now.toISOString();
        if (outcome.ok) {
          await tx.run(
            `UPDATE signup_queue SET status = 'added', attempts = ?, last_error = NULL, next_attempt_at = NULL, lease_until = NULL, done_at = ? WHERE id = ?`,
            [attempts, at, id],
          );
          return 'added';
        }
        // The provider is busy or down, or the owner's key is wrong: worth another try, for a day.
        const passing = outcome.reason === 'unavailable' || outcome.reason === 'misconfigured';
        const wait = Math.min(retryBaseMs * 2 ** (attempts - 1), SIGNUP_RETRY_MAX_MS);
        const next = now.getTime() + wait;
        const error = `${outcome.reason}: ${outcome.detail}`.slice(0, 200);
        if (!passing || next - Date.parse(row.created_at) > SIGNUP_TRY_FOR_MS) {
          await tx.run(
            `UPDATE signup_queue SET status = 'failed', attempts = ?, last_error = ?, next_attempt_at = NULL, lease_until = NULL, done_at = ? WHERE id = ?`,
            [attempts, error, at, id],
          );
          return 'failed';
        }
        await tx.run(`UPDATE signup_queue SET attempts = ?, last_error = ?, next_attempt_at = ?, lease_until = NULL WHERE id = ?`, [
          attempts,
          error,
          new Date(next).toISOString(),
          id,
        ]);
        return 'waiting';
      }),

    async retry(id, now) {
      const at = now.toISOString();
      const { changes } = await sql.run(
        `UPDATE signup_queue SET status = 'waiting', attempts = 0, next_attempt_at = ?, created_at = ?, lease_until = NULL, done_at = NULL WHERE id = ? AND status = 'failed'`,
        [at, at, id],
      );
      return changes === 1;
    },

    async pending(limit) {
      const rows = await sql.all<Row>(
        `SELECT id, email, provider, status, attempts, next_attempt_at, last_error, created_at FROM signup_queue WHERE status IN ('waiting', 'failed') ORDER BY id DESC LIMIT ?`,
        [limit],
      );
      return rows.map(toSignup);
    },

    async nextDueAt() {
      const row = await sql.get<{ at: string | null }>(`SELECT min(next_attempt_at) AS at FROM signup_queue WHERE status = 'waiting'`);
      return row?.at ? new Date(row.at) : undefined;
    },
  };
}
