import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { MIGRATIONS, type OnMigrated } from './migrations.ts';
import type { Sql, SqlSession, SqlValue, TransactionOptions } from './sql.ts';

/** The one SQLite file that holds submissions, their delivery and local subscribers. */
export const DATABASE_FILE = 'forms.db';

/** How the SQLite store waits for a lock another process holds. */
export type SqliteOptions = {
  /** The longest a statement waits for a lock held elsewhere before it fails. */
  lockTimeoutMs: number;
  /** Told of each migration step applied. */
  onMigrated?: OnMigrated | undefined;
};

/** The SQLite store's connection, with what health reads beside the statements. */
export type SqliteSql = Sql & {
  /** The problems `PRAGMA integrity_check` found when the file was opened (empty: none). */
  readonly integrityProblems: readonly string[];
};

/**
 * Opens (creating if needed) the database in `dataDir`, in WAL mode so the command-line tools
 * can read while the server writes, and applies the migrations it lacks.
 * Hint: `busy_timeout` is 0 once open: node:sqlite is synchronous, and SQLite's own wait for a
 * lock would freeze the whole process (every page, health); a statement that finds the file
 * locked is retried here after a timer instead, with backoff, up to `lockTimeoutMs`.
 */
export function openSqlite(dataDir: string, { lockTimeoutMs, onMigrated }: SqliteOptions): SqliteSql {
  mkdirSync(dataDir, { recursive: true });
  const db = new DatabaseSync(join(dataDir, DATABASE_FILE));
  // While opening nothing else runs yet, so waiting inside SQLite freezes nobody.
  db.exec(`PRAGMA busy_timeout = ${lockTimeoutMs}`);
  db.exec('PRAGMA journal_mode = WAL');
  migrate(db, onMigrated);
  db.exec('PRAGMA foreign_keys = ON');
  // SQLite's lower() folds ASCII only: searches fold with JavaScript's rules, as PostgreSQL's lower() does under UTF-8.
  db.function('fold', { deterministic: true }, (value) => (typeof value === 'string' ? value.toLowerCase() : value));
  const integrityProblems = (db.prepare('PRAGMA integrity_check').all() as { integrity_check: string }[])
    .map((row) => row.integrity_check)
    .filter((line) => line !== 'ok');
  db.exec('PRAGMA busy_timeout = 0');

  const statements = new Map<string, StatementSync>();
  const prepare = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  const direct: SqlSession = {
    all: async <T>(sql: string, params: readonly SqlValue[] = []) => prepare(sql).all(...params) as T[],
    get: async <T>(sql: string, params: readonly SqlValue[] = []) => prepare(sql).get(...params) as T | undefined,
    run: async (sql, params = []) => ({ changes: Number(prepare(sql).run(...params).changes) }),
  };

  // One connection: a transaction's statements must not interleave with another request's, so
  // everything takes turns. The turn is given up while waiting for another process's lock.
  let turn: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const result = turn.then(work);
    turn = result.catch(() => {});
    return result;
  };
  const withRetry = async <T>(work: () => Promise<T>, retry = true): Promise<T> => {
    const deadline = Date.now() + lockTimeoutMs;
    for (let wait = 2; ; wait = Math.min(wait * 2, 100)) {
      try {
        return await inTurn(work);
      } catch (error) {
        if (!retry) throw error;
        if (!isBusy(error) || Date.now() + wait > deadline) throw busyOr(error, lockTimeoutMs);
      }
      await sleep(wait);
    }
  };

  // Group commit: a transaction that may wait (`together`, a visitor's message) opens a batch
  // that gathers every transaction asked for until the event loop's next turn; they are
  // committed together, each in a savepoint of its own, with one COMMIT and so one fsync for
  // all. Nobody is answered before that COMMIT: a 200 still means stored on disk. With
  // synchronous=FULL the fsync is most of a stored message's cost, and under load many posts
  // arrive while one commit waits on the disk. The batch takes its place in the turns at once,
  // so a statement asked for after a transaction still runs after it.
  type Pending = { work: (tx: SqlSession) => Promise<unknown>; resolve: (value: unknown) => void; reject: (error: unknown) => void };
  type Done = { ok: true; value: unknown } | { ok: false; error: unknown };
  let gathering: Pending[] | undefined;
  const commitTogether = async (batch: readonly Pending[]): Promise<Done[]> => {
    db.exec('BEGIN IMMEDIATE');
    try {
      const done: Done[] = [];
      for (const item of batch) {
        // Alone, a transaction fails as a whole, as it always did (and a busy one is retried).
        if (batch.length === 1) {
          done.push({ ok: true, value: await item.work(direct) });
          break;
        }
        db.exec('SAVEPOINT one');
        try {
          done.push({ ok: true, value: await item.work(direct) });
          db.exec('RELEASE one');
        } catch (error) {
          // A busy file, or an error after which SQLite rolled everything back itself: all of them fail (or are retried).
          if (isBusy(error) || !db.isTransaction) throw error;
          db.exec('ROLLBACK TO one');
          db.exec('RELEASE one');
          done.push({ ok: false, error });
        }
      }
      db.exec('COMMIT');
      return done;
    } catch (error) {
      rollback(db);
      throw error;
    }
  };
  const transaction = <T>(work: (tx: SqlSession) => Promise<T>, options?: TransactionOptions): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const item = { work, resolve, reject } as Pending;
      if (gathering) return void gathering.push(item);
      const batch: Pending[] = [item];
      if (options?.together) gathering = batch;
      withRetry(async () => {
        if (gathering === batch) {
          await new Promise((next) => setImmediate(next));
          gathering = undefined;
        }
        return commitTogether(batch);
      }).then(
        (done) => {
          for (const [i, result] of done.entries()) {
            if (result.ok) batch[i]!.resolve(result.value);
            else batch[i]!.reject(result.error);
          }
        },
        (error: unknown) => {
          for (const pending of batch) pending.reject(error);
        },
      );
    });

  let closed = false;
  return {
    engine: 'sqlite',
    ready: Promise.resolve(),
    integrityProblems,
    all: (sql, params) => withRetry(() => direct.all(sql, params)),
    get: (sql, params) => withRetry(() => direct.get(sql, params)),
    run: (sql, params) => withRetry(() => direct.run(sql, params)),
    runOnce: (sql, params) => withRetry(() => direct.run(sql, params), false),
    transaction,
    async close() {
      if (closed) return;
      closed = true;
      await inTurn(async () => db.close());
    },
  };
}

