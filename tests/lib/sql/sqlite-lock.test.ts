import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';

const input = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more.', honeypot: '' };

describe('a SQLite file locked by another connection', () => {
  let dir: string;
  let store: Store;
  let logs: Array<Record<string, unknown>>;
  let other: DatabaseSync;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'site-forms-lock-'));
    logs = [];
    store = openStore(
      { url: undefined, dataDir: dir, poolSize: 1, connectTimeoutMs: 1_000, statementTimeoutMs: 400, events: true },
      createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
    );
    // As a backup or the sqlite3 shell would: a second connection holding the write lock.
    other = new DatabaseSync(join(dir, 'forms.db'));
    other.exec('BEGIN IMMEDIATE');
  });
  afterEach(async () => {
    if (other.isTransaction) other.exec('ROLLBACK');
    other.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a write waits without holding up reads or health, then fails naming the lock, logged once', async () => {
    const order: string[] = [];
    const saving = store.submissions.save(input).then(
      () => order.push('saved'),
      (error: Error) => order.push(`failed: ${error.message}`),
    );
    const reading = store.outbox.list().then(() => order.push('read'));
    const health = await store.health();
    order.push('health');
    await reading;
    await saving;
    expect(order).toEqual(['read', 'health', 'failed: the database file stayed locked by another process for 400 ms']);
    // Locked, not broken: the probe does not wait, and no write had failed when it ran.
    expect(health).toMatchObject({ writable: true, pendingMessages: 0 });
    await expect(store.health()).resolves.toMatchObject({
      writable: false,
      problem: 'The SQLite database does not take writes: Error: the database file stayed locked by another process for 400 ms',
    });
    expect(logs.filter((l) => l.level === 'error')).toEqual([expect.objectContaining({ event: 'database.unavailable', database: 'SQLite' })]);
  });

  test('after the lock is released, health is writable again by itself, without waiting for a post', async () => {
    await expect(store.submissions.save(input)).rejects.toThrow('stayed locked');
    await expect(store.health()).resolves.toMatchObject({ writable: false });
    other.exec('ROLLBACK');
    await expect(store.health()).resolves.toMatchObject({ writable: true, pendingMessages: 0 });
    expect(logs.map((l) => l.event).filter((e) => e !== 'database.migrated')).toEqual(['database.unavailable', 'database.recovered']);
  });

  test('a write that is still waiting when the lock is released goes through', async () => {
    const saving = store.submissions.save(input);
    await new Promise((resolve) => setTimeout(resolve, 50));
    other.exec('ROLLBACK');
    await expect(saving).resolves.toBe(1);
    await expect(store.outbox.pendingCount()).resolves.toBe(1);
    expect(logs.filter((l) => l.level === 'error')).toEqual([]);
  });

  test('statements of a transaction never interleave with another request on the one connection', async () => {
    other.exec('ROLLBACK');
    const seen: number[] = [];
    const transaction = store.sql.transaction(async (tx) => {
      await tx.run("INSERT INTO subscribers (email, created_at) VALUES ('a@example.org', 't')");
      await new Promise((resolve) => setTimeout(resolve, 20));
      await tx.run("INSERT INTO subscribers (email, created_at) VALUES ('b@example.org', 't')");
    });
    // Asked for while the transaction waits: it must see both rows or neither, never one.
    const count = store.sql.get<{ n: number }>('SELECT count(*) AS n FROM subscribers').then((row) => seen.push(row!.n));
    await Promise.all([transaction, count]);
    expect(seen).toEqual([2]);
  });
});
