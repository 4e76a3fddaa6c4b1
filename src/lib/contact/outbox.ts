import type { DatabaseSync } from 'node:sqlite';
import { transaction } from '../store/database.ts';

/** Where a contact message stands: waiting to be delivered, delivered, or given up on. */
export type DeliveryStatus = 'pending' | 'sent' | 'failed';

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
};

/** What one entry of the delivery history records. */
export type DeliveryOutcome = 'sent' | 'retrying' | 'failed' | 'requeued';

/** One entry of a message's delivery history. */
export type DeliveryEvent = { at: string; outcome: DeliveryOutcome; error: string | null };

/** The answer of `requeue`: what the message's status was, or that there is no such message. */
export type RequeueResult = { found: false } | { found: true; from: DeliveryStatus; submission: Submission };

/** The SQL of the outbox: which messages are due, what happened to each, and the owner's queries. */
export interface Outbox {
  /** Pending messages whose next attempt is due at `now`, oldest first. */
  due(now: Date, limit: number): Submission[];
  /** When the earliest pending message falls due, if any is pending. */
  nextDueAt(): Date | undefined;
  /** How many messages wait to be delivered. */
  pendingCount(): number;
  /** When the first attempt of the current round was made, if one was: the start of the 24 h of retries. */
  roundStartedAt(id: number): Date | undefined;
  /** Records that the SMTP server accepted the message. */
  markSent(id: number, at: Date): void;
  /** Records a transient failure and when to try again. */
  markRetry(id: number, at: Date, nextAttemptAt: Date, error: string): void;
  /** Records that the message will not be delivered, and why. */
  markFailed(id: number, at: Date, error: string): void;
  /** Puts a failed message back in the queue, due at once, with a fresh round of retries. */
  requeue(id: number, at: Date): RequeueResult;
  /** One message, or `undefined`. */
  find(id: number): Submission | undefined;
  /** The delivery history of one message, oldest first. */
  history(id: number): DeliveryEvent[];
  /** Every message, newest first. */
  list(): Submission[];
}

type Row = {
  id: number;
  created_at: string;
  name: string;
  email: string;
  message: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  sent_at: string | null;
};

const COLUMNS = 'id, created_at, name, email, message, status, attempts, next_attempt_at, last_error, sent_at';

/**
 * The outbox in the SQLite file: the `submissions` table is the queue and
 * `delivery_attempts` its history.
 * Hint: there is no "sending" state; a message stays `pending` until the SMTP server has
 * accepted it, so one interrupted by a crash is simply sent again (with the same Message-ID).
 */
export function createOutbox(db: DatabaseSync): Outbox {
  const selectDue = db.prepare(
    `SELECT ${COLUMNS} FROM submissions
     WHERE status = 'pending' AND (next_attempt_at IS NULL OR next_attempt_at <= ?)
     ORDER BY next_attempt_at, id LIMIT ?`,
  );
  const selectNextDue = db.prepare(`SELECT min(coalesce(next_attempt_at, created_at)) AS at FROM submissions WHERE status = 'pending'`);
  const countPending = db.prepare(`SELECT count(*) AS n FROM submissions WHERE status = 'pending'`);
  const selectRoundStart = db.prepare(
    `SELECT min(attempted_at) AS at FROM delivery_attempts
     WHERE submission_id = ? AND outcome <> 'requeued'
       AND id > coalesce((SELECT max(id) FROM delivery_attempts WHERE submission_id = ? AND outcome = 'requeued'), 0)`,
  );
  const selectOne = db.prepare(`SELECT ${COLUMNS} FROM submissions WHERE id = ?`);
  const selectAll = db.prepare(`SELECT ${COLUMNS} FROM submissions ORDER BY created_at DESC, id DESC`);
  const selectHistory = db.prepare(`SELECT attempted_at, outcome, error FROM delivery_attempts WHERE submission_id = ? ORDER BY id`);
  const insertEvent = db.prepare(`INSERT INTO delivery_attempts (submission_id, attempted_at, outcome, error) VALUES (?, ?, ?, ?)`);
  // Every update is conditional on `pending`, so an attempt can never overwrite what the
  // owner or another attempt decided in the meantime.
  const updateSent = db.prepare(
    `UPDATE submissions SET status = 'sent', attempts = attempts + 1, sent_at = ?, next_attempt_at = NULL, last_error = NULL
     WHERE id = ? AND status = 'pending'`,
  );
  const updateRetry = db.prepare(`UPDATE submissions SET attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE id = ? AND status = 'pending'`);
  const updateFailed = db.prepare(
    `UPDATE submissions SET status = 'failed', attempts = attempts + 1, next_attempt_at = NULL, last_error = ? WHERE id = ? AND status = 'pending'`,
  );
  const updateRequeued = db.prepare(`UPDATE submissions SET status = 'pending', attempts = 0, next_attempt_at = ? WHERE id = ? AND status = 'failed'`);

  const record = (id: number, at: Date, outcome: DeliveryOutcome, error: string | null, update: () => { changes: number | bigint }) =>
    transaction(db, () => {
      if (Number(update().changes) === 1) insertEvent.run(id, at.toISOString(), outcome, error);
    });
  const find = (id: number) => {
    const row = selectOne.get(id) as Row | undefined;
    return row && toSubmission(row);
  };

  return {
    due: (now, limit) => (selectDue.all(now.toISOString(), limit) as Row[]).map(toSubmission),
    nextDueAt() {
      const { at } = selectNextDue.get() as { at: string | null };
      return at === null ? undefined : new Date(at);
    },
    pendingCount: () => Number((countPending.get() as { n: number }).n),
    roundStartedAt(id) {
      const { at } = selectRoundStart.get(id, id) as { at: string | null };
      return at === null ? undefined : new Date(at);
    },
    markSent: (id, at) => record(id, at, 'sent', null, () => updateSent.run(at.toISOString(), id)),
    markRetry: (id, at, next, error) => record(id, at, 'retrying', error, () => updateRetry.run(next.toISOString(), error, id)),
    markFailed: (id, at, error) => record(id, at, 'failed', error, () => updateFailed.run(error, id)),
    requeue(id, at) {
      return transaction(db, (): RequeueResult => {
        const before = find(id);
        if (!before) return { found: false };
        if (before.status === 'failed') {
          updateRequeued.run(at.toISOString(), id);
          insertEvent.run(id, at.toISOString(), 'requeued', null);
        }
        return { found: true, from: before.status, submission: find(id)! };
      });
    },
    find,
    history: (id) =>
      (selectHistory.all(id) as { attempted_at: string; outcome: DeliveryOutcome; error: string | null }[]).map((e) => ({
        at: e.attempted_at,
        outcome: e.outcome,
        error: e.error,
      })),
    list: () => (selectAll.all() as Row[]).map(toSubmission),
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
  };
}