/**
 * Ends a failed transaction. SQLite has already rolled back by itself after some errors (a
 * full disk, an I/O error); the rollback's own complaint would then hide the real cause.
 */
function rollback(db: DatabaseSync): void {
  if (db.isTransaction) db.exec('ROLLBACK');
}

/** Whether SQLite answered "database is locked" (SQLITE_BUSY and its extended codes). */
function isBusy(error: unknown): boolean {
  return typeof error === 'object' && error !== null && ((error as { errcode?: number }).errcode ?? 0) % 256 === 5;
}

function busyOr(error: unknown, lockTimeoutMs: number): unknown {
  return isBusy(error) ? new Error(`the database file stayed locked by another process for ${lockTimeoutMs} ms`, { cause: error }) : error;
}

function migrate(db: DatabaseSync, onMigrated: OnMigrated | undefined): void {
  // Step 3 rebuilds a table, which must run with foreign keys off (or dropping the old table
  // would delete the history with it); they are checked again before each commit.
  db.exec('PRAGMA foreign_keys = OFF');
  // The version is read inside the write lock: the server and a command-line tool may open
  // the same file at once, and only one of them may apply a step.
  for (;;) {
    db.exec('BEGIN IMMEDIATE');
    try {
      const { user_version: applied } = db.prepare('PRAGMA user_version').get() as { user_version: number };
      if (applied >= MIGRATIONS.length) {
        db.exec('COMMIT');
        return;
      }
      db.exec(MIGRATIONS[applied]!.sqlite);
      const broken = db.prepare('PRAGMA foreign_key_check').all();
      if (broken.length > 0) throw new Error(`migration ${applied + 1} left ${broken.length} rows without their parent`);
      db.exec(`PRAGMA user_version = ${applied + 1}`);
      db.exec('COMMIT');
      onMigrated?.({ version: applied + 1, name: MIGRATIONS[applied]!.name });
    } catch (error) {
      rollback(db);
      throw error;
    }
  }
}
