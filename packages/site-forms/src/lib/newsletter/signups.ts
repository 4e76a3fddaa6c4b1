import type { Sql } from '../sql/sql.ts';
import {
  createLeasedQueue,
  DEFAULT_MAX_ATTEMPTS,
  type Lease,
  type QueuePolicy,
  type TryEnd,
  databaseNow,
  timeAfter,
  timeText,
  triedReason,
  WORKER_ID,
  leaseFor,
} from '../queue/queue.ts';
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
  enqueue(email: string, provider: string, now?: Date): Promise<number>;
  /** Takes the oldest due signup no live lease holds, until `leaseUntil`, counting the try (one tried too often with no end is left to the upkeep). */
  claim(now: Date | undefined, leaseUntil: Date | number): Promise<{ signup: Signup; lease: Lease } | undefined>;
  /** Scheduled upkeep: gives up each signup whose every try died with its process; answers their ids. */
  upkeep(now?: Date): Promise<number[]>;
  /** Records a try's outcome under its lease: added, tried again later, or given up; answers the new status, or `undefined` when the lease was lost. */
  finish(id: number, lease: Lease, outcome: SubscribeOutcome, now?: Date): Promise<SignupStatus | undefined>;
  /** Tries a failed signup again with a fresh day (the owner's "Retry"); answers whether it changed. */
  retry(id: number, now?: Date): Promise<boolean>;
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
    stampOnGiveUp: ['done_at'],
    // A signup's day runs from when it was stored (or retried by the owner).
    roundFrom: 'created_at',
  });
  // Doubling from the first wait up to an hour, within the day: the queue's fenced finish decides.
  const policy: QueuePolicy = {
    backoff: { baseMs: retryBaseMs, maxMs: SIGNUP_RETRY_MAX_MS },
    maxAttempts,
    random,
    round: { ms: SIGNUP_TRY_FOR_MS, by: 'next' },
  };
  return {
    async enqueue(email, provider, now) {
      // Due one first wait after it is stored, both on the queue's clock (decision 0270): its day is judged from `created_at` there.
      const due = timeAfter(sql.engine);
      const row = await sql.get<{ id: number | string }>(
        `INSERT INTO signup_queue (email, provider, status, attempts, next_attempt_at, created_at) VALUES (?, ?, 'waiting', 0, ${due.sql}, ${timeText(sql.engine)}) RETURNING id`,
        [email, provider, ...due.params(now, retryBaseMs), now?.toISOString() ?? null],
      );
      return Number(row!.id);
    },

    upkeep: (now) =>
      // A signup whose tries all ended with their process (a poison one) waits for the owner, not for a crash loop.
      sql.transaction(async (tx) => {
        const given = await queue.giveUpDead(tx, now, maxAttempts, {
          died: `gave up after ${maxAttempts} tries that never ended`,
          tried: triedReason(maxAttempts),
        });
        return given.map(({ id }) => id);
      }),

    claim: (now, until) =>
      sql.transaction(async (tx) => {
        const taken = await queue.claim(tx, now, leaseFor(now, until, worker), { maxAttempts });
        if (!taken) return undefined;
        const row = await tx.get<Row>('SELECT id, email, provider, status, attempts, next_attempt_at, last_error, created_at FROM signup_queue WHERE id = ?', [
          taken.id,
        ]);
        return row ? { signup: toSignup(row), lease: taken.lease } : undefined;
      }),

    finish: (id, lease, outcome, now) =>
      sql.transaction(async (tx) => {
        const at = now?.toISOString() ?? null;
        const error = outcome.ok ? '' : `${outcome.reason}: ${outcome.detail}`.slice(0, 200);
        // The provider is busy or down, or the owner's key is wrong: worth another try, for a day.
        const passing = !outcome.ok && (outcome.reason === 'unavailable' || outcome.reason === 'misconfigured');
        const end: TryEnd = outcome.ok
          ? { kind: 'done', set: `status = 'added', last_error = NULL, done_at = ${timeText(sql.engine)}`, params: [at] }
          : passing
            ? { kind: 'retry', error }
            : { kind: 'failed', error };
        // Every write names the lease: what another worker did meanwhile is never overwritten.
        const finished = await queue.finish(tx, id, lease, end, now, policy);
        if (!finished) return undefined;
        return finished.kind === 'done' ? 'added' : finished.kind === 'retry' ? 'waiting' : 'failed';
      }),

    async retry(id, now) {
      // A fresh day from now on the queue's clock, due at once there.
      const at = now?.toISOString() ?? null;
      const { changes } = await sql.run(
        `UPDATE signup_queue SET status = 'waiting', attempts = 0, next_attempt_at = COALESCE(?${sql.engine === 'postgresql' ? '::timestamptz' : ''}, ${databaseNow(sql.engine)}),
           created_at = ${timeText(sql.engine)}, lease_until = NULL, leased_by = NULL, done_at = NULL WHERE id = ? AND status = 'failed'`,
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
      const row = await sql.get<{ at: string | null }>(`SELECT min(next_attempt_at) AS at FROM signup_queue WHERE status = 'waiting' AND attempts < ?`, [
        maxAttempts,
      ]);
      return row?.at ? new Date(row.at) : undefined;
    },
  };
}
