import type { ContactInput } from '../forms/contact.ts';
import type { Sql } from '../sql/sql.ts';
import type { SubmissionMachine } from '../submissions/machine.ts';

/** Where validated contact submissions are kept until they are delivered. */
export interface SubmissionStore {
  /** Stores one submission durably and answers its id; rejects when it cannot. */
  save(input: ContactInput): Promise<number>;
  /** Stores one submission, `pending` or held, consuming its proof in the same transaction. */
  receive: SubmissionMachine['receive'];
  /** The sender's confirmation of a message held for its missing proof alone: queued once (`changed`). */
  confirmBySender(id: number): ReturnType<SubmissionMachine['confirmBySender']>;
  /** The form a stored submission came from (`contact`, or an owner's form's name), or `undefined` when it is gone. */
  formOf(id: number): Promise<string | undefined>;
}

/**
 * The outbox's intake: every submission starts `pending` and due at once, unless held.
 * Hint: without a mail server they simply wait, and are delivered once one is configured.
 */
export function createSubmissionStore(sql: Sql, machine: SubmissionMachine): SubmissionStore {
  return {
    save: async ({ name, email, message }) => (await machine.receive({ name, email, message, held: undefined })).id,
    receive: (message) => machine.receive(message),
    confirmBySender: (id) => machine.confirmBySender(id),
    formOf: async (id) => (await sql.get<{ form: string }>('SELECT form FROM submissions WHERE id = ?', [id]))?.form,
  };
}
