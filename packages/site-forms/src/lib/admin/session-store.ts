import type { Sql } from '../sql/sql.ts';
import type { SessionRecord, SessionStore } from './session.ts';

type Row = { token_hash: string; created_at: string; last_seen_at: string };

/** The owner's sessions in the database (table `admin_sessions`), so that every instance knows them. */
export function createSessionStore(sql: Sql): SessionStore {
  return {
    async create({ tokenHash, createdAt, lastSeenAt }) {
      await sql.run('INSERT INTO admin_sessions (token_hash, created_at, last_seen_at) VALUES (?, ?, ?)', [
        tokenHash,
        createdAt.toISOString(),
        lastSeenAt.toISOString(),
      ]);
    },
    async find(tokenHash) {
      const row = await sql.get<Row>('SELECT token_hash, created_at, last_seen_at FROM admin_sessions WHERE token_hash = ?', [tokenHash]);
      return row && toRecord(row);
    },
    async touch(tokenHash, at) {
      await sql.run('UPDATE admin_sessions SET last_seen_at = ? WHERE token_hash = ?', [at.toISOString(), tokenHash]);
    },
    async delete(tokenHash) {
      await sql.run('DELETE FROM admin_sessions WHERE token_hash = ?', [tokenHash]);
    },
    async deleteExpired(idleBefore, createdBefore) {
      const { changes } = await sql.run('DELETE FROM admin_sessions WHERE last_seen_at <= ? OR created_at <= ?', [
        idleBefore.toISOString(),
        createdBefore.toISOString(),
      ]);
      return changes;
    },
  };
}

function toRecord(row: Row): SessionRecord {
  return { tokenHash: row.token_hash, createdAt: new Date(row.created_at), lastSeenAt: new Date(row.last_seen_at) };
}
