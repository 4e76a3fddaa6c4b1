import type { Sql, SqlSession } from '../store/sql.ts';

/**
 * Where a contact message stands: waiting to be delivered, delivered, given up on, or held
 * as spam (never delivered unless the owner releases it, decision 0093).
 * Hint: checked here, in code, not by a CHECK in the database, so a capability that adds a
 * status adds no constraint to rebuild (decision 0050).
 */
export type DeliveryStatus = 'pending' | 'sent' | 'failed' | 'spam';

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
};

/** What one entry of the delivery history records. */
export type DeliveryOutcome = 'sent' | 'retrying' | 'failed' | 'requeued';

/** One entry of a message's delivery history. */
export type DeliveryEvent = { at: string; outcome: DeliveryOutcome; error: string | null };

/** The answer of `requeue`: what the message's status was, or that there is no such message. */
export type RequeueResult = { found: false } | { found: true; from: DeliveryStatus; submission: Submission };

/** The SQL of the outbox: which messages are due, what happened to each, and the owner's queries. */
export interface Outbox {
  /**
   * Takes the oldest pending message due at `now` that no instance is sending, and leases it
   * until `leaseUntil`: no other instance takes it before then.
   */
  claim(now: Date, leaseUntil: Date): Promise<Submission | undefined>;
  /** Ends every lease: for SQLite at start, where one server serves a file and a lease is a dead process's. */
  releaseLeases(): Promise<number>;
  /** When the earliest pending message falls due (or its lease ends), if any is pending. */
  nextDueAt(): Promise<Date | undefined>;
  /** How many messages wait to be delivered. */
  pendingCount(): Promise<number>;
  /** How many messages were given up on and wait for the owner (`npm run inbox -- retry`). */
  failedCount(): Promise<number>;
  /** When the first attempt of the current round was made, if one was: the start of the 24 h of retries. */
  roundStartedAt(id: number): Promise<Date | undefined>;
  /** Records that the SMTP server accepted the message. */
  markSent(id: number, at: Date): Promise<void>;
  /** Records a transient failure and when to try again. */
  markRetry(id: number, at: Date, nextAttemptAt: Date, error: string): Promise<void>;
  /** Records that the message will not be delivered, and why. */
  markFailed(id: number, at: Date, error: string): Promise<void>;
  /** Puts a failed message back in the queue, due at once, with a fresh round of retries. */
  requeue(id: number, at: Date): Promise<RequeueResult>;
  /** One message, or `undefined`. */
  find(id: number): Promise<Submission | undefined>;
  /** The delivery history of one message, oldest first. */
  history(id: number): Promise<DeliveryEvent[]>;
  /** Every message, newest first. */
  list(): Promise<Submission[]>;
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
};

const COLUMNS = 'id, created_at, name, email, message, status, attempts, next_attempt_at, last_error, sent_at, spam_reasons';

// Every update is conditional on `pending`, so an attempt can never overwrite what the owner
// or another attempt (another instance's, after a lease ran out) decided in the meantime.
const UPDATE_SENT = `UPDATE submissions SET status = 'sent', attempts = attempts + 1, sent_at = ?, next_attempt_at = NULL, last_error = NULL, lease_until = NULL
  WHERE id = ? AND status = 'pending'`;
const UPDATE_RETRY = `UPDATE submissions SET attempts = attempts + 1, next_attempt_at = ?, last_error = ?, lease_until = NULL
  WHERE id = ? AND status = 'pending'`;
const UPDATE_FAILED = `UPDATE submissions SET status = 'failed', attempts = attempts + 1, next_attempt_at = NULL, last_error = ?, lease_until = NULL
  WHERE id = ? AND status = 'pending'`;
const INSERT_EVENT = 'INSERT INTO delivery_attempts (submission_id, attempted_at, outcome, error) VALUES (?, ?, ?, ?)';

/**
 * The outbox in the database: the `submissions` table is the queue and `delivery_attempts`
 * its history.
 * Hint: there is no "sending" state; a message stays `pending` until the SMTP server has
 * accepted it, and its lease only keeps other instances away while one sends it, so a message
 * whose sender died is sent again when the lease ends, with the same Message-ID (decision 0051).
 */
