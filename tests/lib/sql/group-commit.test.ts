import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { openSqlite, type SqliteSql } from '../../../packages/site-forms/src/lib/sql/sqlite.ts';

// Group commit (sql/sqlite.ts): transactions asked for `together` share one COMMIT, each
// still all or nothing, each answered only once that COMMIT is done.
describe('SQLite: transactions committed together', () => {
  let dir: string;
  let sql: SqliteSql;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'site-forms-group-'));
    sql = openSqlite(dir, { lockTimeoutMs: 2_000 });
  });
  afterEach(async () => {
    await sql.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const add = (email: string, fail?: Error) =>
    sql.transaction(
      async (tx) => {
        await tx.run('INSERT INTO subscribers (email, created_at) VALUES (?, ?)', [email, 't']);
        await tx.run('INSERT INTO subscribers (email, created_at) VALUES (?, ?)', [`second-${email}`, 't']);
        if (fail) throw fail;
        return email;
      },
      { together: true },
    );
  const emails = async () => (await sql.all<{ email: string }>('SELECT email FROM subscribers ORDER BY email')).map((row) => row.email);

  test('one that fails leaves nothing and its error; the others asked for with it are stored', async () => {
    const failing = new Error('a bug in the work');
    const results = await Promise.allSettled([add('a@example.org'), add('b@example.org', failing), add('c@example.org')]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 'a@example.org' },
      { status: 'rejected', reason: failing },
      { status: 'fulfilled', value: 'c@example.org' },
    ]);
    expect(await emails()).toEqual(['a@example.org', 'c@example.org', 'second-a@example.org', 'second-c@example.org']);
  });

  test('answered only once committed: another connection sees every row of a settled transaction', async () => {
    const other = new DatabaseSync(join(dir, 'forms.db'));
    try {
      const seen = await Promise.all(
        ['a@example.org', 'b@example.org'].map((email) =>
          add(email).then(() => (other.prepare('SELECT count(*) AS n FROM subscribers WHERE email = ?').get(email) as { n: number }).n),
        ),
      );
      expect(seen).toEqual([1, 1]);
    } finally {
      other.close();
    }
  });

  test('a file locked by another process: the whole group waits and is stored once the lock goes', async () => {
    const other = new DatabaseSync(join(dir, 'forms.db'));
    other.exec('BEGIN IMMEDIATE');
    setTimeout(() => other.exec('ROLLBACK'), 50);
    try {
      await expect(Promise.all([add('a@example.org'), add('b@example.org')])).resolves.toEqual(['a@example.org', 'b@example.org']);
    } finally {
      other.close();
    }
    expect(await emails()).toHaveLength(4);
  });

  test('a statement asked for after a transaction still runs after it', async () => {
    const adding = add('a@example.org');
    const count = sql.get<{ n: number }>('SELECT count(*) AS n FROM subscribers');
    await adding;
    expect((await count)?.n).toBe(2);
  });
});
