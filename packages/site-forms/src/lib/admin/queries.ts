import { type FormScope, scopeClause } from '../access/permissions.ts';
import type { Sql, SqlValue } from '../sql/sql.ts';
import { type ErasureParts, type ErasureResult, eraseSubscriber } from '../newsletter/erasure.ts';
import type { FieldValue } from '../forms/definition.ts';
import { parseFields, STATUSES, type SubmissionMachine } from '../submissions/machine.ts';
import type { DayCount } from './chart.ts';

/** Messages shown on one page of the inbox. */
export const PAGE_SIZE = 50;

/** The statuses the inbox filters by: the message machine's. */
export const MESSAGE_STATUSES = STATUSES;

/** One of the statuses the inbox filters by. */
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** One row of the inbox's list. */
export type MessageRow = {
  id: number;
  createdAt: string;
  name: string;
  email: string;
  status: string;
  excerpt: string;
  form: string;
  /** The fields beyond name, email and message (decision 0131): an owner's form's excerpt. */
  fields: Record<string, FieldValue>;
};

/** What the inbox asks for: a status, words to find in the name, address or text, and a page from 1. */
export type MessageQuery = { status?: MessageStatus | undefined; search?: string | undefined; page: number; form?: string | undefined };

/** The setting that remembers when the owner last opened the overview. */
const OVERVIEW_VISIT = 'admin_overview_visited_at';

/** Delivery at a glance, for the overview. */
export type DeliveryHealth = { lastSentAt: string | null; lastFailureAt: string | null; failed: number; pending: number };

/** One subscriber of the local list. */
export type SubscriberRow = {
  email: string;
  createdAt: string;
  /** The record of consent, with double opt-in: confirmed when, to which version of the text, from which page. */
  consent?: { confirmedAt: string | null; version: string; page: string };
};

/** Every form: what a query reads when no scope is given (an owner, the housekeeping, the tools). */
const EVERY_FORM: FormScope = { all: true };

/**
 * The queries over the messages and the local list, in both engines. Hint: every query of
 * messages takes the forms it may read (`scope`, access/permissions.ts), every form when none is
 * given; the admin's pages reach them only through `admin.for(actor)`, which always gives one.
 */
export interface AdminQueries {
  /** One page of messages of `scope`'s forms, newest first, and how many match in all. */
  messages(query: MessageQuery, scope?: FormScope): Promise<{ rows: MessageRow[]; total: number }>;
  /** How many messages have each status. */
  countByStatus(scope?: FormScope): Promise<Record<string, number>>;
  /** Messages per day (UTC) since `since`, only the days that had some. */
  perDay(since: Date, scope?: FormScope): Promise<DayCount[]>;
  /** When the last message was sent, the last attempt failed, and how many failed and wait. */
  deliveryHealth(scope?: FormScope): Promise<DeliveryHealth>;
  /**
   * Records the visit to the overview at `now` and answers the previous one, and how many
   * messages of `scope`'s forms were held as spam since then (since ever, on the first visit).
   * Hint: a person's visits are their own (`admin_users.overview_visited_at`); without a person,
   * the one time of the site before people (the setting), as the tools read it.
   */
  visitOverview(now: Date, scope?: FormScope, personId?: number): Promise<{ previous: string | undefined; heldSince: number }>;
  /** The form a message came from (what the commands authorize with), `undefined` when there is no such message. */
  formOf(id: number): Promise<string | undefined>;
  /** Deletes a message and its delivery history (through the state machine); answers whether it was deleted now. */
  deleteMessage(id: number): Promise<boolean>;
  /** Deletes every message received before `cutoff`, with its history; answers how many. */
  deleteOlderThan(cutoff: Date): Promise<number>;
  /** One page of subscribers, newest first, matching `search`, and how many match. */
  subscribers(search: string | undefined, page: number): Promise<{ rows: SubscriberRow[]; total: number }>;
  /** Erases one address everywhere it is kept (newsletter/erasure.ts); answers whether anything of it was found. */
  deleteSubscriber(email: string): Promise<ErasureResult>;
}

/**
 * The owner's queries over the store's SQL.
 * Hint: search is a case-insensitive substring match (`LIKE` with its wildcards escaped),
 * which is plenty for one site's inbox and needs no search index.
 */
