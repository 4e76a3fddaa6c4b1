import type { Role, SessionStage } from '../access/permissions.ts';
import type { Sql } from '../sql/sql.ts';
import type { FoundSession, SessionMethod, SessionStore } from './session.ts';

/** What the store needs to know of the configuration: whether the first owner (ADMIN_PASSWORD_HASH's) may resume. */
export type SessionStoreOptions = {
  /**
   * Whether ADMIN_PASSWORD_HASH is set. The first owner exists for sign-in and sessions only
   * while it is: without it, none of their sessions resumes (their row may stay, for a hash set
   * again). Only with it is a row of `admin_sessions` (made by the version before people) the
   * first owner's, for the rest of its 12 hours.
   */
  legacyOwner: boolean;
};

type Row = {
  token_hash: string;
  created_at: string;
  last_seen_at: string;
  user_id: number | string;
  stage: string;
  method: string;
  name: string;
  email: string | null;
  role: string;
  forms: string | null;
};

const PERSON = 'u.id AS user_id, u.name, u.email, u.role, u.forms';

/**
 * The people's sessions in the database, so that every instance knows them: new ones in
 * `admin_person_sessions`, each read with its person (`admin_users`) at every request, so a
 * removed person's session ends at their next click and a changed role applies there.
 * Hint: an instance of the version before people reads `admin_sessions` alone and takes every
 * row there for the owner, so no person's session is ever written there (decision 0273); its own
 * rows still resume here as the first owner's while `legacyOwner` and that owner exist.
 */
export function createSessionStore(sql: Sql, { legacyOwner }: SessionStoreOptions = { legacyOwner: false }): SessionStore {
  return {
    async create({ tokenHash, createdAt, lastSeenAt, userId, stage, method }) {
      await sql.run('INSERT INTO admin_person_sessions (token_hash, user_id, stage, method, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?)', [
        tokenHash,
        userId,
        stage,
        method,
        createdAt.toISOString(),
        lastSeenAt.toISOString(),
      ]);
    },
    async find(tokenHash) {
      const row = await sql.get<Row>(
        `SELECT s.token_hash, s.created_at, s.last_seen_at, s.stage, s.method, ${PERSON}
         FROM admin_person_sessions s JOIN admin_users u ON u.id = s.user_id WHERE s.token_hash = ?${legacyOwner ? '' : " AND u.origin <> 'env'"}`,
        [tokenHash],
      );
      if (row) return toFound(row, false);
      if (!legacyOwner) return undefined;
      const legacy = await sql.get<Row>(
        `SELECT s.token_hash, s.created_at, s.last_seen_at, 'full' AS stage, 'password' AS method, ${PERSON}
         FROM admin_sessions s JOIN admin_users u ON u.origin = 'env' WHERE s.token_hash = ?`,
        [tokenHash],
      );
      return legacy && toFound(legacy, true);
    },
    async touch(tokenHash, at) {
      // A token's hash is in one table or the other; both are asked rather than remembering which.
      await sql.run('UPDATE admin_person_sessions SET last_seen_at = ? WHERE token_hash = ?', [at.toISOString(), tokenHash]);
      await sql.run('UPDATE admin_sessions SET last_seen_at = ? WHERE token_hash = ?', [at.toISOString(), tokenHash]);
    },
    async delete(tokenHash) {
      const person = await sql.run('DELETE FROM admin_person_sessions WHERE token_hash = ?', [tokenHash]);
      const legacy = await sql.run('DELETE FROM admin_sessions WHERE token_hash = ?', [tokenHash]);
      return person.changes + legacy.changes > 0;
    },
    async deleteExpired(idleBefore, createdBefore) {
      let swept = 0;
      for (const table of ['admin_person_sessions', 'admin_sessions']) {
        const { changes } = await sql.run(`DELETE FROM ${table} WHERE last_seen_at <= ? OR created_at <= ?`, [
          idleBefore.toISOString(),
          createdBefore.toISOString(),
        ]);
        swept += changes;
      }
      return swept;
    },
  };
}

function toFound(row: Row, legacy: boolean): FoundSession {
  return {
    tokenHash: row.token_hash,
    createdAt: new Date(row.created_at),
    lastSeenAt: new Date(row.last_seen_at),
    userId: Number(row.user_id),
    stage: row.stage as SessionStage,
    method: row.method as SessionMethod,
    person: {
      id: Number(row.user_id),
      name: row.name,
      email: row.email,
      role: row.role as Role,
      forms: row.forms === null ? null : (JSON.parse(row.forms) as string[]),
    },
    legacy,
  };
}
