import {
  createLeasedQueue,
  DEFAULT_MAX_ATTEMPTS,
  type Lease,
  type QueuePolicy,
  type TryEnd as QueueEnd,
  databaseNow,
  timeText,
  triedReason,
  WORKER_ID,
  leaseFor,
} from '../queue/queue.ts';
import type { Engine, Sql, SqlSession } from '../sql/sql.ts';
import type { Endpoint } from './endpoints.ts';
import type { EventType, SiteEvent } from './events.ts';

/** The Standard Webhooks schedule: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h after the previous try. */
export const RETRY_SCHEDULE_MS = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000] as const;

/** An event older than this when it is fanned out reaches no endpoint (one was added later). */
const FAN_OUT_WINDOW_MS = 24 * 3600 * 1000;

/** A delivery's state: waiting (or being sent, under a lease), delivered, failed for good, or stopped by a 410. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'disabled';

/** One event on its way to one endpoint. */
export type Delivery = {
  id: number;
  eventId: string;
  type: EventType;
  endpoint: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
};

/** One try of a delivery: when, the receiver's status (none when it was not reached), and why it failed. */
export type DeliveryAttempt = { at: string; status: number | null; error: string | null };

/** How one try ended, as the worker saw it. */
export type TryEnd =
  | { kind: 'delivered'; status: number }
  | { kind: 'retry'; status: number | null; error: string; retryAfterMs?: number | undefined }
  | { kind: 'gone'; status: 410 };

/**
 * The only writer of the webhook tables: fan-out, claims under a lease, each try's end, replays
 * and pruning, each one conditional write that says whether it happened (and `forgetEvents`,
 * which the owner's commands run in their own transaction).
 */
export interface Deliveries {
  /**
   * Turns recorded events into one delivery per endpoint that takes them, due at `now` (the
   * database's clock when absent, as the queue judges it); answers how many were made.
   */
  fanOut(endpoints: readonly Endpoint[], now?: Date): Promise<number>;
  /**
   * Takes the oldest due delivery no live lease holds (to `endpoint` when named), until `leaseUntil`,
   * with its event, counting the try; a delivery whose every try died with its process is left to the upkeep.
   */
  claim(now: Date | undefined, leaseUntil: Date | number, endpoint?: string): Promise<{ delivery: Delivery; event: SiteEvent; lease: Lease } | undefined>;
  /** Scheduled upkeep: fails each delivery whose every try died with its process, its give-up on record; answers their ids. */
  upkeep(now?: Date): Promise<number[]>;
  /** The endpoints that have a delivery due that no live lease holds. */
  dueEndpoints(now?: Date): Promise<string[]>;
  /** Records a try's end under the lease that took it: delivered, retried on the schedule, failed after the last, or disabled by a 410. */
  finish(id: number, lease: Lease, end: TryEnd, now?: Date): Promise<DeliveryStatus | undefined>;
  /**
   * The owner's "Replay": a finished delivery goes again from the start of the schedule, one
   * waiting for its next try goes now; one being sent is left to its try, which ends by `until`.
   */
  replay(id: number, now?: Date): Promise<ReplayOutcome>;
  /** The newest deliveries, for the admin and the inbox command. */
  list(limit: number): Promise<Delivery[]>;
  /** Every try of one delivery, oldest first. */
  attempts(id: number): Promise<DeliveryAttempt[]>;
  /** Deletes events older than `cutoff` with their deliveries and tries, unless one still waits; answers how many. */
  prune(cutoff: Date): Promise<number>;
  /** When the next waiting delivery a claim would take is due, if any: one being sent under a live lease is due when its lease ends. */
  nextDueAt(): Promise<Date | undefined>;
  /** The endpoints a 410 stopped, by name, with the address that answered it. */
  goneEndpoints(): Promise<Map<string, string>>;
  /** Stops an endpoint for good (its receiver answered 410) until its address changes; answers whether it was running. */
  stopEndpoint(name: string, url: string): Promise<boolean>;
}

/** What a replay did: sent again from the start, made due now (it was waiting), left to the try under way, or found nothing. */
export type ReplayOutcome = { kind: 'replayed' } | { kind: 'due'; was: string } | { kind: 'sending'; until: string } | { kind: 'missing' };

