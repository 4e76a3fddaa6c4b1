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
  /** Further columns every give-up sets to the time of the give-up (the signup queue's `done_at`). */
  stampOnGiveUp?: readonly string[];
  /** When a row's round of retries began, as an SQL expression over the row (none: the try's end). */
  roundFrom?: string;
  /** Further columns the write that ends a try answers (the outbox: the owner's request). */
  returning?: string;
};

/** The proof that a row is being tried: the worker that took it and when its lease ends. */
export type Lease = { worker: string; until: string };

/** A lease to write: the worker taking the row and how long it is held from the claim's time. */
export type LeaseFor = { worker: string; ms: number };

/** A row taken: its id, its lease as stored, and its tries so far, this one included. */
export type Taken = { id: number; lease: Lease; attempts: number };

/**
 * A queue's rule for ending a try: how the waits grow, the most tries, and the round, whose end
 * stops the retries either once a try ends after it (`by: 'try'`, the outbox's 24 h from the
 * first try) or once the next try would start after it (`by: 'next'`, the signups' day).
 */
export type QueuePolicy = {
  backoff: Backoff;
  maxAttempts: number;
  /** The jitter's dice (tests pass `() => 0`). */
  random?: (() => number) | undefined;
  round?: { ms: number; by: 'try' | 'next' } | undefined;
  /** The reason a row given up records, from the last try's and whether the round ended (the same reason when absent). */
  gaveUp?: (attempts: number, error: string, overRound: boolean) => string;
};

/**
 * How a try ended, as its queue saw it, with the queue's own columns (`set`, `params`):
 * - `done`: out of the queue its own way (sent, delivered, added, disabled); `set` writes its status.
 * - `failed`: given up now (a refusal that will not change).
 * - `retry`: worth another try; the finish picks when (the backoff, not before `atLeastMs`,
 *   a receiver's Retry-After) or gives up, unless the caller already picked `next`.
 */
export type TryEnd =
  | { kind: 'done'; set: string; params?: readonly SqlValue[] }
  | { kind: 'failed'; error: string; set?: string; params?: readonly SqlValue[] }
  | { kind: 'retry'; error: string; set?: string; params?: readonly SqlValue[]; atLeastMs?: number | undefined; next?: Date | undefined };

/** What a finish wrote: how the row left the try, its tries, the reason kept, the next try, and the columns the queue asked back. */
export type Finished = {
  kind: TryEnd['kind'];
  /** The time of the finish as ISO text: the one passed, or the database's. */
  at: string;
  attempts: number;
  error: string | null;
  next?: Date;
  /** The round had ended (the reason says so when the queue's `gaveUp` does). */
  overRound?: true;
  row: Record<string, unknown>;
};

/** The upkeep's reasons for a give-up: a try that died with its process, or tries that all ended. */
export type GiveUpReasons = { died: string; tried: string };

/** The reason a row at the most tries whose tries all ended records (the most was lowered since, or a caller's own next). */
export const triedReason = (maxAttempts: number) => `gave up: tried as many times as allowed (${maxAttempts})`;

/**
 * The SQL of one queue, run in the caller's transaction so a queue adds its own writes to each step.
 * Every step's `now` is the database's clock when absent (the workers: decision 0270), so that
 * instances whose clocks differ agree on every lease and due time, and the time passed when present
 * (tests move time that way).
 */
export interface LeasedQueue {
  /**
   * Takes the oldest due row no live lease holds, tried fewer than `maxAttempts` times (and that
   * meets `where`), counting the try now: a try that kills the process is counted all the same.
   * Its lease ends `lease.ms` after `now`; the lease answered is the one stored.
   */
  claim(
    tx: SqlSession,
    now: Date | undefined,
    lease: LeaseFor,
    options: { maxAttempts: number; where?: { sql: string; params: SqlValue[] } | undefined },
  ): Promise<Taken | undefined>;
  /**
   * Ends a try under `lease` (none: a row finished without a claim, whose try counts now): every
   * write names the lease, so a worker whose lease ran out changes nothing and gets `undefined`.
   * A retry without its time is decided here: the backoff, or the give-up after the most tries,
   * with no further step, or past the round.
   */
  finish(tx: SqlSession, id: number, lease: Lease | null, end: TryEnd, now: Date | undefined, policy?: QueuePolicy): Promise<Finished | undefined>;
  /**
   * Gives up every row tried `maxAttempts` times that no live lease holds: `reasons.died` when its
   * last try never ended (its process died during it: a poison row, its lease still written),
   * `reasons.tried` when every try ended (the most was lowered since); answers each row's id and
   * reason. Scheduled upkeep (`upkeepJobs`), never part of a claim.
   */
  giveUpDead(tx: SqlSession, now: Date | undefined, maxAttempts: number, reasons: GiveUpReasons): Promise<{ id: number; error: string }[]>;
  /** The condition that the row is still under `lease` (none: a row never taken); every write that ends a try carries it. */
  held(lease: Lease | null): { sql: string; params: SqlValue[] };
  /** The condition of a row a claim at `now` would take: due, tried fewer than `maxAttempts` times, no live lease. */
  due(now: Date | undefined, maxAttempts: number): { sql: string; params: SqlValue[] };
}

