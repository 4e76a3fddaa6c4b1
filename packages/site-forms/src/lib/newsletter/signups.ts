import type { Sql, SqlValue } from '../sql/sql.ts';
import { backoff, createLeasedQueue, DEFAULT_MAX_ATTEMPTS, givesUp, type Lease, leaseUntil, WORKER_ID } from '../queue/queue.ts';
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
  /** Takes the oldest due signup no live lease holds, until `leaseUntil`, counting the try (a signup tried too often with no end is given up first). */
  claim(now: Date, leaseUntil: Date): Promise<{ signup: Signup; lease: Lease } | undefined>;
  /** Records a try's outcome under its lease: added, tried again later, or given up; answers the new status, or `undefined` when the lease was lost. */
  finish(id: number, lease: Lease, outcome: SubscribeOutcome, now: Date): Promise<SignupStatus | undefined>;
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

/** What the signup queue may be told: the first wait, the most tries, and (for tests) the worker and the jitter's dice. */
export type SignupOptions = { retryBaseMs?: number; maxAttempts?: number; worker?: string; random?: () => number };

/** The signup queue over the store's SQL (SQLite or PostgreSQL), on the one leased queue (queue/queue.ts). */
export function createSignups(
  sql: Sql,
  { retryBaseMs = SIGNUP_RETRY_BASE_MS, maxAttempts = DEFAULT_MAX_ATTEMPTS, worker = WORKER_ID, random = Math.random }: SignupOptions = {},
): Signups {
  const queue = createLeasedQueue(sql.engine, {
    table: 'signup_queue',
    waiting: 'waiting',
    failed: 'failed',
    onGiveUp: (at) => ({ set: 'done_at = ?', params: [at] }),
  });
  // PostgreSQL: the row stays as read until the try's end is written.
  const lockRow = sql.engine === 'postgresql' ? 'FOR UPDATE' : '';
  return {
    async enqueue(email, provider, now) {
      const at = now.toISOString();
      const row = await sql.get<{ id: number | string }>(
        `INSERT INTO signup_queue (email, provider, status, attempts, next_attempt_at, created_at) VALUES (?, ?, 'waiting', 0, ?, ?) RETURNING id`,
        [email, provider, new Date(now.getTime() + retryBaseMs).toISOString(), at],
      );
      return Number(row!.id);
    },

    claim: (now, until) =>
      sql.transaction(async (tx) => {
        // A signup whose tries all ended with their process (a poison one) waits for the owner, not for a crash loop.
        await queue.giveUpDead(tx, now, maxAttempts, `gave up after ${maxAttempts} tries that never ended`);
        const taken = await queue.claim(tx, now, leaseUntil(until, worker));
        if (!taken) return undefined;
        const row = await tx.get<Row>('SELECT id, email, provider, status, attempts, next_attempt_at, last_error, created_at FROM signup_queue WHERE id = ?', [
          taken.id,
        ]);
        return row ? { signup: toSignup(row), lease: taken.lease } : undefined;
      }),

    finish: (id, lease, outcome, now) =>
      sql.transaction(async (tx) => {
        const held = queue.held(lease);
        const row = await tx.get<{ attempts: number | string; created_at: string }>(
          `SELECT attempts, created_at FROM signup_queue WHERE id = ? AND status = 'waiting' AND ${held.sql} ${lockRow}`,
          [id, ...held.params],
        );
        // The lease ran out and another worker took the signup: its own outcome will be recorded.
        if (!row) return undefined;
        const attempts = Number(row.attempts);
        const at = now.toISOString();
        // Every write names the lease: what another worker did meanwhile is never overwritten.
        const end = async (set: string, params: SqlValue[]) =>
          (
            await tx.run(`UPDATE signup_queue SET ${set}, lease_until = NULL, leased_by = NULL WHERE id = ? AND status = 'waiting' AND ${held.sql}`, [
              ...params,
              id,
              ...held.params,
            ])
          ).changes === 1;
        if (outcome.ok) return (await end(`status = 'added', last_error = NULL, next_attempt_at = NULL, done_at = ?`, [at])) ? 'added' : undefined;
        // The provider is busy or down, or the owner's key is wrong: worth another try, for a day.
        const passing = outcome.reason === 'unavailable' || outcome.reason === 'misconfigured';
        const wait = backoff(attempts, { baseMs: retryBaseMs, maxMs: SIGNUP_RETRY_MAX_MS }, random);
        const next = wait === undefined ? undefined : now.getTime() + wait;
        const error = `${outcome.reason}: ${outcome.detail}`.slice(0, 200);
        if (!passing || next === undefined || givesUp({ attempts, maxAttempts, next, until: Date.parse(row.created_at) + SIGNUP_TRY_FOR_MS })) {
          return (await end(`status = 'failed', last_error = ?, next_attempt_at = NULL, done_at = ?`, [error, at])) ? 'failed' : undefined;
        }
        return (await end('last_error = ?, next_attempt_at = ?', [error, new Date(next).toISOString()])) ? 'waiting' : undefined;
      }),

    async retry(id, now) {
      const at = now.toISOString();
      const { changes } = await sql.run(
        `UPDATE signup_queue SET status = 'waiting', attempts = 0, next_attempt_at = ?, created_at = ?, lease_until = NULL, leased_by = NULL, done_at = NULL WHERE id = ? AND status = 'failed'`,
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
