import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { type PostgresServer, postgresAvailable, startPostgres } from '../../support/postgres.ts';
import { eventually } from '../../support/smtp.ts';
import { holdWriteLock } from '../../support/sqlite-lock.ts';
import { TEST_DATABASE } from '../../support/stores.ts';

// openStore itself (database/database.ts): which engine it opens, what it says of a damaged
// file, whether it keeps the news of messages, and how health tells a lock held elsewhere from
// a database that does not take writes, and when a failure counts as over.

const dirs: string[] = [];
const stores: Store[] = [];
const holders: ChildProcess[] = [];
afterEach(async () => {
  for (const holder of holders.splice(0)) {
    if (holder.exitCode === null && holder.signalCode === null) {
      holder.kill();
      await once(holder, 'exit');
    }
  }
  for (const store of stores.splice(0)) await store.close().catch(() => {});
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'site-forms-database-'));
  dirs.push(dir);
  return dir;
}

type Line = Record<string, unknown>;

/** A store of the test's own, its log lines collected without their time. */
function open(options: { dataDir?: string; url?: string; events?: boolean; statementTimeoutMs?: number } = {}) {
  const logs: Line[] = [];
  const logger = createLogger({
    level: 'debug',
    write: (text) => {
      const { time: _time, ...line } = JSON.parse(text) as Line;
      logs.push(line);
    },
  });
  const dataDir = options.dataDir ?? newDir();
  const store = openStore({ ...TEST_DATABASE, url: undefined, ...options, dataDir }, logger);
  stores.push(store);
  // The migration steps of a new database are told elsewhere (tests/lib/sql/store.test.ts).
  const told = () => logs.filter((line) => line.event !== 'database.migrated');
  return { store, told, file: join(dataDir, 'forms.db') };
}

const input = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more.', honeypot: '' };
const healthy = { database: 'SQLite', writable: true, integrity: 'ok', pendingMessages: 0, failedMessages: 0 };

describe('a store on SQLite', () => {
  test('without `events` it keeps the news of each message and says so; with `events: false` it keeps none', async () => {
    const types = async (store: Store) => (await store.sql.all<{ type: string }>('SELECT type FROM events')).map((row) => row.type);
    const told = open().store;
    expect(told.engine).toBe('sqlite');
    expect(told.keepsEvents).toBe(true);
    await told.submissions.save(input);
    await expect(types(told)).resolves.toEqual(['contact.received']);

    const quiet = open({ events: false }).store;
    expect(quiet.keepsEvents).toBe(false);
    await quiet.submissions.save(input);
    await expect(types(quiet)).resolves.toEqual([]);
    await expect(quiet.outbox.pendingCount()).resolves.toBe(1);
  });

  test('a file that fails its integrity check at start: one error line naming SQLite, the first five problems and what to do', async () => {
    const dataDir = newDir();
    // An index whose definition no longer matches its seven first entries, as a damaged file can have.
    const damaged = new DatabaseSync(join(dataDir, 'forms.db'), { defensive: false });
    damaged.exec('CREATE TABLE extra (a); CREATE INDEX extra_a ON extra (a); INSERT INTO extra VALUES (1), (2), (3), (4), (5), (6), (7), (8)');
    damaged.exec('PRAGMA writable_schema = ON');
    damaged.exec("UPDATE sqlite_schema SET sql = 'CREATE INDEX extra_a ON extra (a DESC)' WHERE name = 'extra_a'");
    damaged.close();
    const { store, told } = open({ dataDir });
    expect(told()).toEqual([
      {
        level: 'error',
        event: 'database.integrity_failed',
        database: 'SQLite',
        problems: [
          'row 1 missing from index extra_a',
          'row 2 missing from index extra_a',
          'row 3 missing from index extra_a',
          'row 4 missing from index extra_a',
          'row 5 missing from index extra_a',
        ],
        next: 'restore the latest backup (README: Backups)',
      },
    ]);
    await expect(store.health()).resolves.toEqual({
      ...healthy,
      integrity: 'failed',
      problem: 'The SQLite database failed its integrity check at start',
    });
  });
});

