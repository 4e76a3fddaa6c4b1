import { type FormScope, scopeClause } from '../access/permissions.ts';
import type { Sql, SqlSession } from '../sql/sql.ts';
import type { FieldValue } from '../forms/definition.ts';
import { DEFAULT_MAX_ATTEMPTS, type Lease, type QueuePolicy } from '../queue/queue.ts';
import {
  type ClaimOptions,
  type Change,
  parseFields,
  parseReasons,
  type SendEnd,
  type SendFinished,
  type State,
  type Status,
  type SubmissionMachine,
  type Upkept,
} from '../submissions/machine.ts';

/**
 * Where a contact message stands (submissions/machine.ts owns every change of it).
 * Hint: checked in code, not by a CHECK in the database, so a capability that adds a
 * status adds no constraint to rebuild (decision 0050).
 */
export type DeliveryStatus = Status;

/** One stored contact message with its delivery state. */
export type Submission = {
  id: number;
  createdAt: string;
  name: string;
  email: string;
  message: string;
  status: DeliveryStatus;
  /** Attempts in the current round: since the message was stored, or since the owner last requeued it. */
  attempts: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  sentAt: string | null;
  /** Why the spam filter held it (or the owner marked it); empty for a message never judged spam. */
  spamReasons: string[];
  /** The form it came from: `contact`, or the name of one of the owner's forms (decision 0131). */
  form: string;
  /** Its fields beyond name, email and message, by name; empty for the spec's contact form. */
  fields: Record<string, FieldValue>;
};

/** What one entry of the delivery history records. */
export type DeliveryOutcome = 'sent' | 'retrying' | 'failed' | 'requeued';

/** One entry of a message's delivery history. */
export type DeliveryEvent = { at: string; outcome: DeliveryOutcome; error: string | null };

/** The answer of `requeue`: what the message's state was and whether this call moved it, or that there is no such message. */
export type RequeueResult = { found: false } | { found: true; from: State; changed: boolean; submission: Submission };

/** A message taken for sending, with the lease that proves it is this sender's. */
export type Claimed = Submission & { lease: Lease };

/** The SQL of the outbox: which messages are due, what happened to each, and the owner's queries. */
export interface Outbox {
  /**
   * Takes the oldest pending message due at `now` that no instance is sending, and leases it
   * until `leaseUntil`: no other instance takes it before then. The attempt is counted now; a
   * message whose `maxAttempts` sends all died with their process is left to the upkeep.
   */
  claim(now: Date | undefined, leaseUntil: Date | number, options?: ClaimOptions): Promise<Claimed | undefined>;
  /** Ends a send under its lease, the queue deciding a retry's time or its give-up under `policy`. */
  settle(claimed: Claimed, end: SendEnd, policy: QueuePolicy): Promise<SendFinished>;
  /** Scheduled upkeep: gives up the messages whose every send died, and applies the owner's requests their dead senders left. */
  upkeep(now?: Date, options?: { maxAttempts?: number }): Promise<Upkept>;
  /** Ends every lease: for SQLite at start, where one server serves a file and a lease is a dead process's. */
  releaseLeases(): Promise<number>;
  /** When the earliest pending message a claim would take falls due (or its lease ends), if any (tried fewer than `maxAttempts` times, no request on it). */
  nextDueAt(maxAttempts?: number): Promise<Date | undefined>;
  /** How many messages wait to be delivered. */
  pendingCount(): Promise<number>;
  /** How many messages were given up on and wait for the owner (`npm run inbox -- retry`). */
  failedCount(): Promise<number>;
  /** When the first attempt of the current round was made, if one was: the start of the 24 h of retries. */
  roundStartedAt(id: number): Promise<Date | undefined>;
  /** Records that the SMTP server accepted the message (whatever happened to it meanwhile); answers its state now. */
  markSent(id: number, at: Date, lease?: Lease | null): Promise<State>;
  /** Records a transient failure and when to try again; answers the message's state now. */
  markRetry(id: number, at: Date, nextAttemptAt: Date, error: string, lease?: Lease | null): Promise<State>;
  /** Records that the message will not be delivered, and why; answers its state now. */
  markFailed(id: number, at: Date, error: string, lease?: Lease | null): Promise<State>;
  /** Puts a failed message back in the queue, due at once, with a fresh round of retries; of concurrent calls, one moves it. */
  requeue(id: number, at: Date): Promise<RequeueResult>;
  /**
   * Deletes a message with its history and its news (events, waiting deliveries, automatic
   * reply); one being sent is deleted when its send ends. The admin's "Delete" and `npm run inbox -- delete`.
   */
  remove(id: number, at: Date): Promise<Change>;
  /** One message, or `undefined`. */
  find(id: number): Promise<Submission | undefined>;
  /** The delivery history of one message, oldest first. */
  history(id: number): Promise<DeliveryEvent[]>;
  /** Every message, newest first. */
  list(): Promise<Submission[]>;
  /**
   * Every message, newest first, `size` at a time from a cursor (the id), so that an export of
   * any size holds one batch in memory, never the whole table; only the forms of `scope` when
   * given (an editor's export, access/permissions.ts).
   */
  batches(size: number, options?: { scope?: FormScope | undefined }): AsyncIterable<Submission[]>;
}

