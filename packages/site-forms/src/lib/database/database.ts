import { createOutbox, type Outbox } from '../contact/outbox.ts';
import { createSubmissionStore, type SubmissionStore } from '../contact/submission-store.ts';
import { createFileRecords, type FileRecords } from '../files/files.ts';
import type { Logger } from '../log.ts';
import { createSubscriberList, type SubscriberList } from '../newsletter/local.ts';
import type { DatabaseConfig } from './connection-settings.ts';
import { createSpamStore, type SpamStore } from '../spam/spam-store.ts';
import { createSubmissionMachine, type SubmissionMachine } from '../submissions/machine.ts';
import { openPostgres } from '../sql/postgres.ts';
import { type Engine, engineName, type Sql, type SqlSession, type SqlValue } from '../sql/sql.ts';
import { openSqlite } from '../sql/sqlite.ts';
import { createDatabaseState, type DatabaseState, isStatementFault, nameStatement } from '../sql/state.ts';

/** What the health check learns about the database. */
export type DatabaseHealth = {
  /** The engine, as people name it: "SQLite" or "PostgreSQL". */
  database: string;
  /** Whether a write reached the database just now, and none failed since. */
  writable: boolean;
  /** What `PRAGMA integrity_check` said at start (SQLite); PostgreSQL checks its own pages. */
  integrity: 'ok' | 'failed' | 'not checked';
  pendingMessages: number | null;
  failedMessages: number | null;
  /** Why the database is not healthy, in words for the owner. */
  problem?: string;
};

/**
 * Everything the service keeps, behind one asynchronous interface with a repository per concern.
 * Hint: a new concern adds a migration pair (migrations.ts), a repository over `sql`, and a field
 * here (decision 0050).
 */
export interface Store {
  readonly engine: Engine;
  /** Settles once the database is reachable and migrated; rejects with why it is not. */
  readonly ready: Promise<void>;
  /** The statements themselves, for repositories; every failure is recorded in `state`. */
  readonly sql: Sql;
  /**
   * The one machine over every contact message, built with this store's `events`: every
   * repository below and the admin's actions go through it (issue 30, item 2).
   */
  readonly messages: SubmissionMachine;
  readonly submissions: SubmissionStore;
  readonly outbox: Outbox;
  /** The spam filter's records: held messages, the owner's corrections, used challenges, the digest. */
  readonly spam: SpamStore;
  readonly subscribers: SubscriberList;
  /** The files sent with messages (issue 31), written with their message by `submissions.receive`. */
  readonly files: FileRecords;
  readonly state: DatabaseState;
  /** Whether the news of each message is recorded for webhooks (StoreOptions' `events`). */
  readonly keepsEvents: boolean;
  /** Probes the database with a real, committed write and reads the queue's counts. */
  health(): Promise<DatabaseHealth>;
  /** Waits for statements under way, then closes the database. */
  close(): Promise<void>;
}

/**
 * Where the store is: PostgreSQL when `url` is set, otherwise the SQLite file in `dataDir`;
 * `events: false` when nothing reads the news of a message (no webhook, alert or automatic reply).
 * Hint: required, and read from the configuration by `storeOptionsOf` (config/config.ts) for the
 * server and every command-line tool alike, so no opener records news the server would not.
 */
export type StoreOptions = DatabaseConfig & { dataDir: string; events: boolean };

/**
 * Opens the store the configuration names. SQLite is open and migrated when this answers;
 * PostgreSQL connects and migrates in the background, and `ready` says when it is done.
 */
