import { randomBytes } from 'node:crypto';
import type { Sql, SqlSession } from '../sql/sql.ts';
import type { FileStorage } from './storage.ts';

/** A file kept with a message: `name` is the visitor's, for display and Content-Disposition only, never a path. */
export type StoredFile = {
  /** Random and unguessable: the file's address in the admin and in signed links. */
  id: string;
  submissionId: number;
  /** The form field it was sent in. */
  field: string;
  name: string;
  size: number;
  /** The MIME type read from the file's own bytes. */
  type: string;
  /** Where the storage keeps its bytes (storage.ts). */
  storageKey: string;
  createdAt: string;
};

/** A file about to be recorded with its message: everything but the message's id, which its transaction gives. */
export type NewFile = Omit<StoredFile, 'submissionId' | 'createdAt'>;

/** The files of messages, as the store keeps them (the `files` table). */
export interface FileRecords {
  /** The files of one message, in the order they were sent. */
  filesOf(submissionId: number): Promise<StoredFile[]>;
  /** One file by its id, or `undefined`. */
  fileById(id: string): Promise<StoredFile | undefined>;
  /**
   * One file by its id while its message is kept and not marked as spam by the owner (or about to
   * be, once its send ends), or `undefined`: what a signed link may open (issue 39 item 15).
   * Hint: a message the filter holds keeps its files' links, which its `contact.held` alert carries.
   */
  linkedFile(id: string): Promise<StoredFile | undefined>;
  /**
   * Removes from the storage, then from the table, the files of messages that are gone (deleted,
   * erased, past retention, spam cleared), at most `limit` a call; answers how many went.
   * Hint: the object first, so a failure leaves the row to find again; a missing object is no failure.
   */
  sweep(storage: FileStorage, limit?: number): Promise<number>;
  /** Which of `keys` a row names (one query for a batch of the orphan sweep, up to 1000 keys). */
  recordedKeys(keys: readonly string[]): Promise<Set<string>>;
  /** Whether any file is recorded at all: the orphan sweep removes nothing from beside an empty table (decision 0184). */
  anyRecorded(): Promise<boolean>;
}

/** A new file's id: 24 characters of base64url, 144 random bits. */
export function newFileId(): string {
  return randomBytes(18).toString('base64url');
}

type Row = {
  id: string;
  submission_id: number | string;
  field: string;
  name: string;
  size: number | string;
  type: string;
  storage_key: string;
  created_at: string;
};

const COLUMNS = 'id, submission_id, field, name, size, type, storage_key, created_at';

function fromRow(row: Row): StoredFile {
  return {
    id: row.id,
    submissionId: Number(row.submission_id),
    field: row.field,
    name: row.name,
    size: Number(row.size),
    type: row.type,
    storageKey: row.storage_key,
    createdAt: row.created_at,
  };
}

/** Writes a message's files in its own transaction (submissions/machine.ts `receive`), so a message and its files are stored together or not at all. */
export async function recordFiles(tx: SqlSession, submissionId: number, files: readonly NewFile[], at: string): Promise<void> {
  for (const [position, file] of files.entries()) {
    await tx.run(`INSERT INTO files (${COLUMNS}, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      file.id,
      submissionId,
      file.field,
      file.name,
      file.size,
      file.type,
      file.storageKey,
      at,
      position,
    ]);
  }
}

/** The repository over the store's SQL (SQLite or PostgreSQL). */
export function createFileRecords(sql: Sql): FileRecords {
  return {
    filesOf: async (submissionId) =>
      (await sql.all<Row>(`SELECT ${COLUMNS} FROM files WHERE submission_id = ? ORDER BY position`, [submissionId])).map(fromRow),
    fileById: async (id) => {
      const row = await sql.get<Row>(`SELECT ${COLUMNS} FROM files WHERE id = ?`, [id]);
      return row && fromRow(row);
    },
    linkedFile: async (id) => {
      const columns = COLUMNS.split(', ')
        .map((column) => `files.${column}`)
        .join(', ');
      const row = await sql.get<Row>(
        `SELECT ${columns} FROM files JOIN submissions ON submissions.id = files.submission_id
         WHERE files.id = ? AND submissions.requested IS NULL
           AND NOT (submissions.status = 'spam' AND submissions.spam_reasons LIKE ?)`,
        [id, '%"marked-by-owner"%'],
      );
      return row && fromRow(row);
    },
    async sweep(storage, limit = 100) {
      const orphans = await sql.all<{ id: string; storage_key: string }>(
        'SELECT id, storage_key FROM files WHERE NOT EXISTS (SELECT 1 FROM submissions WHERE submissions.id = files.submission_id) LIMIT ?',
        [limit],
      );
      let removed = 0;
      for (const orphan of orphans) {
        await storage.remove(orphan.storage_key);
        removed += (await sql.run('DELETE FROM files WHERE id = ?', [orphan.id])).changes;
      }
      return removed;
    },
    async recordedKeys(keys) {
      if (keys.length === 0) return new Set();
      const rows = await sql.all<{ storage_key: string }>(`SELECT storage_key FROM files WHERE storage_key IN (${keys.map(() => '?').join(', ')})`, keys);
      return new Set(rows.map((row) => row.storage_key));
    },
    anyRecorded: async () => (await sql.get('SELECT 1 AS one FROM files LIMIT 1')) !== undefined,
  };
}