/** The queue over `table` on one engine. */
export function createLeasedQueue(engine: 'sqlite' | 'postgresql', table: QueueTable): LeasedQueue {
  // PostgreSQL: the row is locked as it is taken and rows other instances are taking are skipped.
  const skipLocked = engine === 'postgresql' ? 'FOR UPDATE SKIP LOCKED' : '';
  const lockRow = engine === 'postgresql' ? 'FOR UPDATE' : '';
  const isSame = engine === 'postgresql' ? 'IS NOT DISTINCT FROM' : 'IS';
  // On PostgreSQL a value compared with NULL needs its type: lease_until is TIMESTAMPTZ (migration 19).
  const [asTime, asText] = engine === 'postgresql' ? ['::timestamptz', '::text'] : ['', ''];
  // The time of a step: the one passed, else the database's, to the millisecond (ISO text on SQLite, as stored).
  const clock = `COALESCE(?${asTime}, ${databaseNow(engine)})`;
  const time = (now: Date | undefined) => now?.toISOString() ?? null;
  const dueAt = table.dueWhenUnset ? `(next_attempt_at IS NULL OR next_attempt_at <= ${clock})` : `next_attempt_at <= ${clock}`;
  const free = `(lease_until IS NULL OR lease_until <= ${clock})`;
  const takes = table.takes ? ` AND ${table.takes}` : '';
  const due = (now: Date | undefined, maxAttempts: number) => ({
    sql: `status = '${table.waiting}'${takes} AND attempts < ? AND ${dueAt} AND ${free}`,
    params: [maxAttempts, time(now), time(now)],
  });
  // A lease's end: the claim's time plus its length, computed where it is stored.
  const leaseEnd = timeAfter(engine);
  const stamps = (table.stampOnGiveUp ?? []).map((column) => `, ${column} = ${timeText(engine)}`).join('');
  const held = (lease: Lease | null) => ({
    sql: `lease_until ${isSame} ?${asTime} AND leased_by ${isSame} ?${asText}`,
    params: [lease?.until ?? null, lease?.worker ?? null],
  });

  /** A retry whose time the caller left open: the next try's time, or the give-up. */
  async function decide(tx: SqlSession, id: number, lease: Lease | null, end: TryEnd & { kind: 'retry' }, at: Date | undefined, policy: QueuePolicy) {
    const fence = held(lease);
    const from = table.roundFrom ? `, ${table.roundFrom} AS round_from` : '';
    // The arithmetic's "now" is the step's time, read in the same statement: the database's clock in the workers.
    const row = await tx.get<{ attempts: number | string; round_from?: string | Date | null; now: string | Date }>(
      `SELECT attempts${from}, ${clock} AS now FROM ${table.table} WHERE id = ? AND status = '${table.waiting}' AND ${fence.sql} ${lockRow}`,
      [time(at), id, ...fence.params],
    );
    if (!row) return undefined;
    const now = new Date(row.now);
    // A row finished without a claim counts this try now.
    const attempts = Number(row.attempts) + (lease === null ? 1 : 0);
    const wait = backoff(attempts, policy.backoff, policy.random);
    const next = wait === undefined ? undefined : now.getTime() + wait;
    const start = row.round_from ? new Date(row.round_from).getTime() : now.getTime();
    const round = policy.round;
    const overRound = round?.by === 'try' && now.getTime() - start >= round.ms;
    const until = round?.by === 'next' ? start + round.ms : undefined;
    if (overRound || givesUp({ attempts, maxAttempts: policy.maxAttempts, next, until })) {
      const error = policy.gaveUp ? policy.gaveUp(attempts, end.error, overRound) : end.error;
      return { end: { ...end, kind: 'failed', error } satisfies TryEnd, overRound };
    }
    // A row's own wish (a receiver's Retry-After) is honoured, up to the longest wait of the policy.
    const delay = end.atLeastMs === undefined ? wait! : Math.min(Math.max(wait!, end.atLeastMs), longestWait(policy.backoff));
    return { end: { ...end, next: new Date(now.getTime() + delay) } satisfies TryEnd, overRound };
  }

  return {
    async claim(tx, now, lease, { maxAttempts, where }) {
      const which = due(now, maxAttempts);
      const extra = where ? ` AND ${where.sql}` : '';
      // The lease answered is the one stored, so every fenced write names exactly it.
      const row = await tx.get<{ id: number | string; attempts: number | string; lease_until: string | Date }>(
        `UPDATE ${table.table} SET lease_until = ${leaseEnd.sql}, leased_by = ?, attempts = attempts + 1
         WHERE id = (SELECT id FROM ${table.table} WHERE ${which.sql}${extra} ORDER BY next_attempt_at, id LIMIT 1 ${skipLocked})
         RETURNING id, attempts, lease_until`,
        [...leaseEnd.params(now, lease.ms), lease.worker, ...which.params, ...(where?.params ?? [])],
      );
      if (!row) return undefined;
      return { id: Number(row.id), lease: { worker: lease.worker, until: new Date(row.lease_until).toISOString() }, attempts: Number(row.attempts) };
    },

    async finish(tx, id, lease, end, now, policy) {
      let ending: TryEnd = end;
      let overRound = false;
      if (end.kind === 'retry' && end.next === undefined) {
        if (!policy) throw new Error(`a retry on ${table.table} without its time needs the queue's policy`);
        const decided = await decide(tx, id, lease, end, now, policy);
        if (!decided) return undefined;
        ending = decided.end;
        overRound = decided.overRound;
      } else if (end.kind === 'retry' && policy) {
        // A retry that brings its own time is still given up at the most tries: no claim would take it again.
        const fence = held(lease);
        const row = await tx.get<{ attempts: number | string }>(
          `SELECT attempts FROM ${table.table} WHERE id = ? AND status = '${table.waiting}' AND ${fence.sql} ${lockRow}`,
          [id, ...fence.params],
        );
        if (!row) return undefined;
        if (Number(row.attempts) + (lease === null ? 1 : 0) >= policy.maxAttempts) ending = { ...end, kind: 'failed' };
      }
      const more = ending.kind === 'failed' && stamps ? { set: stamps.slice(2), params: (table.stampOnGiveUp ?? []).map(() => time(now)) } : undefined;
      const [set, params]: [string, readonly SqlValue[]] =
        ending.kind === 'done'
          ? [`${ending.set}, next_attempt_at = NULL`, ending.params ?? []]
          : ending.kind === 'failed'
            ? [`status = '${table.failed}', last_error = ?, next_attempt_at = NULL`, [ending.error]]
            : ['last_error = ?, next_attempt_at = ?', [ending.error, ending.next!.toISOString()]];
      const own = ending.kind === 'done' || !ending.set ? '' : `, ${ending.set}`;
      const ownParams = ending.kind === 'done' ? [] : (ending.params ?? []);
      const fence = held(lease);
      // A row finished without a claim (seeded, or by the previous version) counts its try now.
      const counted = lease === null ? ', attempts = attempts + 1' : '';
      const row = await tx.get<Record<string, unknown> & { attempts: number | string; finished_at: string | Date }>(
        `UPDATE ${table.table} SET ${set}${own}${more ? `, ${more.set}` : ''}${counted}, lease_until = NULL, leased_by = NULL
         WHERE id = ? AND status = '${table.waiting}' AND ${fence.sql}
         RETURNING attempts, ${clock} AS finished_at${table.returning ? `, ${table.returning}` : ''}`,
        [...params, ...ownParams, ...(more?.params ?? []), id, ...fence.params, time(now)],
      );
      if (!row) return undefined;
      return {
        kind: ending.kind,
        at: new Date(row.finished_at).toISOString(),
        attempts: Number(row.attempts),
        error: ending.kind === 'done' ? null : ending.error,
        ...(ending.kind === 'retry' && { next: ending.next! }),
        ...(overRound && { overRound: true as const }),
        row,
      };
    },

    async giveUpDead(tx, now, maxAttempts, reasons) {
      // The reason tells a try that died (its worker still written: a lease that ran out, or one a
      // restart ended, machine.ts releaseLeases) from tries that all ended (the most was lowered).
      const rows = await tx.all<{ id: number | string; last_error: string }>(
        `UPDATE ${table.table} SET status = '${table.failed}', last_error = CASE WHEN leased_by IS NOT NULL THEN ? ELSE ? END,
           next_attempt_at = NULL, lease_until = NULL, leased_by = NULL${stamps}
         WHERE status = '${table.waiting}'${takes} AND attempts >= ? AND ${free}
         RETURNING id, last_error`,
        [reasons.died, reasons.tried, ...(table.stampOnGiveUp ?? []).map(() => time(now)), maxAttempts, time(now)],
      );
      return rows.map((row) => ({ id: Number(row.id), error: row.last_error }));
    },

    held,
    due,
  };
}

