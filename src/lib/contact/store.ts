import type { DatabaseSync } from 'node:sqlite';
import type { ContactInput } from '../forms/contact.ts';
import { transaction } from '../store/database.ts';

/** Where validated contact submissions are kept until they are delivered. */
export interface SubmissionStore {
  /** Stores one submission durably and returns its id; throws when it cannot. */
  save(input: ContactInput): number;
}

/**
 * The SQLite outbox: every submission starts `pending` and due at once.
 * Hint: without a mail server they simply wait, and are delivered once one is configured.
 */
export function createSubmissionStore(db: DatabaseSync): SubmissionStore {
  const insert = db.prepare(
    `INSERT INTO submissions (created_at, name, email, message, status, next_attempt_at)
     VALUES (?, ?, ?, ?, 'pending', ?)`,
  );
  return {
    save(input) {
      const now = new Date().toISOString();
      return transaction(db, () => Number(insert.run(now, input.name, input.email, input.message, now).lastInsertRowid));
    },
  };
}
