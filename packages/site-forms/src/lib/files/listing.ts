import type { SqlSession } from '../sql/sql.ts';
import type { StoredFile } from './files.ts';

/** What an export says of a file: the message and field it belongs to, its name and size. */
export type ListedFile = Pick<StoredFile, 'submissionId' | 'field' | 'name' | 'size'>;

/**
 * The files of several messages in one statement (an export's batch), each message's in the
 * order they were sent: one query a batch rather than one a message.
 */
export async function filesOfMessages(sql: SqlSession, ids: readonly number[]): Promise<ListedFile[]> {
  if (ids.length === 0) return [];
  const rows = await sql.all<{ submission_id: number | string; field: string; name: string; size: number | string }>(
    `SELECT submission_id, field, name, size FROM files WHERE submission_id IN (${ids.map(() => '?').join(', ')}) ORDER BY submission_id, position`,
    ids,
  );
  return rows.map((row) => ({ submissionId: Number(row.submission_id), field: row.field, name: row.name, size: Number(row.size) }));
}
