import { type NewFile, recordFiles } from '../files/files.ts';
import type { FieldValue } from '../forms/definition.ts';
import {
  createLeasedQueue,
  DEFAULT_MAX_ATTEMPTS,
  type Finished,
  type Lease,
  type QueuePolicy,
  type TryEnd,
  timeText,
  triedReason,
  WORKER_ID,
  leaseFor,
  databaseNow,
} from '../queue/queue.ts';
import type { Sql, SqlSession } from '../sql/sql.ts';
import { forgetEvents } from '../webhooks/deliveries.ts';
import { receiveInOneStatement } from './receive-postgres.ts';
import { messageEventId, recordEvent } from '../webhooks/events.ts';

/**
 * Where a contact message stands, as stored: waiting to be delivered (`pending`; "sending"
 * while an instance holds its lease), delivered, given up on, or held as spam.
 * Hint: "sending" is `pending` with a live lease rather than a value of its own, so every
 * stored value stays readable by an instance of the previous version during a rolling upgrade.
 */
export type Status = (typeof STATUSES)[number];

/** Every stored status, in the order the inbox command and the admin list them: the one list of them. */
export const STATUSES = ['pending', 'sent', 'failed', 'spam'] as const;

/** A state of the machine: the stored statuses, "sending" (pending under a lease), and gone. */
export type State = Status | 'sending' | 'deleted';

/**
 * Every move a message can make, and nothing else (docs/decisions/0120-one-state-machine.md).
 * Hint: the owner's "spam" and "delete" on a message being sent are requests the send's
 * outcome applies (`sending → spam`, `sending → deleted`): they never stop a send half-way
 * and never cause a second one.
 */
export const MOVES: Readonly<Record<State, readonly State[]>> = {
  pending: ['sending', 'spam', 'deleted'],
  sending: ['sent', 'pending', 'failed', 'spam', 'deleted', 'sending'],
  sent: ['spam', 'deleted'],
  failed: ['pending', 'spam', 'deleted'],
  spam: ['pending', 'sent', 'deleted'],
  deleted: [],
};

/** Throws on a move the table does not allow: a bug in the caller, never a visitor's doing. */
export function requireMove(from: State, to: State): void {
  if (!MOVES[from].includes(to)) throw new Error(`no move ${from} → ${to}`);
}

/** What an owner's command did: no such message, or the state it was in and whether it moved (or will, once its send ends). */
export type Change = { found: false } | { found: true; from: State; changed: boolean; to?: State; deferred?: true };

/**
 * How a send ended, as the worker reports it. A retry without `next` is decided by the queue's
 * fenced finish (queue/queue.ts): the backoff, or the give-up after the most tries or the round.
 */
/** How a send ended, at `at` (none: the database's clock, as the workers record it: decision 0270). */
export type SendEnd =
  | { kind: 'sent'; at?: Date | undefined }
  | { kind: 'retry'; at?: Date | undefined; next?: Date | undefined; error: string }
  | { kind: 'failed'; at?: Date | undefined; error: string };

/** What a finished send did: the message's state now, and how the queue ended the try (none when the lease was lost). */
export type SendFinished = { state: State; finished: Finished | undefined };

/** A new message: its fields, and whether the spam filter held it and why. */
export type Received = {
  name: string;
  email: string;
  message: string;
  held: readonly string[] | undefined;
  /** The form it came from (`contact` when not given) and its fields beyond name, email and message. */
  form?: string | undefined;
  fields?: Readonly<Record<string, FieldValue>> | undefined;
  ip?: string | undefined;
  userAgent?: string | undefined;
  /** The proof's challenge, consumed in the same transaction: a failed save leaves it usable. */
  proof?: { id: string; expiresAtMs: number } | undefined;
  /** Whether the post showed a person's browser (a solved proof, or Turnstile): only then is the sender answered (decision 0149). */
  shownPerson?: boolean | undefined;
  /** The files sent with it, already in the storage: their rows are written in the same transaction. */
  files?: readonly NewFile[] | undefined;
};

/** The most attempts a message gets (DELIVERY_MAX_ATTEMPTS), and the worker that claims it (tests name two). */
export type ClaimOptions = {
  maxAttempts?: number;
  worker?: string;
};

/** What the outbox's upkeep did: the messages it gave up as poison ones, with the reason each records. */
export type Upkept = { gaveUp: { id: number; error: string }[] };

/** The reason a replayed proof adds when the transaction finds its challenge used. */
export const REPLAYED = 'proof-replayed';