type Row = {
  id: number | string;
  created_at: string;
  name: string;
  email: string;
  message: string;
  status: DeliveryStatus;
  attempts: number | string;
  next_attempt_at: string | null;
  last_error: string | null;
  sent_at: string | null;
  spam_reasons: string | null;
  form: string;
  fields: string | null;
};

const COLUMNS = 'id, created_at, name, email, message, status, attempts, next_attempt_at, last_error, sent_at, spam_reasons, form, fields';

/**
 * The outbox in the database: the `submissions` table is the queue and `delivery_attempts`
 * its history; every change of a status goes through the state machine.
 * Hint: "sending" is `pending` under a lease until the SMTP server has accepted the message,
 * so a message whose sender died is sent again when the lease ends, with the same Message-ID
 * (decision 0051).
 */
export function createOutbox(sql: Sql, machine: SubmissionMachine): Outbox {
  const find = async (session: SqlSession, id: number) => {
    const row = await session.get<Row>(`SELECT ${COLUMNS} FROM submissions WHERE id = ?`, [id]);
    return row && toSubmission(row);
  };
  const count = async (status: DeliveryStatus) =>
    Number((await sql.get<{ n: number | string }>('SELECT count(*) AS n FROM submissions WHERE status = ?', [status]))?.n ?? 0);
  const optionalDate = (at: string | null | undefined) => (at ? new Date(at) : undefined);

  return {
    async claim(now, leaseUntil, options) {
      const claimed = await machine.claim(now, leaseUntil, options);
      if (!claimed) return undefined;
      const submission = await find(sql, claimed.id);
      return submission && { ...submission, lease: claimed.lease };
    },
    settle: (claimed, end, policy) => machine.settle(claimed.id, claimed.lease, end, policy),
    upkeep: (now, options) => machine.upkeep(now, options),
    releaseLeases: () => machine.releaseLeases(),
    async nextDueAt(maxAttempts = DEFAULT_MAX_ATTEMPTS) {
      // What only the upkeep moves (a poison message, a dead sender's request) is not due: no pass every second for it.
      // On PostgreSQL the queue times are TIMESTAMPTZ (migration 19) and created_at stays text.
      const due = sql.engine === 'postgresql' ? 'coalesce(next_attempt_at, created_at::timestamptz)' : 'coalesce(next_attempt_at, created_at)';
      const row = await sql.get<{ at: string | null }>(
        `SELECT min(CASE WHEN lease_until > ${due} THEN lease_until ELSE ${due} END) AS at
         FROM submissions WHERE status = 'pending' AND requested IS NULL AND attempts < ?`,
        [maxAttempts],
      );
      return optionalDate(row?.at);
    },
    pendingCount: () => count('pending'),
    failedCount: () => count('failed'),
    async roundStartedAt(id) {
      const row = await sql.get<{ at: string | null }>(
        `SELECT min(attempted_at) AS at FROM delivery_attempts
         WHERE submission_id = ? AND outcome <> 'requeued'
           AND id > coalesce((SELECT max(id) FROM delivery_attempts WHERE submission_id = ? AND outcome = 'requeued'), 0)`,
        [id, id],
      );
      return optionalDate(row?.at);
    },
    markSent: (id, at, lease = null) => machine.finish(id, lease, { kind: 'sent', at }),
    markRetry: (id, at, next, error, lease = null) => machine.finish(id, lease, { kind: 'retry', at, next, error }),
    markFailed: (id, at, error, lease = null) => machine.finish(id, lease, { kind: 'failed', at, error }),
    async requeue(id, at) {
      const change: Change = await machine.requeue(id, at);
      if (!change.found) return { found: false };
      const submission = await find(sql, id);
      return submission ? { found: true, from: change.from, changed: change.changed, submission } : { found: false };
    },
    remove: (id, at) => machine.remove(id, at),
    find: (id) => find(sql, id),
    async history(id) {
      const rows = await sql.all<{ attempted_at: string; outcome: DeliveryOutcome; error: string | null }>(
        'SELECT attempted_at, outcome, error FROM delivery_attempts WHERE submission_id = ? ORDER BY id',
        [id],
      );
      return rows.map((e) => ({ at: e.attempted_at, outcome: e.outcome, error: e.error }));
    },
    list: async () => (await sql.all<Row>(`SELECT ${COLUMNS} FROM submissions ORDER BY created_at DESC, id DESC`)).map(toSubmission),
    async *batches(size, { scope } = {}) {
      const limit = scopeClause(sql.engine, scope ?? { all: true });
      const and = limit.sql === '' ? '' : ` AND ${limit.sql}`;
      let before = Number.MAX_SAFE_INTEGER;
      for (;;) {
        const rows = await sql.all<Row>(`SELECT ${COLUMNS} FROM submissions WHERE id < ?${and} ORDER BY id DESC LIMIT ?`, [before, ...limit.params, size]);
        if (rows.length === 0) return;
        yield rows.map(toSubmission);
        before = Number(rows.at(-1)!.id);
        // Other requests get their turn between two batches, however long the export.
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}

function toSubmission(row: Row): Submission {
  return {
    id: Number(row.id),
    createdAt: row.created_at,
    name: row.name,
    email: row.email,
    message: row.message,
    status: row.status,
    attempts: Number(row.attempts),
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    sentAt: row.sent_at,
    spamReasons: parseReasons(row.spam_reasons),
    form: row.form,
    fields: parseFields(row.fields),
  };
}

export { parseReasons };