export function createOutbox(sql: Sql): Outbox {
  // PostgreSQL: the row is locked as it is taken and rows other instances are taking are
  // skipped, so two instances never take one message. SQLite has one writer at a time anyway.
  const skipLocked = sql.engine === 'postgresql' ? 'FOR UPDATE SKIP LOCKED' : '';
  const claim = `UPDATE submissions SET lease_until = ?
    WHERE id = (
      SELECT id FROM submissions
      WHERE status = 'pending' AND (next_attempt_at IS NULL OR next_attempt_at <= ?) AND (lease_until IS NULL OR lease_until <= ?)
      ORDER BY next_attempt_at, id LIMIT 1 ${skipLocked}
    )
    RETURNING ${COLUMNS}`;

  const find = async (session: SqlSession, id: number) => {
    const row = await session.get<Row>(`SELECT ${COLUMNS} FROM submissions WHERE id = ?`, [id]);
    return row && toSubmission(row);
  };
  const record = (id: number, at: Date, outcome: DeliveryOutcome, error: string | null, update: string, params: (string | number)[]) =>
    sql.transaction(async (tx) => {
      const { changes } = await tx.run(update, params);
      if (changes === 1) await tx.run(INSERT_EVENT, [id, at.toISOString(), outcome, error]);
    });
  const count = async (status: DeliveryStatus) =>
    Number((await sql.get<{ n: number | string }>('SELECT count(*) AS n FROM submissions WHERE status = ?', [status]))?.n ?? 0);
  const optionalDate = (at: string | null | undefined) => (at ? new Date(at) : undefined);

  return {
    async claim(now, leaseUntil) {
      const at = now.toISOString();
      const row = await sql.get<Row>(claim, [leaseUntil.toISOString(), at, at]);
      return row && toSubmission(row);
    },
    releaseLeases: async () => (await sql.run('UPDATE submissions SET lease_until = NULL WHERE lease_until IS NOT NULL')).changes,
    async nextDueAt() {
      const row = await sql.get<{ at: string | null }>(
        `SELECT min(CASE WHEN lease_until > coalesce(next_attempt_at, created_at) THEN lease_until ELSE coalesce(next_attempt_at, created_at) END) AS at
         FROM submissions WHERE status = 'pending'`,
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
    markSent: (id, at) => record(id, at, 'sent', null, UPDATE_SENT, [at.toISOString(), id]),
    markRetry: (id, at, next, error) => record(id, at, 'retrying', error, UPDATE_RETRY, [next.toISOString(), error, id]),
    markFailed: (id, at, error) => record(id, at, 'failed', error, UPDATE_FAILED, [error, id]),
    requeue: (id, at) =>
      sql.transaction(async (tx): Promise<RequeueResult> => {
        const before = await find(tx, id);
        if (!before) return { found: false };
        if (before.status === 'failed') {
          await tx.run(`UPDATE submissions SET status = 'pending', attempts = 0, next_attempt_at = ?, lease_until = NULL WHERE id = ? AND status = 'failed'`, [
            at.toISOString(),
            id,
          ]);
          await tx.run(INSERT_EVENT, [id, at.toISOString(), 'requeued', null]);
        }
        return { found: true, from: before.status, submission: (await find(tx, id))! };
      }),
    find: (id) => find(sql, id),
    async history(id) {
      const rows = await sql.all<{ attempted_at: string; outcome: DeliveryOutcome; error: string | null }>(
        'SELECT attempted_at, outcome, error FROM delivery_attempts WHERE submission_id = ? ORDER BY id',
        [id],
      );
      return rows.map((e) => ({ at: e.attempted_at, outcome: e.outcome, error: e.error }));
    },
    list: async () => (await sql.all<Row>(`SELECT ${COLUMNS} FROM submissions ORDER BY created_at DESC, id DESC`)).map(toSubmission),
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
  };
}

/** The stored reasons (a JSON array of strings), or none when absent or unreadable. */
export function parseReasons(text: string | null): string[] {
  if (!text) return [];
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((reason): reason is string => typeof reason === 'string') : [];
  } catch {
    return [];
  }
}
