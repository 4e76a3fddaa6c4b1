import type { ContactInput } from '../forms/contact.ts';
import type { Sql } from '../store/sql.ts';

/** Where validated contact submissions are kept until they are delivered. */
export interface SubmissionStore {
  /** Stores one submission durably and answers its id; rejects when it cannot. */
  save(input: ContactInput): Promise<number>;
}

/**
 * The outbox's intake: every submission starts `pending` and due at once.
 * Hint: without a mail server they simply wait, and are delivered once one is configured.
 */
export function createSubmissionStore(sql: Sql): SubmissionStore {
  return {
    async save(input) {
      const now = new Date().toISOString();
      const row = await sql.transaction((tx) =>
        tx.get<{ id: number | string }>(
          `INSERT INTO submissions (created_at, name, email, message, status, next_attempt_at)
           VALUES (?, ?, ?, ?, 'pending', ?) RETURNING id`,
          [now, input.name, input.email, input.message, now],
        ),
      );
      return Number(row!.id);
    },
  };
}