describe('health on SQLite: whether the database takes writes', () => {
  test('a health check that cannot write (the file read-only) says why, logged once, and the next that can write clears it', async () => {
    const { store, told } = open();
    // Set as a read, so that nothing else the store does has written before the probe.
    await store.sql.get('PRAGMA query_only = ON');
    const refused = { ...healthy, writable: false, problem: 'The SQLite database does not take writes: Error: attempt to write a readonly database' };
    await expect(store.health()).resolves.toEqual(refused);
    await expect(store.health()).resolves.toEqual(refused);
    expect(store.state.failure).toBe('Error: attempt to write a readonly database');
    await store.sql.get('PRAGMA query_only = OFF');
    await expect(store.health()).resolves.toEqual(healthy);
    expect(told()).toEqual([
      { level: 'error', event: 'database.unavailable', database: 'SQLite', error: 'Error: attempt to write a readonly database' },
      { level: 'info', event: 'database.recovered', database: 'SQLite' },
    ]);
  });

  test('after a post failed and a later one was stored, a health check that cannot write is again cleared by the next that can', async () => {
    const { store, told } = open();
    await store.sql.get('PRAGMA query_only = ON');
    await expect(store.submissions.save(input)).rejects.toThrow('attempt to write a readonly database');
    await store.sql.get('PRAGMA query_only = OFF');
    await expect(store.submissions.save(input)).resolves.toBe(1);
    await store.sql.get('PRAGMA query_only = ON');
    await expect(store.health()).resolves.toMatchObject({ writable: false });
    await store.sql.get('PRAGMA query_only = OFF');
    await expect(store.health()).resolves.toEqual({ ...healthy, pendingMessages: 1 });
    expect(told().map((line) => line.event)).toEqual(['database.unavailable', 'database.recovered', 'database.unavailable', 'database.recovered']);
  });

  test('a health check that could not write, while a post was stored meanwhile, still says the database does not take writes', async () => {
    const { store, told } = open();
    // Only the probe's own table is gone: every other write succeeds.
    await store.sql.run('DROP TABLE health_checks');
    const [health, id] = await Promise.all([store.health(), store.submissions.save(input)]);
    expect(id).toBe(1);
    expect(health).toEqual({
      ...healthy,
      writable: false,
      pendingMessages: 1,
      problem: 'The SQLite database does not take writes: the health check could not write',
    });
    expect(told()).toEqual([
      { level: 'error', event: 'database.unavailable', database: 'SQLite', error: 'Error: no such table: health_checks' },
      { level: 'info', event: 'database.recovered', database: 'SQLite' },
    ]);
  });

  test('a read that succeeds after a post failed (a full disk) does not say the database takes writes again', async () => {
    const { store, told } = open();
    await expect(store.health()).resolves.toEqual(healthy);
    // The file may not grow by a page: SQLite answers SQLITE_FULL, as on a full disk.
    const { page_count: pages } = (await store.sql.get<{ page_count: number }>('PRAGMA page_count'))!;
    await store.sql.get(`PRAGMA max_page_count = ${pages}`);
    await expect(store.submissions.save({ ...input, message: 'x'.repeat(5_000) })).rejects.toThrow('database or disk is full');
    await expect(store.outbox.list()).resolves.toEqual([]);
    await expect(store.sql.get('SELECT count(*) AS n FROM submissions')).resolves.toEqual({ n: 0 });
    expect(store.state.failure).toBe('Error: database or disk is full');
    await expect(store.health()).resolves.toEqual({
      ...healthy,
      writable: false,
      problem: 'The SQLite database does not take writes: Error: database or disk is full',
    });
    expect(told()).toEqual([{ level: 'error', event: 'database.unavailable', database: 'SQLite', error: 'Error: database or disk is full' }]);
  });

  test('health asked after the store closed answers, without counts, rather than throwing', async () => {
    const { store } = open();
    await store.close();
    await expect(store.health()).resolves.toEqual({
      ...healthy,
      writable: false,
      pendingMessages: null,
      failedMessages: null,
      problem: 'The SQLite database does not take writes: Error: database is not open',
    });
  });

  test.each([
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['an error whose cause is not a lock', new Error('the provider refused', { cause: new Error('connection reset') }), 'Error: the provider refused'],
  ])('what a transaction throws (%s) comes back as is, and is a failure, not a lock: only a stored post clears it', async (_, thrown, cause) => {
    const { store, told } = open();
    await expect(
      store.sql.transaction(async () => {
        throw thrown;
      }),
    ).rejects.toBe(thrown);
    const failed = { ...healthy, writable: false, problem: `The SQLite database does not take writes: ${cause}` };
    await expect(store.health()).resolves.toEqual(failed);
    await expect(store.health()).resolves.toEqual(failed);
    await store.submissions.save(input);
    await expect(store.health()).resolves.toEqual({ ...healthy, pendingMessages: 1 });
    expect(told()).toEqual([
      { level: 'error', event: 'database.unavailable', database: 'SQLite', error: cause },
      { level: 'info', event: 'database.recovered', database: 'SQLite' },
    ]);
  });
});