/** The only writer of a message's status: each move is one conditional write that says whether it happened. */
export interface SubmissionMachine {
  /** Stores a new message, `pending` or held, consuming its proof in the same transaction. */
  receive(message: Received): Promise<{ id: number; status: 'pending' | 'spam'; reasons: readonly string[] }>;
  /**
   * `pending → sending`: takes the oldest due message no live lease holds and no request of the
   * owner's waits on, tried fewer than `maxAttempts` times, until `until`, counting the attempt now.
   */
  claim(now: Date | undefined, until: Date | number, options?: ClaimOptions): Promise<{ id: number; lease: Lease } | undefined>;
  /** `sending → sent | pending | failed` (or the owner's spam or delete); a finished send is recorded whatever happened meanwhile. */
  finish(id: number, lease: Lease | null, end: SendEnd, policy?: QueuePolicy): Promise<State>;
  /** As `finish`, answering also how the queue ended the try (a retry it gave up is `failed`, with its reason). */
  settle(id: number, lease: Lease | null, end: SendEnd, policy?: QueuePolicy): Promise<SendFinished>;
  /**
   * Scheduled upkeep (decision 0241): `sending → failed` for each message tried `maxAttempts`
   * times whose last send never ended (its process died during it, again and again: a poison
   * message), then the owner's requests left on messages whose sender died are applied.
   */
  upkeep(now?: Date, options?: { maxAttempts?: number }): Promise<Upkept>;
  /** Ends every lease (SQLite at start, where a lease is a dead process's), applying the owner's requests. */
  releaseLeases(): Promise<number>;
  /** "Spam": a pending, failed or sent message is held, its news forgotten (decision 0151); one being sent is held when its send ends. */
  hold(id: number, now?: Date): Promise<Change>;
  /** "Not spam": a held message is queued, or back to `sent` if it was ever sent; once. */
  release(id: number, now?: Date): Promise<Change>;
  /**
   * The sender's "Send my message" (a person without JavaScript): a message held for its
   * missing proof alone is queued, once; one the owner marked as spam stays held.
   */
  confirmBySender(id: number, now?: Date): Promise<Change>;
  /** "Retry": a failed message is queued with a fresh round; of concurrent retries, one changes it. */
  requeue(id: number, now?: Date): Promise<Change>;
  /** Deletes a message with its history and its news (decision 0151); one being sent is deleted when its send ends. */
  remove(id: number, now?: Date): Promise<Change>;
  /**
   * Retention: deletes every message received before `cutoff` (only held ones with `heldOnly`),
   * with its history; answers how many. A message being sent at `now` is left to a later pass.
   */
  removeReceivedBefore(cutoff: Date, now?: Date, options?: { heldOnly?: boolean }): Promise<number>;
}

/** A visitor's message waits at most one turn of the event loop to share its commit (sql/sqlite.ts). */
const TOGETHER = { together: true } as const;

const HISTORY = 'INSERT INTO delivery_attempts (submission_id, attempted_at, outcome, error) VALUES (?, ?, ?, ?)';

type Row = {
  status: Status;
  lease_until: string | null;
  leased: number | string | boolean;
  sent_at: string | null;
  spam_reasons: string | null;
  requested: string | null;
};

/**
 * Builds the machine over the store's SQL (SQLite or PostgreSQL).
 * Hint: `events: false` when no webhook, chat alert or automatic reply would read the news of a
 * message (webhooks/webhooks.ts, `eventsRead`): nothing is then recorded, as for the newsletter.
 */