/** What a worker runs for each row: take one, try it, record how the try ended (and say so in the log). */
export type QueueWork<T, E> = {
  /** Takes the next due row under a lease of `leaseMs` from `now` (none: the database's clock), or none. */
  claim(now: Date | undefined, leaseMs: number): Promise<T | undefined>;
  /** The queue's own try: the mail, the webhook's POST, the provider's call. */
  send(taken: T): Promise<E>;
  /** Records the try's end under its lease (the queue's fenced `finish`), and logs it. */
  finish(taken: T, end: E): Promise<void>;
};

/**
 * The claim → try → finish loop every queue runs: one row at a time, each under a lease of
 * `leaseMs`, until none is due. Checked before each: a stop lets the try under way end, no more.
 * Without a `clock` (the workers), each claim reads the database's clock.
 */
export async function drain<T, E>(
  signal: AbortSignal,
  work: QueueWork<T, E>,
  { leaseMs, clock }: { leaseMs: number; clock?: (() => Date) | undefined },
): Promise<void> {
  while (!signal.aborted) {
    const taken = await work.claim(clock?.(), leaseMs);
    if (!taken) return;
    await work.finish(taken, await work.send(taken));
  }
}

/** The longest wait of a policy: its cap, or its schedule's last step. */
function longestWait(policy: Backoff): number {
  return 'schedule' in policy ? policy.schedule.at(-1)! : policy.maxMs;
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

/**
 * The lease a claim at `now` writes: `until` a time (tests: `now` must then be one too) or a
 * length in milliseconds (the workers, from the database's clock when `now` is absent).
 */
export function leaseFor(now: Date | undefined, until: Date | number, worker: string = WORKER_ID): LeaseFor {
  if (typeof until === 'number') return { worker, ms: until };
  if (!now) throw new Error('a lease ending at a given time needs the time of its claim');
  return { worker, ms: until.getTime() - now.getTime() };
}

/**
 * An SQL expression of one parameter: the time passed, else the database's, as the ISO text the
 * record columns hold on both engines (`sent_at`, `done_at`: TEXT on PostgreSQL too).
 */
export function timeText(engine: 'sqlite' | 'postgresql'): string {
  return engine === 'postgresql'
    ? `to_char(COALESCE(?::timestamptz, now()) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    : `COALESCE(?, ${databaseNow(engine)})`;
}

/**
 * An SQL expression for a due time or a lease's end `ms` after a step's time (the one passed,
 * else the database's), computed where it is stored; `params` gives its two parameters.
 */
export function timeAfter(engine: 'sqlite' | 'postgresql'): { sql: string; params: (now: Date | undefined, ms: number) => SqlValue[] } {
  const time = (now: Date | undefined) => now?.toISOString() ?? null;
  return engine === 'postgresql'
    ? { sql: `COALESCE(?::timestamptz, ${databaseNow(engine)}) + ?::double precision * interval '1 millisecond'`, params: (now, ms) => [time(now), ms] }
    : { sql: `strftime('%Y-%m-%dT%H:%M:%fZ', COALESCE(?, ${databaseNow(engine)}), ?)`, params: (now, ms) => [time(now), `+${ms / 1000} seconds`] };
}

/** The database's clock to the millisecond, as the queue's times are stored (TIMESTAMPTZ on PostgreSQL, ISO text on SQLite). */
export function databaseNow(engine: 'sqlite' | 'postgresql'): string {
  return engine === 'postgresql' ? "date_trunc('milliseconds', now())" : "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";
}