export function openStore(options: StoreOptions, logger: Logger): Store {
  const engine: Engine = options.url ? 'postgresql' : 'sqlite';
  const state = createDatabaseState(engine, logger);
  // One line per step applied, so an upgrade says what it changed in the database.
  const onMigrated = ({ version, name }: { version: number; name: string }) =>
    logger.info('database.migrated', { database: engineName(engine), step: version, name });
  let integrity: DatabaseHealth['integrity'] = 'not checked';
  let raw: Sql;
  if (options.url) {
    raw = openPostgres({ ...options, url: options.url, onIdleError: (error) => state.failed(error), onMigrated });
  } else {
    const sqlite = openSqlite(options.dataDir, { lockTimeoutMs: options.statementTimeoutMs, onMigrated });
    integrity = sqlite.integrityProblems.length === 0 ? 'ok' : 'failed';
    if (integrity === 'failed') {
      logger.error('database.integrity_failed', {
        database: 'SQLite',
        problems: sqlite.integrityProblems.slice(0, 5),
        next: 'restore the latest backup (README: Backups)',
      });
    }
    raw = sqlite;
  }
  const sql = monitored(raw, state, engine === 'postgresql');
  // Each repository built once, here, over one machine with one setting for the news.
  const messages = createSubmissionMachine(sql, { events: options.events });
  const outbox = createOutbox(sql, messages);
  return {
    engine,
    ready: sql.ready,
    sql,
    messages,
    submissions: createSubmissionStore(sql, messages),
    outbox,
    spam: createSpamStore(sql, messages),
    subscribers: createSubscriberList(sql),
    files: createFileRecords(sql),
    state,
    keepsEvents: options.events,
    async health() {
      // One attempt, no wait for a lock another process holds: health must answer at once.
      let probe: 'ok' | 'locked' | 'failed' = 'ok';
      try {
        await sql.runOnce('INSERT INTO health_checks (id, checked_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at', [
          new Date().toISOString(),
        ]);
      } catch (error) {
        probe = isLocked(error) ? 'locked' : 'failed';
      }
      const [pendingMessages, failedMessages] = await Promise.all([outbox.pendingCount().catch(() => null), outbox.failedCount().catch(() => null)]);
      // Locked by a backup or the sqlite3 shell: posts wait for the lock, so the database is
      // only reported unwritable once a write has actually failed.
      const writable = probe !== 'failed' && state.failure === undefined;
      const name = engineName(engine);
      const problem = !writable
        ? `The ${name} database does not take writes: ${state.failure ?? 'the health check could not write'}`
        : integrity === 'failed'
          ? `The ${name} database failed its integrity check at start`
          : undefined;
      return { database: name, writable, integrity, pendingMessages, failedMessages, ...(problem && { problem }) };
    },
    close: () => sql.close(),
  };
}

/** Whether SQLite answered that another process holds the lock. */
function isLocked(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  // sqlite.ts wraps SQLite's busy answer in an error of its own, the original as its cause.
  const cause = (error as { cause?: unknown }).cause;
  return ((error as { errcode?: number }).errcode ?? 0) % 256 === 5 || (cause !== undefined && isLocked(cause));
}

/** A transaction's statements, each one at fault named (`nameStatement`). */
function named(tx: SqlSession): SqlSession {
  const naming =
    (text: string) =>
    (error: unknown): never => {
      if (isStatementFault(error)) nameStatement(error, text);
      throw error;
    };
  return {
    all: <T>(text: string, params?: readonly SqlValue[]) => tx.all<T>(text, params).catch(naming(text)),
    get: <T>(text: string, params?: readonly SqlValue[]) => tx.get<T>(text, params).catch(naming(text)),
    run: (text, params) => tx.run(text, params).catch(naming(text)),
  };
}

/**
 * The statements, with every outcome told to `state`: any failure, and the success of a write
 * (a read succeeding says nothing about a full disk).
 * Hint: on SQLite the health probe rewrites one small row, which fits in pages the file already
 * has, so its success does not clear a failed post (a full disk): only a real write does. On
 * PostgreSQL the failures are the server's or the network's, and the probe's round trip is proof.
 */
function monitored(sql: Sql, state: DatabaseState, probeProvesRecovery: boolean): Sql {
  // Whether every failure since the last success was a lock held elsewhere (a backup, the
  // sqlite3 shell): then the probe's committed write proves the database takes writes again,
  // and health recovers by itself instead of waiting for the next post.
  let onlyLocked = true;
  const watch = async <T>(work: Promise<T>, write: boolean, statement?: string): Promise<T> => {
    try {
      const result = await work;
      if (write) {
        state.succeeded();
        onlyLocked = true;
      }
      return result;
    } catch (error) {
      // The statement's fault (our bug, a refused value), not the database's: health is
      // unaffected, and the error names its statement for the one line that reports it.
      if (isStatementFault(error)) {
        if (statement !== undefined) nameStatement(error, statement);
        throw error;
      }
      onlyLocked = (state.failure === undefined || onlyLocked) && isLocked(error);
      state.failed(error);
      throw error;
    }
  };
  return {
    engine: sql.engine,
    ready: sql.ready,
    all: (text, params) => watch(sql.all(text, params), false, text),
    get: (text, params) => watch(sql.get(text, params), false, text),
    run: (text, params) => watch(sql.run(text, params), true, text),
    transaction: (work, options) =>
      watch(
        sql.transaction((tx) => work(named(tx)), options),
        true,
      ),
    // A probe that finds the file locked has not failed: it did not wait, by design.
    runOnce: async (text, params) => {
      try {
        const result = await sql.runOnce(text, params);
        if (probeProvesRecovery || onlyLocked) {
          state.succeeded();
          onlyLocked = true;
        }
        return result;
      } catch (error) {
        if (!isLocked(error)) state.failed(error);
        throw error;
      }
    },
    close: () => sql.close(),
  };
}