export function createSubmissionMachine(sql: Sql, { events = true }: { events?: boolean } = {}): SubmissionMachine {
  // PostgreSQL: the row is locked as it is taken and rows other instances are taking are skipped.
  const skipLocked = sql.engine === 'postgresql' ? 'FOR UPDATE SKIP LOCKED' : '';
  const lockRow = sql.engine === 'postgresql' ? 'FOR UPDATE' : '';
  // The one leased queue takes, ends and gives up messages; the machine adds the history and the owner's requests.
  const queue = createLeasedQueue(sql.engine, {
    table: 'submissions',
    waiting: 'pending',
    failed: 'failed',
    // A message the owner asked to hold or delete while its sender died is never sent: the upkeep applies the request.
    takes: 'requested IS NULL',
    dueWhenUnset: true,
    // The round of retries starts at its first try (after the last requeue), as its history says.
    roundFrom: `(SELECT min(a.attempted_at) FROM delivery_attempts a WHERE a.submission_id = submissions.id AND a.outcome <> 'requeued'
      AND a.id > coalesce((SELECT max(r.id) FROM delivery_attempts r WHERE r.submission_id = submissions.id AND r.outcome = 'requeued'), 0))`,
    returning: 'requested',
  });
  // The time a step judges leases and due times by: the one passed (tests), else the database's,
  // as the queue judges them (decision 0270): an owner's instance whose clock runs fast must not
  // take a message from under a live lease, nor make a message it queues wait for its clock.
  const clock = `COALESCE(?${sql.engine === 'postgresql' ? '::timestamptz' : ''}, ${databaseNow(sql.engine)})`;
  const time = (now: Date | undefined) => now?.toISOString() ?? null;
  const read = (tx: SqlSession, id: number, now?: Date) =>
    tx.get<Row>(
      `SELECT status, lease_until, CASE WHEN lease_until IS NOT NULL AND lease_until > ${clock} THEN 1 ELSE 0 END AS leased,
        sent_at, spam_reasons, requested FROM submissions WHERE id = ? ${lockRow}`,
      [time(now), id],
    );
  const stateOf = (row: Row): State => (row.status === 'pending' && Number(row.leased) === 1 ? 'sending' : row.status);
  // The owner's "spam" and "delete" take the message's news with it, in the same transaction:
  // its automatic reply and webhook deliveries still waiting are never sent (decision 0151).
  const forget = (tx: SqlSession, id: number) => forgetEvents(tx, sql.engine, { message: id });
  const erase = async (tx: SqlSession, id: number) => {
    // The history goes first and explicitly: erasure must not depend on foreign keys being on.
    await tx.run('DELETE FROM delivery_attempts WHERE submission_id = ?', [id]);
    await forget(tx, id);
    return (await tx.run('DELETE FROM submissions WHERE id = ?', [id])).changes === 1;
  };
  /** Applies the owner's request left on a message whose send ended, or whose sender died. */
  const applyRequest = async (tx: SqlSession, id: number, requested: string | null): Promise<State | undefined> => {
    if (requested === 'delete') return (await erase(tx, id)) ? 'deleted' : undefined;
    if (requested === 'hold') {
      await tx.run(`UPDATE submissions SET status = 'spam', next_attempt_at = NULL, requested = NULL WHERE id = ?`, [id]);
      await forget(tx, id);
      return 'spam';
    }
    return undefined;
  };

  /** "Not spam" (the owner's) or "Send my message" (the sender's, for a message held for its missing proof). */
  const release = (id: number, now: Date | undefined, by: 'owner' | 'sender') =>
    sql.transaction(async (tx): Promise<Change> => {
      const row = await read(tx, id, now);
      if (!row) return { found: false };
      const from = stateOf(row);
      if (by === 'sender') {
        // Only what the missing proof alone held, and never over the owner's own "Spam".
        const reasons = parseReasons(row.spam_reasons);
        if (from !== 'spam' || !reasons.includes('proof-missing') || reasons.includes('marked-by-owner')) return { found: true, from, changed: false };
      }
      if (row.status === 'pending' && row.requested === 'hold') {
        // Taken back before the send ended, or after its sender died but before the upkeep applied
        // it (the message is not spam yet): the send's outcome stands, or the message waits its
        // turn again, as if never asked.
        const { changes } = await tx.run(`UPDATE submissions SET requested = NULL WHERE id = ? AND requested = 'hold'`, [id]);
        return { found: true, from: 'spam', changed: changes === 1, to: from === 'sending' ? 'sending' : 'pending' };
      }
      if (from !== 'spam') return { found: true, from, changed: false };
      // The history's time is the process's (a record); the next try's is the database's (a due time).
      const at = (now ?? new Date()).toISOString();
      // A message sent before it was held goes back to `sent`: releasing never sends a message twice.
      const to = row.sent_at ? 'sent' : 'pending';
      requireMove(from, to);
      const { changes } =
        to === 'sent'
          ? await tx.run(`UPDATE submissions SET status = 'sent' WHERE id = ? AND status = 'spam'`, [id])
          : await tx.run(
              `UPDATE submissions SET status = 'pending', attempts = 0, next_attempt_at = ${clock}, last_error = NULL, lease_until = NULL, leased_by = NULL WHERE id = ? AND status = 'spam'`,
              [time(now), id],
            );
      if (changes === 1 && to === 'pending') {
        await tx.run(HISTORY, [id, at, 'requeued', by === 'owner' ? 'released from spam by the owner' : 'confirmed by the sender']);
        // Accepted now: the news goes out as for a message accepted at once.
        const message = events
          ? await tx.get<{ created_at: string; name: string; email: string; message: string; form: string; fields: string | null }>(
              'SELECT created_at, name, email, message, form, fields FROM submissions WHERE id = ?',
              [id],
            )
          : undefined;
        if (message) {
          const data = { id, createdAt: message.created_at, name: message.name, email: message.email, message: message.message };
          // Once per message: released again after a "Spam", it is not news a second time.
          const eventId = messageEventId('contact.received', { id, createdAt: message.created_at });
          await recordEvent(tx, 'contact.received', withForm(data, message.form, parseFields(message.fields)), new Date(at), eventId);
        }
      }
      return { found: true, from, changed: changes === 1, to };
    });

  /** Ends a send under its lease through the queue's fenced finish, then records it in the history and applies the owner's request. */
  const settle = (id: number, lease: Lease | null, end: SendEnd, policy?: QueuePolicy) =>
    sql.transaction(async (tx): Promise<SendFinished> => {
      const when = end.at?.toISOString() ?? null;
      const ending: TryEnd =
        end.kind === 'sent'
          ? { kind: 'done', set: `status = 'sent', sent_at = ${timeText(sql.engine)}, last_error = NULL`, params: [when] }
          : end.kind === 'retry'
            ? { kind: 'retry', error: end.error, next: end.next }
            : { kind: 'failed', error: end.error };
      // Each move names the lease it ends. The attempt was counted when it was claimed; a
      // message finished without a claim (seeded, or by the previous version) counts it now.
      const finished = await queue.finish(tx, id, lease, ending, end.at, policy);
      if (finished) {
        const at = finished.at;
        const outcome = finished.kind === 'done' ? 'sent' : finished.kind === 'retry' ? 'retrying' : 'failed';
        await tx.run(HISTORY, [id, at, outcome, finished.error]);
        const next: State = finished.kind === 'done' ? 'sent' : finished.kind === 'retry' ? 'pending' : 'failed';
        return { state: (await applyRequest(tx, id, finished.row.requested as string | null)) ?? next, finished };
      }
      // The lease was lost meanwhile (it ran out and the owner or another instance acted).
      // A mail that went out is still recorded, so it is never sent again as if it had not.
      if (end.kind !== 'sent') return { state: (await read(tx, id))?.status ?? 'deleted', finished };
      const at = (end.at ?? new Date()).toISOString();
      const { changes } = await tx.run('UPDATE submissions SET sent_at = coalesce(sent_at, ?) WHERE id = ?', [at, id]);
      if (changes === 0) return { state: 'deleted', finished };
      await tx.run(HISTORY, [id, at, 'sent', null]);
      return { state: (await read(tx, id))!.status, finished };
    });

  return {
    // Committed with the other messages arriving meanwhile: one fsync for all of them on SQLite.
    receive: (message) => {
      if (sql.engine === 'postgresql') return receiveOnPostgres(sql, message, events);
      return sql.transaction(async (tx) => {
        const reasons = [...(message.held ?? [])];
        if (message.proof) {
          const { changes } = await tx.run('INSERT INTO used_challenges (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING', [
            message.proof.id,
            new Date(message.proof.expiresAtMs).toISOString(),
          ]);
          if (changes === 0) reasons.push(REPLAYED);
        }
        const now = new Date().toISOString();
        const status = reasons.length > 0 ? 'spam' : 'pending';
        const row = await tx.get<{ id: number | string }>(
          // Due at once by the database's clock, which the workers judge by (decision 0270), whatever this process's says.
          `INSERT INTO submissions (created_at, name, email, message, status, next_attempt_at, spam_reasons, client_ip, user_agent, form, fields, shown_person)
           VALUES (?, ?, ?, ?, ?, CASE WHEN ? THEN ${databaseNow(sql.engine)} END, ?, ?, ?, ?, ?, ?) RETURNING id`,
          [
            now,
            message.name,
            message.email,
            message.message,
            status,
            status === 'pending' ? 1 : 0,
            status === 'spam' ? JSON.stringify(reasons) : null,
            status === 'spam' ? (message.ip ?? null) : null,
            status === 'spam' ? (message.userAgent ?? null) : null,
            message.form ?? 'contact',
            message.fields && Object.keys(message.fields).length > 0 ? JSON.stringify(message.fields) : null,
            message.shownPerson ? 1 : 0,
          ],
        );
        const id = Number(row!.id);
        if (message.files?.length) await recordFiles(tx, id, message.files, now);
        // The news of it, in the same transaction: webhooks and chat alerts never miss a message.
        if (!events) return { id, status, reasons };
        const data = withForm({ id, createdAt: now, name: message.name, email: message.email, message: message.message }, message.form, message.fields);
        const type = status === 'pending' ? 'contact.received' : 'contact.held';
        await recordEvent(tx, type, status === 'spam' ? { ...data, reasons } : data, new Date(now), messageEventId(type, { id, createdAt: now }));
        return { id, status, reasons };
      }, TOGETHER);
    },

    claim: (now, until, { maxAttempts = DEFAULT_MAX_ATTEMPTS, worker = WORKER_ID } = {}) =>
      sql.transaction(async (tx) => {
        const row = await queue.claim(tx, now, leaseFor(now, until, worker), { maxAttempts });
        return row && { id: row.id, lease: row.lease };
      }),

    upkeep: async (now, { maxAttempts = DEFAULT_MAX_ATTEMPTS } = {}) => {
      const died = `gave up after ${maxAttempts} attempts that never ended (the server stopped during each send)`;
      const gaveUp = await sql.transaction(async (tx) => {
        // Tried so often that every send died with its process: failed, for the owner to see, not a crash loop.
        // A message with the owner's request on it is left to the request, applied next.
        const given = await queue.giveUpDead(tx, now, maxAttempts, { died, tried: triedReason(maxAttempts) });
        for (const { id, error } of given) await tx.run(HISTORY, [id, (now ?? new Date()).toISOString(), 'failed', error]);
        // A request the owner made while a sender that has since died held the lease: applied, never sent.
        const orphans = await tx.all<{ id: number | string; requested: string }>(
          `SELECT id, requested FROM submissions WHERE status = 'pending' AND requested IS NOT NULL AND lease_until <= COALESCE(?${sql.engine === 'postgresql' ? '::timestamptz' : ''}, ${databaseNow(sql.engine)}) ${skipLocked}`,
          [now?.toISOString() ?? null],
        );
        for (const orphan of orphans) await applyRequest(tx, Number(orphan.id), orphan.requested);
        return given;
      });
      return { gaveUp };
    },

    finish: async (id, lease, end, policy) => (await settle(id, lease, end, policy)).state,
    settle: (id, lease, end, policy) => settle(id, lease, end, policy),

    releaseLeases: () =>
      sql.transaction(async (tx) => {
        const requests = await tx.all<{ id: number | string; requested: string }>(
          `SELECT id, requested FROM submissions WHERE status = 'pending' AND requested IS NOT NULL`,
        );
        for (const request of requests) await applyRequest(tx, Number(request.id), request.requested);
        // The worker's name stays: it marks a try that never ended, so that a message whose every send
        // kills the server is given up as one that died, not as one whose tries all ended (queue.ts giveUpDead).
        return (await tx.run('UPDATE submissions SET lease_until = NULL WHERE lease_until IS NOT NULL')).changes;
      }),

    hold: (id, now) =>
      sql.transaction(async (tx): Promise<Change> => {
        const row = await read(tx, id, now);
        if (!row) return { found: false };
        const from = stateOf(row);
        if (from === 'spam') return { found: true, from, changed: false };
        const reasons = JSON.stringify([...parseReasons(row.spam_reasons).filter((r) => r !== 'marked-by-owner'), 'marked-by-owner']);
        if (from === 'sending') {
          requireMove(from, 'spam');
          const { changes } = await tx.run(
            `UPDATE submissions SET requested = 'hold', spam_reasons = ? WHERE id = ? AND status = 'pending' AND lease_until = ?`,
            [reasons, id, row.lease_until],
          );
          return { found: true, from, changed: changes === 1, to: 'spam', deferred: true };
        }
        requireMove(from, 'spam');
        const { changes } = await tx.run(
          `UPDATE submissions SET status = 'spam', next_attempt_at = NULL, lease_until = NULL, leased_by = NULL, requested = NULL, spam_reasons = ? WHERE id = ? AND status = ?`,
          [reasons, id, row.status],
        );
        if (changes === 1) await forget(tx, id);
        return { found: true, from, changed: changes === 1, to: 'spam' };
      }),

    release: (id, now) => release(id, now, 'owner'),
    confirmBySender: (id, now) => release(id, now, 'sender'),

    requeue: (id, now) =>
      sql.transaction(async (tx): Promise<Change> => {
        const at = (now ?? new Date()).toISOString();
        // One conditional write decides: of two instances answering "Retry" at once, one moves it.
        const { changes } = await tx.run(
          `UPDATE submissions SET status = 'pending', attempts = 0, next_attempt_at = ${clock}, lease_until = NULL, leased_by = NULL WHERE id = ? AND status = 'failed'`,
          [time(now), id],
        );
        if (changes === 1) {
          await tx.run(HISTORY, [id, at, 'requeued', null]);
          return { found: true, from: 'failed', changed: true, to: 'pending' };
        }
        const row = await read(tx, id, now);
        return row ? { found: true, from: stateOf(row), changed: false } : { found: false };
      }),

    remove: (id, now) =>
      sql.transaction(async (tx): Promise<Change> => {
        const row = await read(tx, id, now);
        if (!row) return { found: false };
        const from = stateOf(row);
        requireMove(from, 'deleted');
        if (from === 'sending') {
          const { changes } = await tx.run(`UPDATE submissions SET requested = 'delete' WHERE id = ? AND status = 'pending' AND lease_until = ?`, [
            id,
            row.lease_until,
          ]);
          return { found: true, from, changed: changes === 1, to: 'deleted', deferred: true };
        }
        return { found: true, from, changed: await erase(tx, id), to: 'deleted' };
      }),

    removeReceivedBefore: (cutoff, now, { heldOnly = false } = {}) =>
      sql.transaction(async (tx) => {
        const which = `created_at < ? AND NOT (status = 'pending' AND lease_until IS NOT NULL AND lease_until > ${clock})${heldOnly ? " AND status = 'spam'" : ''}`;
        const params = [cutoff.toISOString(), time(now)];
        // The history goes first and explicitly: erasure must not depend on foreign keys being on.
        await tx.run(`DELETE FROM delivery_attempts WHERE submission_id IN (SELECT id FROM submissions WHERE ${which})`, params);
        return (await tx.run(`DELETE FROM submissions WHERE ${which}`, params)).changes;
      }),
  };
}

