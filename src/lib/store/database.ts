import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/** The one SQLite file that holds submissions, their delivery and local subscribers. */
export const DATABASE_FILE = 'forms.db';

/**
 * The schema, one step per entry; a database records how many it has applied in
 * `user_version`, so old files are upgraded in place and steps never change once shipped.
 */
const MIGRATIONS: string[] = [
  `CREATE TABLE submissions (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     created_at TEXT NOT NULL,
     name TEXT NOT NULL,
     email TEXT NOT NULL,
     message TEXT NOT NULL,
     status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at TEXT,
     last_error TEXT,
     sent_at TEXT
   );
   CREATE INDEX submissions_due ON submissions (status, next_attempt_at);
   CREATE TABLE subscribers (
     email TEXT PRIMARY KEY,
     created_at TEXT NOT NULL
   );`,
  // The delivery history of each contact message, one row per attempt or requeue, so the
  // inbox can show what happened and the worker can tell when a round of retries began.
  `CREATE TABLE delivery_attempts (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     submission_id INTEGER NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
     attempted_at TEXT NOT NULL,
     outcome TEXT NOT NULL CHECK (outcome IN ('sent', 'retrying', 'failed', 'requeued')),
     error TEXT
   );
   CREATE INDEX delivery_attempts_submission ON delivery_attempts (submission_id, id);`,
];

/**
 * Opens (creating if needed) the database in `dataDir`, in WAL mode so the inbox
 * command can read while the server writes.
 */
export function openDatabase(dataDir: string): DatabaseSync {
  mkdirSync(dataDir, { recursive: true });
  const db = new DatabaseSync(join(dataDir, DATABASE_FILE));
  db.exec('PRAGMA journal_mode = WAL');
  // Several processes (server, inbox command) share the file: wait for a lock instead of failing.
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec('PRAGMA foreign_keys = ON');
  migrate(db);
  return db;
}

function migrate(db: DatabaseSync): void {
  // The version is read inside the write lock: the server and the inbox command may open
  // the same file at once, and only one of them may apply a step.
  for (;;) {
    db.exec('BEGIN IMMEDIATE');
    try {
      const { user_version: applied } = db.prepare('PRAGMA user_version').get() as { user_version: number };
      if (applied >= MIGRATIONS.length) {
        db.exec('COMMIT');
        return;
      }
      db.exec(MIGRATIONS[applied]!);
      db.exec(`PRAGMA user_version = ${applied + 1}`);
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  }
}

/** Runs `work` in one transaction: all of it is stored, or none. */
export function transaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}