const GONE = 'webhook_gone:';

/** Whose news to forget: one contact message (by its id), or one newsletter address (without case). */
export type EventSubject = { message: number } | { address: string };

/**
 * Deletes the events of one message or one address with their deliveries and tries, in the
 * caller's transaction (the owner's "spam" or "delete", an erasure): a waiting delivery or
 * automatic reply is never sent, and no name, address or text is kept (decision 0151).
 * Hint: a delivery being sent meanwhile finds its row gone, so its end records nothing; what a
 * receiver already got stays with it. Answers how many events went.
 */
export async function forgetEvents(tx: SqlSession, engine: Engine, subject: EventSubject): Promise<number> {
  const field = (name: string) => (engine === 'postgresql' ? `(data::json ->> '${name}')` : `json_extract(data, '$.${name}')`);
  const [which, params] =
    'message' in subject
      ? [`type IN ('contact.received', 'contact.held') AND ${field('id')} = ?`, [engine === 'postgresql' ? String(subject.message) : subject.message]]
      : [
          `type IN ('newsletter.subscribed', 'newsletter.confirmed') AND ${engine === 'sqlite' ? 'fold' : 'lower'}(${field('email')}) = ?`,
          [subject.address.toLowerCase()],
        ];
  const events = `SELECT id FROM events WHERE ${which}`;
  await tx.run(`DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE event_id IN (${events}))`, params);
  await tx.run(`DELETE FROM webhook_deliveries WHERE event_id IN (${events})`, params);
  return (await tx.run(`DELETE FROM events WHERE ${which}`, params)).changes;
}

type Row = {
  id: number | string;
  event_id: string;
  type: EventType;
  endpoint: string;
  status: DeliveryStatus;
  attempts: number | string;
  next_attempt_at: string | null;
  last_status: number | string | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
};

const COLUMNS = `d.id, d.event_id, e.type, d.endpoint, d.status, d.attempts, d.next_attempt_at, d.last_status, d.last_error, d.created_at, d.delivered_at`;

/** What the deliveries may be told: the most tries (DELIVERY_MAX_ATTEMPTS), and for tests the worker and the jitter's dice. */
export type DeliveriesOptions = { maxAttempts?: number; worker?: string; random?: () => number };