/**
 * `receive` on PostgreSQL: everything in one statement (submissions/receive-postgres.ts), one
 * round trip where the transaction took three or more (BEGIN, the INSERTs, COMMIT; decision 0250).
 */
function receiveOnPostgres(sql: Sql, message: Received, events: boolean) {
  const now = new Date().toISOString();
  const reasons = [...(message.held ?? [])];
  const data = withForm({ createdAt: now, name: message.name, email: message.email, message: message.message }, message.form, message.fields);
  return receiveInOneStatement(
    sql,
    {
      name: message.name,
      email: message.email,
      message: message.message,
      reasons,
      reasonsIfReplayed: [...reasons, REPLAYED],
      ip: message.ip ?? null,
      userAgent: message.userAgent ?? null,
      form: message.form ?? 'contact',
      fields: message.fields && Object.keys(message.fields).length > 0 ? JSON.stringify(message.fields) : null,
      shownPerson: message.shownPerson === true,
      proof: message.proof && { id: message.proof.id, expiresAt: new Date(message.proof.expiresAtMs).toISOString() },
      files: message.files,
      // The data without its id (which the statement puts first), as recordEvent stores it.
      news: events
        ? {
            received: JSON.stringify(data),
            held: JSON.stringify({ ...data, reasons }),
            heldIfReplayed: JSON.stringify({ ...data, reasons: [...reasons, REPLAYED] }),
            idPrefix: messageEventId('contact.received', { id: 0, createdAt: now }).slice(0, 16),
          }
        : undefined,
    },
    now,
  );
}

/**
 * An event's data with the form it came from and its extra fields: `form` only for an owner's
 * form (a contact message's data stays as it was), `fields` only when there are some.
 */
function withForm(data: Record<string, unknown>, form: string | undefined, fields: Readonly<Record<string, FieldValue>> | undefined): Record<string, unknown> {
  return {
    ...data,
    ...(form && form !== 'contact' && { form }),
    ...(fields && Object.keys(fields).length > 0 && { fields }),
  };
}

/** The stored extra fields (a JSON object), or none when absent or unreadable. */
export function parseFields(text: string | null | undefined): Record<string, FieldValue> {
  if (!text) return Object.create(null);
  try {
    const value: unknown = JSON.parse(text);
    // No prototype: a field named `constructor` or `toString` must be absent where a message has none.
    return value && typeof value === 'object' && !Array.isArray(value) ? Object.assign(Object.create(null), value) : Object.create(null);
  } catch {
    return Object.create(null);
  }
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
