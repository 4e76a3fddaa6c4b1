import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { SqlSession, SqlValue } from '../sql/sql.ts';

/**
 * The one leased queue under the outbox, the webhook deliveries and the signup queue
 * (decision 0160): a thin layer of SQL over a table that has the columns `id`, `status`,
 * `attempts`, `next_attempt_at`, `lease_until` and `leased_by`.
 * Hint: modelled on graphile-worker (`getJobs`, `failJobs`) and pg-boss: a row is taken with
 * `FOR UPDATE SKIP LOCKED` on PostgreSQL (SQLite has one writer), its try is counted as it is
 * taken, so a try that kills the process still counts, and every write that ends a try names
 * the lease it ends, so a worker whose lease ran out changes nothing.
 */

/** This process as a worker: host, process id and a random part, since a process id is reused after a restart. */
export const WORKER_ID = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/** How many times a row is tried in a round unless DELIVERY_MAX_ATTEMPTS says otherwise (decision 0160). */
export const DEFAULT_MAX_ATTEMPTS = 40;

/** A table the queue works on: its name, the status of a row waiting its turn (or being tried), and the one of a row given up on. */
export type QueueTable = {
  table: string;
  waiting: string;
  failed: string;
  /** An extra condition a row must meet to be taken (the outbox: no request of the owner's on it). */
  takes?: string;
  /** Whether a row without `next_attempt_at` is due (the outbox's messages stored before it had one). */
  dueWhenUnset?: boolean;
  /** Further columns the give-up writes, as `column = value` SQL (the signup queue's `done_at`). */
  onGiveUp?: (at: string) => { set: string; params: SqlValue[] };
};

/** The proof that a row is being tried: the worker that took it and when its lease ends. */
export type Lease = { worker: string; until: string };

/** A row taken: its id, its lease, and its tries so far, this one included. */
export type Taken = { id: number; lease: Lease; attempts: number };

/** The SQL of one queue, run in the caller's transaction so a queue adds its own writes to each step. */
export interface LeasedQueue {
  /**
   * Takes the oldest due row no live lease holds (and that meets `where`), counting the try now:
   * a try that kills the process is counted all the same.
   */
  claim(tx: SqlSession, now: Date, lease: Lease, where?: { sql: string; params: SqlValue[] }): Promise<Taken | undefined>;
  /**
   * Gives up every due row tried `maxAttempts` times whose last try never ended (its process
   * died during it: a poison row), with `error` as the reason; answers their ids.
   */
  giveUpDead(tx: SqlSession, now: Date, maxAttempts: number, error: string): Promise<number[]>;
  /** The condition that the row is still under `lease` (none: a row never taken); every write that ends a try carries it. */
  held(lease: Lease | null): { sql: string; params: SqlValue[] };
  /** The condition of a row due at `now` that no live lease holds, for the queries that count or list them. */
  due(now: Date): { sql: string; params: SqlValue[] };
}

/** The queue over `table` on one engine. */
export function createLeasedQueue(engine: 'sqlite' | 'postgresql', table: QueueTable): LeasedQueue {
  // PostgreSQL: the row is locked as it is taken and rows other instances are taking are skipped.
  const skipLocked = engine === 'postgresql' ? 'FOR UPDATE SKIP LOCKED' : '';
  const isSame = engine === 'postgresql' ? 'IS NOT DISTINCT FROM' : 'IS';
  // On PostgreSQL a value compared with NULL needs its type: lease_until is TIMESTAMPTZ (migration 19).
  const [asTime, asText] = engine === 'postgresql' ? ['::timestamptz', '::text'] : ['', ''];
  const dueAt = table.dueWhenUnset ? '(next_attempt_at IS NULL OR next_attempt_at <= ?)' : 'next_attempt_at <= ?';
  const free = '(lease_until IS NULL OR lease_until <= ?)';
  const takes = table.takes ? ` AND ${table.takes}` : '';
  const due = (now: Date) => ({ sql: `status = '${table.waiting}'${takes} AND ${dueAt} AND ${free}`, params: [now.toISOString(), now.toISOString()] });

  return {
    async claim(tx, now, lease, where) {
      const which = due(now);
      const extra = where ? ` AND ${where.sql}` : '';
      const row = await tx.get<{ id: number | string; attempts: number | string }>(
        `UPDATE ${table.table} SET lease_until = ?, leased_by = ?, attempts = attempts + 1
         WHERE id = (SELECT id FROM ${table.table} WHERE ${which.sql}${extra} ORDER BY next_attempt_at, id LIMIT 1 ${skipLocked})
         RETURNING id, attempts`,
        [lease.until, lease.worker, ...which.params, ...(where?.params ?? [])],
      );
      return row ? { id: Number(row.id), lease, attempts: Number(row.attempts) } : undefined;
    },

    async giveUpDead(tx, now, maxAttempts, error) {
      const at = now.toISOString();
      const more = table.onGiveUp?.(at);
      const rows = await tx.all<{ id: number | string }>(
        `UPDATE ${table.table} SET status = '${table.failed}', last_error = ?, next_attempt_at = NULL, lease_until = NULL, leased_by = NULL${more ? `, ${more.set}` : ''}
         WHERE status = '${table.waiting}'${takes} AND attempts >= ? AND ${free}
         RETURNING id`,
        [error, ...(more?.params ?? []), maxAttempts, at],
      );
      return rows.map((row) => Number(row.id));
    },

    held: (lease) => ({ sql: `lease_until ${isSame} ?${asTime} AND leased_by ${isSame} ?${asText}`, params: [lease?.until ?? null, lease?.worker ?? null] }),
    due,
  };
}

/** How the waits between tries grow: doubling from `baseMs` up to `maxMs`, or a fixed schedule (the tries' waits in order). */
export type Backoff = { baseMs: number; maxMs: number } | { schedule: readonly number[] };

/** The share of a wait that is taken off at random, so that rows failed together are not tried together again. */
export const JITTER = 0.1;

/**
 * The wait before the next try after `attempts` tries, less up to a tenth at random (`random`
 * is there for tests), or `undefined` when a schedule has no further step.
 */
export function backoff(attempts: number, policy: Backoff, random: () => number = Math.random): number | undefined {
  const full = 'schedule' in policy ? policy.schedule[attempts] : Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempts - 1));
  return full === undefined ? undefined : Math.round(full * (1 - JITTER * random()));
}

/**
 * The give-up rule every queue follows: a row is given up after `maxAttempts` tries, or when
 * its next try would fall after `until` (the end of its round, if it has one).
 */
export function givesUp({ attempts, maxAttempts, next, until }: { attempts: number; maxAttempts: number; next: number | undefined; until?: number }): boolean {
  return attempts >= maxAttempts || next === undefined || (until !== undefined && next > until);
}

/** A lease for this process's worker (or `worker`, in tests) ending at `until`. */
export function leaseUntil(until: Date, worker: string = WORKER_ID): Lease {
  return { worker, until: until.toISOString() };
}
