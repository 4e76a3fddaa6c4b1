import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, test } from 'vitest';
import { handleHealth } from '../../packages/site-forms/src/lib/pipeline/health.ts';
import { createLogger } from '../../packages/site-forms/src/lib/log.ts';
import { openStore, type Store } from '../../packages/site-forms/src/lib/database/database.ts';
import { TEST_DATABASE } from '../support/stores.ts';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => {});
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function open(dir = newDir()) {
  const logs: Array<Record<string, unknown>> = [];
  const store = openStore(
    { ...TEST_DATABASE, url: undefined, dataDir: dir },
    createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
  );
  stores.push(store);
  return { store, logs, dir };
}

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'health-'));
  dirs.push(dir);
  return dir;
}

const input = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more.', honeypot: '' };

describe('GET /api/health', () => {
  test('200 with the provider, the database, a committed write, the messages waiting and those given up on', async () => {
    const { store } = open();
    await store.submissions.save(input);
    const failed = await store.submissions.save(input);
    await store.outbox.markFailed(failed, new Date(), '550 no such user');
    const response = await handleHealth({ store, providerName: 'local' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      provider: 'local',
      database: 'SQLite',
      databaseWritable: true,
      databaseIntegrity: 'ok',
      pendingMessages: 1,
      failedMessages: 1,
    });
    // The probe's one row is all it leaves behind.
    await expect(store.subscribers.list()).resolves.toEqual([]);
    await expect(store.sql.all('SELECT id FROM health_checks')).resolves.toEqual([{ id: 1 }]);
  });

  test('503 naming the database once a write has failed, with the real cause logged once; 200 again once writes succeed', async () => {
    const { store, logs } = open();
    // The file may not grow by a page: SQLite answers SQLITE_FULL, as on a full disk.
    const { page_count: pages } = (await store.sql.get<{ page_count: number }>('PRAGMA page_count'))!;
    await store.sql.get(`PRAGMA max_page_count = ${pages}`);
    const long = { ...input, message: 'x'.repeat(5_000) };
    for (let i = 0; i < 3; i++) await expect(store.submissions.save(long)).rejects.toThrow('database or disk is full');
    const response = await handleHealth({ store, providerName: 'local' });
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({
      success: false,
      error: 'The SQLite database does not take writes: Error: database or disk is full',
      database: 'SQLite',
      databaseWritable: false,
    });
    // Three failed posts, one line, with the real cause rather than the rollback's complaint.
    expect(logs.filter((l) => l.level === 'error')).toEqual([
      expect.objectContaining({ event: 'database.unavailable', database: 'SQLite', error: 'Error: database or disk is full' }),
    ]);

    await store.sql.get(`PRAGMA max_page_count = ${pages * 100}`);
    await store.submissions.save(long);
    expect((await handleHealth({ store, providerName: 'local' })).status).toBe(200);
    expect(logs.filter((l) => l.event === 'database.recovered')).toHaveLength(1);
  });

  test('503 when the database file cannot be written at all', async () => {
    const { dir } = open();
    const readOnly = openStore({ ...TEST_DATABASE, url: undefined, dataDir: dir }, createLogger({ level: 'silent' }));
    stores.push(readOnly);
    // The same file, opened by a second connection that SQLite is told may only read.
    await readOnly.sql.run('PRAGMA query_only = ON');
    const response = await handleHealth({ store: readOnly, providerName: 'mailchimp' });
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ success: false, databaseWritable: false, provider: 'mailchimp', database: 'SQLite' });
  });

  test('503 when the database failed its integrity check at start, logged once with what to do', async () => {
    const dir = newDir();
    const first = open(dir).store;
    for (let i = 0; i < 200; i++) await first.submissions.save({ ...input, message: `Message number ${i} with some padding to fill pages.` });
    await first.close();
    corruptIndex(join(dir, 'forms.db'));
    const { store, logs } = open(dir);
    const response = await handleHealth({ store, providerName: 'local' });
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({
      success: false,
      error: 'The SQLite database failed its integrity check at start',
      databaseIntegrity: 'failed',
      databaseWritable: true,
    });
    expect(logs.filter((l) => l.event === 'database.integrity_failed')).toEqual([
      expect.objectContaining({ level: 'error', next: 'restore the latest backup (README: Backups)' }),
    ]);
  });
});

/**
 * Points the history's index at the pages of the queue's index, as a torn write might: the
 * file opens and most queries work, but `PRAGMA integrity_check` finds the index wrong.
 */
function corruptIndex(file: string): void {
  // Defensive mode (node:sqlite's default) forbids editing the schema; this test needs to.
  const db = new DatabaseSync(file, { defensive: false });
  const { rootpage } = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'submissions_due'").get() as { rootpage: number };
  db.exec('PRAGMA writable_schema = ON');
  db.prepare("UPDATE sqlite_master SET rootpage = ? WHERE name = 'delivery_attempts_submission'").run(rootpage);
  db.exec('PRAGMA writable_schema = OFF');
  db.close();
}
