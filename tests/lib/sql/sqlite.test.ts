import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, test } from 'vitest';
import { MIGRATIONS } from '../../../packages/site-forms/src/lib/sql/migrations.ts';
import { openSqlite, type SqliteSql } from '../../../packages/site-forms/src/lib/sql/sqlite.ts';
import { holdWriteLock } from '../../support/sqlite-lock.ts';

// The SQLite store itself (sql/sqlite.ts), opened directly on files of the test's own: how it
// opens a file, waits for or refuses a lock, and ends a transaction that failed.
const dirs: string[] = [];
const opened: SqliteSql[] = [];
const holders: Array<{ kill(): boolean }> = [];
afterEach(async () => {
  for (const holder of holders.splice(0)) holder.kill();
  for (const sql of opened.splice(0)) await sql.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'site-forms-sqlite-'));
  dirs.push(dir);
  return dir;
};
const open = (dir: string, lockTimeoutMs = 2_000, onMigrated?: (step: { version: number; name: string }) => void) => {
  const sql = openSqlite(dir, { lockTimeoutMs, onMigrated });
  opened.push(sql);
  return sql;
};
const insert = 'INSERT INTO subscribers (email, created_at) VALUES (?, ?)';
const emails = async (sql: SqliteSql) => (await sql.all<{ email: string }>('SELECT email FROM subscribers ORDER BY email')).map((row) => row.email);
describe('opening a SQLite file', () => {
  test('creates the folders, and the file is in WAL mode, checks foreign keys and never waits inside SQLite once open', async () => {
    const sql = open(join(newDir(), 'data', 'forms'));
    expect(sql.engine).toBe('sqlite');
    await expect(sql.ready).resolves.toBeUndefined();
    expect(sql.integrityProblems).toEqual([]);
    await expect(sql.get('PRAGMA journal_mode')).resolves.toEqual({ journal_mode: 'wal' });
    await expect(sql.get('PRAGMA foreign_keys')).resolves.toEqual({ foreign_keys: 1 });
    await expect(sql.get('PRAGMA busy_timeout')).resolves.toEqual({ timeout: 0 });
    await expect(sql.all('SELECT 1 AS one')).resolves.toEqual([{ one: 1 }]);
    await expect(sql.run('DELETE FROM subscribers')).resolves.toEqual({ changes: 0 });
    await expect(sql.runOnce('DELETE FROM subscribers')).resolves.toEqual({ changes: 0 });
    await expect(sql.run("INSERT INTO delivery_attempts (submission_id, attempted_at, outcome) VALUES (99, 't', 'failed')")).rejects.toThrow(
      'FOREIGN KEY constraint failed',
    );
  });

  test('fold() lowercases text beyond ASCII, as PostgreSQL does, leaves other values be, and may serve an index', async () => {
    const sql = open(newDir());
    await expect(sql.get("SELECT fold('ÄDA Ørsted') AS text, fold(NULL) AS absent, fold(42) AS number")).resolves.toEqual({
      text: 'äda ørsted',
      absent: null,
      number: 42,
    });
    // SQLite takes only a deterministic function into an index.
    await expect(sql.run('CREATE INDEX subscribers_folded ON subscribers (fold(email))')).resolves.toEqual({ changes: 0 });
  });

  test('applies every step once, telling each with its number; a file already up to date is told nothing', async () => {
    const dir = newDir();
    const steps: Array<{ version: number; name: string }> = [];
    await open(dir, 2_000, (step) => steps.push(step)).close();
    expect(steps.map((step) => step.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect([steps[0], steps[13], steps[14], steps[15], steps[16], steps[17], steps[18], steps[19]]).toEqual([
      { version: 1, name: 'submissions and subscribers' },
      { version: 14, name: 'automatic replies: only to a person, so many an hour' },
      { version: 15, name: 'newsletter consents: the links of a mail sent again' },
      { version: 16, name: 'the client of each draft' },
      { version: 17, name: 'leases that name their worker' },
      { version: 18, name: 'files with a message' },
      { version: 19, name: 'queue times as timestamptz on PostgreSQL' },
      { version: 20, name: 'people, passkeys, sign-in links and API keys' },
    ]);
    const again: unknown[] = [];
    const sql = open(dir, 2_000, (step) => again.push(step));
    expect(again).toEqual([]);
    await expect(sql.get('PRAGMA user_version')).resolves.toEqual({ user_version: 20 });
  });

  test('a file that fails its integrity check opens, and says what is wrong', async () => {
    const dir = newDir();
    // An index whose definition no longer matches its entries, as a damaged file can have.
    const damaged = new DatabaseSync(join(dir, 'forms.db'), { defensive: false });
    damaged.exec('CREATE TABLE extra (a); CREATE INDEX extra_a ON extra (a); INSERT INTO extra VALUES (1), (2), (3); PRAGMA writable_schema = ON');
    damaged.exec("UPDATE sqlite_schema SET sql = 'CREATE INDEX extra_a ON extra (a DESC)' WHERE name = 'extra_a'");
    damaged.close();
    expect(open(dir).integrityProblems).toEqual(['row 1 missing from index extra_a', 'row 2 missing from index extra_a']);
  });

  test('while another process holds the write lock, opening waits for it, up to the lock timeout', async () => {
    const dir = newDir();
    await open(dir).close();
    holders.push(await holdWriteLock(join(dir, 'forms.db'), { releaseAfterMs: 300 }));
    const start = Date.now();
    const sql = open(dir, 5_000);
    expect(Date.now() - start).toBeGreaterThanOrEqual(200);
    await expect(emails(sql)).resolves.toEqual([]);

    holders.push(await holdWriteLock(join(dir, 'forms.db')));
    expect(() => open(dir, 100)).toThrow(expect.objectContaining({ message: 'database is locked', errcode: 5 }));
  });

  test('closed, it runs no more statements; closing twice is closing once', async () => {
    const sql = openSqlite(newDir(), { lockTimeoutMs: 1_000 });
    await sql.close();
    await expect(sql.all('SELECT 1')).rejects.toThrow('database is not open');
    await expect(sql.close()).resolves.toBeUndefined();
  });
});

describe('a SQLite file of step 2 with history whose message is gone', () => {
  const orphaned = () => {
    const dir = newDir();
    const old = new DatabaseSync(join(dir, 'forms.db'), { enableForeignKeyConstraints: false });
    old.exec(MIGRATIONS[0]!.sqlite);
    old.exec(MIGRATIONS[1]!.sqlite);
    old.exec('PRAGMA user_version = 2');
    old.exec("INSERT INTO delivery_attempts (submission_id, attempted_at, outcome) VALUES (99, '2026-05-01T08:00:00.000Z', 'failed')");
    old.close();
    return dir;
  };

  test('is not upgraded: step 3 is refused, rolled back, and the file left free for the owner to mend it', async () => {
    const dir = orphaned();
    expect(() => openSqlite(dir, { lockTimeoutMs: 1_000 })).toThrow('migration 3 left 1 rows without their parent');
    // Another connection can write at once: the failed step holds no lock.
    const other = new DatabaseSync(join(dir, 'forms.db'), { timeout: 0 });
    try {
      expect(other.prepare('PRAGMA user_version').get()).toEqual({ user_version: 2 });
      expect(Number(other.prepare('DELETE FROM delivery_attempts WHERE submission_id = 99').run().changes)).toBe(1);
    } finally {
      other.close();
    }
    await expect(open(dir).get('PRAGMA user_version')).resolves.toEqual({ user_version: 20 });
  });
});

describe('SQLite statements and a lock held elsewhere', () => {
  test('runOnce answers SQLite’s own busy error at once; run waits up to the timeout, then names the lock', async () => {
    const dir = newDir();
    const sql = open(dir, 300);
    const other = new DatabaseSync(join(dir, 'forms.db'));
    other.exec('BEGIN IMMEDIATE');
    try {
      const once = sql.runOnce(insert, ['a@example.org', 't']);
      await expect(once).rejects.toMatchObject({ message: 'database is locked', errcode: 5 });
      const waiting = sql.run(insert, ['a@example.org', 't']);
      await expect(waiting).rejects.toThrow('the database file stayed locked by another process for 300 ms');
      await expect(waiting).rejects.toHaveProperty('cause.errcode', 5);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  });

  test('any other error is not retried: it is thrown at once, as it is', async () => {
    // A busy statement would be retried for 10 minutes, longer than the test may run (30 s):
    // a retried error fails the test however fast the machine, with no stopwatch.
    const sql = open(newDir(), 600_000);
    await sql.run(insert, ['a@example.org', 't']);
    await expect(sql.run(insert, ['a@example.org', 't'])).rejects.toMatchObject({ message: 'UNIQUE constraint failed: subscribers.email', errcode: 1555 });
  });
});

describe('SQLite transactions that fail', () => {
  test('what the work throws is what is thrown, even when it is not an Error', async () => {
    const sql = open(newDir());
    await expect(sql.transaction(() => Promise.reject(null))).rejects.toBeNull();
    await expect(sql.transaction(() => Promise.reject(undefined))).rejects.toBeUndefined();
    await expect(sql.transaction(() => Promise.reject('stop'), { together: true })).rejects.toBe('stop');
    await expect(sql.transaction(async (tx) => tx.run(insert, ['a@example.org', 't']))).resolves.toEqual({ changes: 1 });
  });

  test('alone, a statement after which SQLite rolled back by itself fails with its own error, and the next transaction runs', async () => {
    const sql = open(newDir());
    await sql.run(insert, ['taken@example.org', 't']);
    const failing = sql.transaction(async (tx) => {
      await tx.run(insert, ['a@example.org', 't']);
      await tx.run('INSERT OR ROLLBACK INTO subscribers (email, created_at) VALUES (?, ?)', ['taken@example.org', 't']);
    });
    await expect(failing).rejects.toThrow('UNIQUE constraint failed: subscribers.email');
    await expect(sql.transaction(async (tx) => tx.run(insert, ['b@example.org', 't']))).resolves.toEqual({ changes: 1 });
    expect(await emails(sql)).toEqual(['b@example.org', 'taken@example.org']);
  });

  test('in a group, such a statement ends every transaction of the group, with its error: nothing of them is stored', async () => {
    const sql = open(newDir());
    await sql.run(insert, ['taken@example.org', 't']);
    const add = (email: string) => sql.transaction(async (tx) => tx.run(insert, [email, 't']), { together: true });
    const results = await Promise.allSettled([
      add('a@example.org'),
      sql.transaction(async (tx) => tx.run('INSERT OR ROLLBACK INTO subscribers (email, created_at) VALUES (?, ?)', ['taken@example.org', 't']), {
        together: true,
      }),
      add('c@example.org'),
    ]);
    const unique = { status: 'rejected', reason: expect.objectContaining({ message: 'UNIQUE constraint failed: subscribers.email' }) };
    expect(results).toEqual([unique, unique, unique]);
    expect(await emails(sql)).toEqual(['taken@example.org']);
  });

  test('in a group, a transaction whose work meets SQLite’s busy answer fails the whole group: retried, then each names the lock', async () => {
    const dir = newDir();
    const sql = open(dir, 300);
    // The work writes through a second connection to the file, which the group's own write lock keeps busy.
    const side = new DatabaseSync(join(dir, 'forms.db'), { timeout: 0 });
    let tries = 0;
    const add = (email: string) => sql.transaction(async (tx) => tx.run(insert, [email, 't']), { together: true });
    try {
      const results = await Promise.allSettled([
        add('a@example.org'),
        sql.transaction(
          async () => {
            tries++;
            side.prepare(insert).run('b@example.org', 't');
          },
          { together: true },
        ),
        add('c@example.org'),
      ]);
      const locked = { status: 'rejected', reason: expect.objectContaining({ message: 'the database file stayed locked by another process for 300 ms' }) };
      expect(results).toEqual([locked, locked, locked]);
      expect(tries).toBeGreaterThan(1);
      expect(await emails(sql)).toEqual([]);
    } finally {
      side.close();
    }
  });
});

describe('SQLite group commit', () => {
  test('three transactions asked for together are one commit: the log grows by the pages of one', async () => {
    const sql = open(newDir());
    await sql.get('PRAGMA wal_checkpoint(TRUNCATE)');
    const add = (email: string) => sql.transaction(async (tx) => tx.run(insert, [email, 't']), { together: true });
    await Promise.all([add('a@example.org'), add('b@example.org'), add('c@example.org')]);
    // One commit writes the table's page and its key's page; three commits would write six.
    await expect(sql.get('PRAGMA wal_checkpoint(PASSIVE)')).resolves.toEqual({ busy: 0, log: 2, checkpointed: 2 });
  });
});