export function createAdminQueries(sql: Sql, machine: SubmissionMachine, { limits }: Pick<ErasureParts, 'limits'> = {}): AdminQueries {
  // Case folded beyond ASCII on both engines: SQLite's lower() knows only A–Z (sqlite.ts adds fold()).
  const fold = (column: string) => (sql.engine === 'sqlite' ? `fold(${column})` : `lower(${column})`);
  /** `WHERE`/`AND` and the scope's condition, or nothing for every form. */
  const limitedTo = (scope: FormScope, keyword: 'WHERE' | 'AND', column = 'form') => {
    const clause = scopeClause(sql.engine, scope, column);
    return clause.sql === '' ? { sql: '', params: [] } : { sql: ` ${keyword} ${clause.sql}`, params: clause.params };
  };
  return {
    async messages({ status, search, page, form }, scope = EVERY_FORM) {
      const where: string[] = [];
      const params: SqlValue[] = [];
      const limit = scopeClause(sql.engine, scope);
      if (limit.sql) {
        where.push(limit.sql);
        params.push(...limit.params);
      }
      if (status) {
        where.push('status = ?');
        params.push(status);
      }
      if (form) {
        where.push('form = ?');
        params.push(form);
      }
      const pattern = likePattern(search);
      if (pattern === null) return { rows: [], total: 0 };
      if (pattern) {
        // The extra fields are searched as their stored JSON text: their values, and the names of the fields too.
        where.push(
          `(${fold('name')} LIKE ? ESCAPE '\\' OR ${fold('email')} LIKE ? ESCAPE '\\' OR ${fold('message')} LIKE ? ESCAPE '\\' OR ${fold("coalesce(fields, '')")} LIKE ? ESCAPE '\\')`,
        );
        params.push(pattern, pattern, pattern, pattern);
      }
      const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
      const [rows, count] = await Promise.all([
        sql.all<{ id: number | string; created_at: string; name: string; email: string; status: string; excerpt: string; form: string; fields: string | null }>(
          `SELECT id, created_at, name, email, status, substr(message, 1, 120) AS excerpt, form, fields FROM submissions ${clause}
           ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
          [...params, PAGE_SIZE, (Math.max(1, page) - 1) * PAGE_SIZE],
        ),
        sql.get<{ n: number | string }>(`SELECT count(*) AS n FROM submissions ${clause}`, params),
      ]);
      return {
        rows: rows.map((r) => ({
          id: Number(r.id),
          createdAt: r.created_at,
          name: r.name,
          email: r.email,
          status: r.status,
          excerpt: r.excerpt,
          form: r.form,
          fields: parseFields(r.fields),
        })),
        total: Number(count?.n ?? 0),
      };
    },
    async countByStatus(scope = EVERY_FORM) {
      const limit = limitedTo(scope, 'WHERE');
      const rows = await sql.all<{ status: string; n: number | string }>(
        `SELECT status, count(*) AS n FROM submissions${limit.sql} GROUP BY status`,
        limit.params,
      );
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    },
    async perDay(since, scope = EVERY_FORM) {
      const limit = limitedTo(scope, 'AND');
      const rows = await sql.all<{ day: string; n: number | string }>(
        `SELECT substr(created_at, 1, 10) AS day, count(*) AS n FROM submissions WHERE created_at >= ?${limit.sql} GROUP BY substr(created_at, 1, 10)`,
        [since.toISOString(), ...limit.params],
      );
      return rows.map((r) => ({ day: r.day, count: Number(r.n) }));
    },
    async deliveryHealth(scope = EVERY_FORM) {
      const where = limitedTo(scope, 'WHERE');
      // The attempts have no form: their message's, when the scope is not every form.
      const joined = limitedTo(scope, 'AND', 's.form');
      const attempts = scope.all
        ? { sql: "SELECT max(attempted_at) AS at FROM delivery_attempts WHERE outcome IN ('retrying', 'failed')", params: [] }
        : {
            sql: `SELECT max(a.attempted_at) AS at FROM delivery_attempts a JOIN submissions s ON s.id = a.submission_id
                  WHERE a.outcome IN ('retrying', 'failed')${joined.sql}`,
            params: joined.params,
          };
      const [sent, failure, counts] = await Promise.all([
        sql.get<{ at: string | null }>(`SELECT max(sent_at) AS at FROM submissions${where.sql}`, where.params),
        sql.get<{ at: string | null }>(attempts.sql, attempts.params),
        sql.get<{ failed: number | string | null; pending: number | string | null }>(
          `SELECT sum(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) AS failed, sum(CASE WHEN status = 'pending' THEN 1 ELSE 0 END) AS pending FROM submissions${where.sql}`,
          where.params,
        ),
      ]);
      return { lastSentAt: sent?.at ?? null, lastFailureAt: failure?.at ?? null, failed: Number(counts?.failed ?? 0), pending: Number(counts?.pending ?? 0) };
    },
    async visitOverview(now, scope = EVERY_FORM, personId) {
      const previous =
        personId === undefined
          ? (await sql.get<{ value: string }>('SELECT value FROM settings WHERE name = ?', [OVERVIEW_VISIT]))?.value || undefined
          : (await sql.get<{ at: string | null }>('SELECT overview_visited_at AS at FROM admin_users WHERE id = ?', [personId]))?.at || undefined;
      const limit = limitedTo(scope, 'AND');
      const held = await sql.get<{ n: number | string }>(`SELECT count(*) AS n FROM submissions WHERE status = 'spam' AND created_at > ?${limit.sql}`, [
        previous ?? '',
        ...limit.params,
      ]);
      if (personId !== undefined) await sql.run('UPDATE admin_users SET overview_visited_at = ? WHERE id = ?', [now.toISOString(), personId]);
      else {
        await sql.run('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', [
          OVERVIEW_VISIT,
          now.toISOString(),
        ]);
      }
      return { previous, heldSince: Number(held?.n ?? 0) };
    },
    async formOf(id) {
      const row = await sql.get<{ form: string }>('SELECT form FROM submissions WHERE id = ?', [id]);
      return row?.form;
    },
    async deleteMessage(id) {
      const change = await machine.remove(id);
      return change.found && change.changed && !change.deferred;
    },
    deleteOlderThan: (cutoff) => machine.removeReceivedBefore(cutoff),
    async subscribers(search, page) {
      const pattern = likePattern(search);
      if (pattern === null) return { rows: [], total: 0 };
      const clause = pattern ? `WHERE ${fold('email')} LIKE ? ESCAPE '\\'` : '';
      const params: SqlValue[] = pattern ? [pattern] : [];
      const [rows, count] = await Promise.all([
        sql.all<{ email: string; created_at: string; confirmed_at: string | null; consent_version: string | null; page: string | null }>(
          `SELECT s.email, s.created_at, c.confirmed_at, c.consent_version, c.page FROM subscribers s LEFT JOIN newsletter_consents c ON c.email = s.email
           ${pattern ? `WHERE ${fold('s.email')} LIKE ? ESCAPE '\\'` : ''} ORDER BY s.created_at DESC, s.email LIMIT ? OFFSET ?`,
          [...params, PAGE_SIZE, (Math.max(1, page) - 1) * PAGE_SIZE],
        ),
        sql.get<{ n: number | string }>(`SELECT count(*) AS n FROM subscribers ${clause}`, params),
      ]);
      const rowOf = (r: (typeof rows)[number]): SubscriberRow =>
        r.consent_version === null
          ? { email: r.email, createdAt: r.created_at }
          : { email: r.email, createdAt: r.created_at, consent: { confirmedAt: r.confirmed_at, version: r.consent_version, page: r.page ?? '' } };
      return { rows: rows.map(rowOf), total: Number(count?.n ?? 0) };
    },
    // The same erasure as `npm run subscribers -- erase`, with the server's limits.
    deleteSubscriber: (email) => eraseSubscriber({ sql, limits }, email),
  };
}

/** The control characters no stored text holds: the forms refuse them (tabs and line breaks aside, which no address has). */

/**
 * `%words%` for a case-insensitive LIKE, its wildcards escaped; `undefined` for no search, and
 * `null` for one that can match nothing: a control character no stored text holds (the forms
 * refuse them), which PostgreSQL would refuse as a parameter (NUL) and SQLite would cut short.
 */
export function likePattern(search: string | undefined): string | null | undefined {
  if (search && /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(search)) return null;
  const words = search?.trim().toLowerCase();
  if (!words) return undefined;
  return `%${words.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