/** The deliveries over the store's SQL (SQLite or PostgreSQL), on the one leased queue (queue/queue.ts). */
export function createDeliveries(
  sql: Sql,
  { maxAttempts = DEFAULT_MAX_ATTEMPTS, worker = WORKER_ID, random = Math.random }: DeliveriesOptions = {},
): Deliveries {
  const skipLocked = sql.engine === 'postgresql' ? 'FOR UPDATE SKIP LOCKED' : '';
  const lockRow = sql.engine === 'postgresql' ? 'FOR UPDATE' : '';
  const queue = createLeasedQueue(sql.engine, { table: 'webhook_deliveries', waiting: 'pending', failed: 'failed' });
  // The Standard Webhooks schedule, within the one limit of tries every queue keeps.
  const policy: QueuePolicy = { backoff: { schedule: RETRY_SCHEDULE_MS }, maxAttempts, random };
  // The time of a step: the one passed (tests), else the database's, as the queue's (decision 0270).
  const clock = `COALESCE(?${sql.engine === 'postgresql' ? '::timestamptz' : ''}, ${databaseNow(sql.engine)})`;
  const time = (now: Date | undefined) => now?.toISOString() ?? null;
  const toDelivery = (row: Row): Delivery => ({
    id: Number(row.id),
    eventId: row.event_id,
    type: row.type,
    endpoint: row.endpoint,
    status: row.status,
    attempts: Number(row.attempts),
    nextAttemptAt: row.next_attempt_at,
    lastStatus: row.last_status === null ? null : Number(row.last_status),
    lastError: row.last_error,
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
  });
  return {
    fanOut: (endpoints, now) =>
      sql.transaction(async (tx) => {
        const events = await tx.all<{ id: string; type: EventType; created_at: string }>(
          `SELECT id, type, created_at FROM events WHERE dispatched_at IS NULL ORDER BY created_at LIMIT 200 ${skipLocked}`,
        );
        // Records (when made, when dispatched) on the process's clock, as the events' own times;
        // the due time on the queue's, so an instance whose clock runs fast does not delay them (decision 0270).
        const recorded = now ?? new Date();
        const at = recorded.toISOString();
        const oldest = new Date(recorded.getTime() - FAN_OUT_WINDOW_MS).toISOString();
        let made = 0;
        for (const event of events) {
          if (event.created_at >= oldest) {
            for (const endpoint of endpoints.filter((e) => e.events.includes(event.type))) {
              const { changes } = await tx.run(
                `INSERT INTO webhook_deliveries (event_id, endpoint, status, attempts, next_attempt_at, created_at)
                 VALUES (?, ?, 'pending', 0, ${clock}, ?) ON CONFLICT (event_id, endpoint) DO NOTHING`,
                [event.id, endpoint.name, time(now), at],
              );
              made += changes;
            }
          }
          await tx.run('UPDATE events SET dispatched_at = ? WHERE id = ? AND dispatched_at IS NULL', [at, event.id]);
        }
        return made;
      }),

    upkeep: (now) =>
      sql.transaction(async (tx) => {
        // A delivery whose every try ended with its process (a poison one) waits for the owner's replay.
        const given = await queue.giveUpDead(tx, now, maxAttempts, {
          died: `gave up after ${maxAttempts} tries that never ended`,
          tried: triedReason(maxAttempts),
        });
        for (const { id, error } of given) {
          await tx.run('INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, error) VALUES (?, ?, NULL, ?)', [
            id,
            (now ?? new Date()).toISOString(),
            error,
          ]);
        }
        return given.map(({ id }) => id);
      }),

    claim: (now, until, endpoint) =>
      sql.transaction(async (tx) => {
        const taken = await queue.claim(tx, now, leaseFor(now, until, worker), {
          maxAttempts,
          where: endpoint === undefined ? undefined : { sql: 'endpoint = ?', params: [endpoint] },
        });
        if (!taken) return undefined;
        const row = await tx.get<Row & { data: string; event_created_at: string }>(
          `SELECT ${COLUMNS}, e.data, e.created_at AS event_created_at FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = ?`,
          [taken.id],
        );
        if (!row) return undefined;
        const event: SiteEvent = { id: row.event_id, type: row.type, createdAt: row.event_created_at, data: JSON.parse(row.data) as Record<string, unknown> };
        return { delivery: toDelivery(row), event, lease: taken.lease };
      }),

    finish: (id, lease, end, now) =>
      sql.transaction(async (tx) => {
        const at = now?.toISOString() ?? null;
        const ending: QueueEnd =
          end.kind === 'delivered'
            ? {
                kind: 'done',
                set: `status = 'delivered', last_status = ?, last_error = NULL, delivered_at = ${timeText(sql.engine)}`,
                params: [end.status, at],
              }
            : end.kind === 'gone'
              ? { kind: 'done', set: `status = 'disabled', last_status = 410, last_error = 'the receiver answered 410 Gone'` }
              : // A receiver's Retry-After is honoured, within the schedule's longest wait (a day).
                { kind: 'retry', error: end.error, set: 'last_status = ?', params: [end.status], atLeastMs: end.retryAfterMs };
        // The queue's fenced finish: the schedule's next step or the give-up, under the lease that took it.
        const finished = await queue.finish(tx, id, lease, ending, now, policy);
        // The lease ran out and another worker took it: its own outcome will be recorded.
        if (!finished) return undefined;
        await tx.run('INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, error) VALUES (?, ?, ?, ?)', [
          id,
          finished.at,
          end.status,
          end.kind === 'retry' ? end.error : null,
        ]);
        return finished.kind === 'retry' ? 'pending' : finished.kind === 'failed' ? 'failed' : end.kind === 'gone' ? 'disabled' : 'delivered';
      }),

    replay: (id, now) =>
      sql.transaction(async (tx): Promise<ReplayOutcome> => {
        // Whether a lease lives and the next try is later are judged on the queue's clock, as the workers judge them.
        const row = await tx.get<{
          status: DeliveryStatus;
          next_attempt_at: string | null;
          lease_until: string | null;
          leased: number | string | boolean;
          later: number | string | boolean;
        }>(
          `SELECT status, next_attempt_at, lease_until,
             CASE WHEN lease_until IS NOT NULL AND lease_until > ${clock} THEN 1 ELSE 0 END AS leased,
             CASE WHEN next_attempt_at IS NOT NULL AND next_attempt_at > ${clock} THEN 1 ELSE 0 END AS later
           FROM webhook_deliveries WHERE id = ? ${lockRow}`,
          [time(now), time(now), id],
        );
        if (!row) return { kind: 'missing' };
        if (row.status !== 'pending') {
          await tx.run(
            `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ${clock}, lease_until = NULL, leased_by = NULL WHERE id = ? AND status = ?`,
            [time(now), id, row.status],
          );
          return { kind: 'replayed' };
        }
        // A worker is sending it: its try's end is recorded, and schedules the next if it fails.
        if (Number(row.leased) === 1 && row.lease_until !== null) return { kind: 'sending', until: row.lease_until };
        // Waiting for its next try: due now, its tries so far still counted.
        if (Number(row.later) === 1 && row.next_attempt_at !== null) {
          await tx.run(`UPDATE webhook_deliveries SET next_attempt_at = ${clock} WHERE id = ? AND status = 'pending' AND next_attempt_at = ?`, [
            time(now),
            id,
            row.next_attempt_at,
          ]);
          return { kind: 'due', was: row.next_attempt_at };
        }
        return { kind: 'due', was: row.next_attempt_at ?? new Date().toISOString() };
      }),

    async list(limit) {
      const rows = await sql.all<Row>(`SELECT ${COLUMNS} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id ORDER BY d.id DESC LIMIT ?`, [limit]);
      return rows.map(toDelivery);
    },

    async attempts(id) {
      const rows = await sql.all<{ attempted_at: string; status_code: number | string | null; error: string | null }>(
        'SELECT attempted_at, status_code, error FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempted_at, id',
        [id],
      );
      return rows.map((row) => ({ at: row.attempted_at, status: row.status_code === null ? null : Number(row.status_code), error: row.error }));
    },

    async dueEndpoints(now) {
      const due = queue.due(now, maxAttempts);
      const rows = await sql.all<{ endpoint: string }>(`SELECT DISTINCT endpoint FROM webhook_deliveries WHERE ${due.sql} ORDER BY endpoint`, due.params);
      return rows.map((row) => row.endpoint);
    },

    async nextDueAt() {
      // A delivery being sent is not due again before its lease ends: no pass every second while a receiver hangs.
      const row = await sql.get<{ at: string | null }>(
        `SELECT min(CASE WHEN lease_until > next_attempt_at THEN lease_until ELSE next_attempt_at END) AS at FROM webhook_deliveries WHERE status = 'pending' AND attempts < ?`,
        [maxAttempts],
      );
      return row?.at ? new Date(row.at) : undefined;
    },

    async goneEndpoints() {
      // The names that start with the prefix: a range, with no LIKE pattern to escape (';' follows ':').
      const rows = await sql.all<{ name: string; value: string }>(`SELECT name, value FROM settings WHERE name >= ? AND name < ?`, [GONE, 'webhook_gone;']);
      return new Map(rows.map((row) => [row.name.slice(GONE.length), row.value]));
    },

    async stopEndpoint(name, url) {
      const { changes } = await sql.run(
        `INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value WHERE settings.value <> excluded.value`,
        [`${GONE}${name}`, url],
      );
      return changes === 1;
    },

    prune: (cutoff) =>
      sql.transaction(async (tx) => {
        const at = cutoff.toISOString();
        // Dispatched or not: an event no endpoint took within a day never will (a site without
        // any endpoint records them all the same, and they must not pile up).
        const old = `SELECT id FROM events WHERE created_at < ?
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries w WHERE w.event_id = events.id AND w.status = 'pending')`;
        await tx.run(`DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE event_id IN (${old}))`, [at]);
        await tx.run(`DELETE FROM webhook_deliveries WHERE event_id IN (${old})`, [at]);
        return (await tx.run(`DELETE FROM events WHERE id IN (${old})`, [at])).changes;
      }),
  };
}