describe('health on SQLite: a write lock held by another process', () => {
  const locked = 'Error: the database file stayed locked by another process for 200 ms';
  const release = async (holder: ChildProcess) => {
    holder.kill();
    await once(holder, 'exit');
  };

  test('posts that failed one after another on the lock: once it is released, the health check alone finds the database writable', async () => {
    const { store, file, told } = open({ statementTimeoutMs: 200 });
    const holder = await holdWriteLock(file);
    holders.push(holder);
    await expect(store.submissions.save(input)).rejects.toThrow('stayed locked by another process for 200 ms');
    await expect(store.submissions.save(input)).rejects.toThrow('stayed locked by another process for 200 ms');
    // Still held: the probe does not wait, and reports the failed posts.
    await expect(store.health()).resolves.toEqual({ ...healthy, writable: false, problem: `The SQLite database does not take writes: ${locked}` });
    await release(holder);
    await expect(store.health()).resolves.toEqual(healthy);
    expect(told()).toEqual([
      { level: 'error', event: 'database.unavailable', database: 'SQLite', error: locked },
      { level: 'info', event: 'database.recovered', database: 'SQLite' },
    ]);
  });

  test('a lock after a real failure (a full disk) does not let the health check hide the full disk once the lock is gone', async () => {
    const { store, file, told } = open({ statementTimeoutMs: 200 });
    await expect(store.health()).resolves.toEqual(healthy);
    const { page_count: pages } = (await store.sql.get<{ page_count: number }>('PRAGMA page_count'))!;
    await store.sql.get(`PRAGMA max_page_count = ${pages}`);
    await expect(store.submissions.save({ ...input, message: 'x'.repeat(5_000) })).rejects.toThrow('database or disk is full');
    const holder = await holdWriteLock(file);
    holders.push(holder);
    await expect(store.submissions.save(input)).rejects.toThrow('stayed locked by another process for 200 ms');
    await release(holder);
    const full = { ...healthy, writable: false, problem: 'The SQLite database does not take writes: Error: database or disk is full' };
    await expect(store.health()).resolves.toEqual(full);
    await expect(store.health()).resolves.toEqual(full);
    expect(told()).toEqual([
      { level: 'error', event: 'database.unavailable', database: 'SQLite', error: 'Error: database or disk is full' },
      { level: 'debug', event: 'database.still_unavailable', database: 'SQLite', error: locked },
    ]);
  });
});

describe.skipIf(!postgresAvailable)('a store on PostgreSQL', () => {
  let postgres: PostgresServer;
  beforeAll(async () => {
    postgres = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await postgres?.remove();
  });

  test('an idle connection cut by a server stop is told at once; once the server is back, the health check alone proves it', async () => {
    const { store, told } = open({ url: await postgres.createDatabase('outage') });
    await store.ready;
    expect(store.engine).toBe('postgresql');
    const healthyHere = { ...healthy, database: 'PostgreSQL', integrity: 'not checked' };
    // The probe and the counts leave connections idle in the pool.
    await expect(store.health()).resolves.toEqual(healthyHere);
    await postgres.stop();
    const cut = 'error: terminating connection due to administrator command';
    // No statement asked for: the pool's idle connections broke, and that alone is the news.
    await eventually('the cut to be noticed', () => store.state.failure);
    expect(store.state.failure).toBe(cut);
    await expect(store.health()).resolves.toEqual({
      ...healthyHere,
      writable: false,
      pendingMessages: null,
      failedMessages: null,
      problem: `The PostgreSQL database does not take writes: ${cut}`,
    });
    await expect(store.submissions.save(input)).rejects.toThrow();

    await postgres.start();
    await eventually('the health check to find the server back', async () => (await store.health()).writable);
    await expect(store.health()).resolves.toEqual(healthyHere);
    expect(told().filter((line) => line.level !== 'debug')).toEqual([
      { level: 'error', event: 'database.unavailable', database: 'PostgreSQL', error: cut },
      { level: 'info', event: 'database.recovered', database: 'PostgreSQL' },
    ]);
  });
});
