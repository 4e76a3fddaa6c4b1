import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createLogger } from '../../packages/site-forms/src/lib/log.ts';
import { openStore } from '../../packages/site-forms/src/lib/database/database.ts';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/postgres.ts';
import { TEST_DATABASE } from '../support/stores.ts';
import { runCli } from '../contact/run-inbox.ts';

const silent = createLogger({ level: 'silent' });
const message = (name: string) => ({ name, email: `${name.toLowerCase()}@example.org`, message: `Hello from ${name}, at length.`, honeypot: '' });

describe.skipIf(!postgresAvailable)('the command-line tools on PostgreSQL', () => {
  let postgres: PostgresServer;
  const dirs: string[] = [];
  beforeAll(async () => {
    postgres = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await postgres?.remove();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const newDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'site-forms-db-'));
    dirs.push(dir);
    return dir;
  };

  test('npm run inbox and npm run subscribers read DATABASE_URL, with no SQLite file anywhere', async () => {
    const url = await postgres.createDatabase('tools');
    const store = openStore({ ...TEST_DATABASE, url, dataDir: newDir() }, silent);
    await store.ready;
    const id = await store.submissions.save(message('Ada'));
    await store.subscribers.add('grace@example.org', new Date('2026-01-02T03:04:05.000Z'));
    await store.close();
    const env = { DATABASE_URL: url, DATA_DIR: join(newDir(), 'nothing-here') };

    const shown = await runCli('inbox', ['show', String(id)], env);
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).toContain(`Message #${id}\n`);
    expect(shown.stdout).toContain('From:     Ada <ada@example.org>\n');
    const exported = await runCli('subscribers', ['export', '--format', 'json'], env);
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toEqual([{ email: 'grace@example.org', created: '2026-01-02T03:04:05.000Z' }]);
  });

  test('an unreachable DATABASE_URL: exit 1 naming it without its password', async () => {
    const { code, stdout, stderr } = await runCli('inbox', ['list'], {
      DATABASE_URL: 'postgres://forms:s3cret@127.0.0.1:1/forms',
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
    });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^Cannot read the database at postgres:\/\/\*\*\*:\*\*\*@127\.0\.0\.1:1\/forms: /);
    expect(stderr).not.toContain('s3cret');
  });

  test('npm run db -- copy moves every message with its status and history, and every subscriber; twice copies nothing twice', async () => {
    const dataDir = newDir();
    const sqlite = openStore({ ...TEST_DATABASE, url: undefined, dataDir }, silent);
    const sent = await sqlite.submissions.save(message('Ada'));
    const failed = await sqlite.submissions.save(message('Bob'));
    // A message of an owner's form: its form and fields are copied too (decision 0131).
    const { id: pending } = await sqlite.submissions.receive({ ...message('Cy'), form: 'quote', fields: { topic: 'table', budget: 1200 }, held: undefined });
    await sqlite.outbox.markRetry(sent, new Date('2026-05-01T08:00:00.000Z'), new Date('2026-05-01T08:00:30.000Z'), 'ECONNREFUSED');
    await sqlite.outbox.markSent(sent, new Date('2026-05-01T08:00:31.000Z'));
    await sqlite.outbox.markFailed(failed, new Date('2026-05-01T08:00:00.000Z'), '550 no such user');
    await sqlite.subscribers.add('ada@example.org', new Date('2026-01-01T00:00:00.000Z'));
    await sqlite.subscribers.add('bob@example.org', new Date('2026-01-02T00:00:00.000Z'));
    const before = await sqlite.outbox.list();
    await sqlite.close();
    const url = await postgres.createDatabase('copy');

    const first = await runCli('db', ['copy', '--to', url], { DATA_DIR: dataDir });
    expect(first).toEqual({
      code: 0,
      stderr: '',
      stdout:
        'Copied, and checked that every row of SQLite is in PostgreSQL:\n' +
        '  messages               3 in SQLite,       3 copied now,       3 in PostgreSQL\n' +
        '  delivery history       3 in SQLite,       3 copied now,       3 in PostgreSQL\n' +
        '  subscribers            2 in SQLite,       2 copied now,       2 in PostgreSQL\n' +
        '  files                  0 in SQLite,       0 copied now,       0 in PostgreSQL\n' +
        'Next: set DATABASE_URL to this URL and restart the server.\n',
    });
    const again = await runCli('db', ['copy', '--to', url], { DATA_DIR: dataDir });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('  messages               3 in SQLite,       0 copied now,       3 in PostgreSQL\n');
    expect(again.stdout).toContain('  delivery history       3 in SQLite,       0 copied now,       3 in PostgreSQL\n');
    expect(again.stdout).toContain('  subscribers            2 in SQLite,       0 copied now,       2 in PostgreSQL\n');

    const pg = openStore({ ...TEST_DATABASE, url, dataDir: newDir() }, silent);
    try {
      await expect(pg.outbox.list()).resolves.toEqual(before);
      expect((await pg.outbox.history(sent)).map((e) => e.outcome)).toEqual(['retrying', 'sent']);
      await expect(pg.outbox.find(failed)).resolves.toMatchObject({ status: 'failed', lastError: '550 no such user' });
      await expect(pg.outbox.find(pending)).resolves.toMatchObject({ status: 'pending', attempts: 0, form: 'quote', fields: { topic: 'table', budget: 1200 } });
      await expect(pg.subscribers.list()).resolves.toEqual([
        { email: 'ada@example.org', created: '2026-01-01T00:00:00.000Z' },
        { email: 'bob@example.org', created: '2026-01-02T00:00:00.000Z' },
      ]);
      // New messages continue after the copied ids, so no Message-ID is ever given twice.
      await expect(pg.submissions.save(message('Dee'))).resolves.toBe(4);
    } finally {
      await pg.close();
    }
  });

  test('npm run db -- copy into a database holding other messages: exit 1, nothing copied', async () => {
    const dataDir = newDir();
    const sqlite = openStore({ ...TEST_DATABASE, url: undefined, dataDir }, silent);
    await sqlite.submissions.save(message('Ada'));
    await sqlite.subscribers.add('ada@example.org', new Date());
    await sqlite.close();
    const url = await postgres.createDatabase('other_site');
    const pg = openStore({ ...TEST_DATABASE, url, dataDir: newDir() }, silent);
    await pg.ready;
    await pg.sql.run(
      "INSERT INTO submissions (created_at, name, email, message) VALUES ('2020-01-01T00:00:00.000Z', 'Zed', 'zed@example.org', 'Another site.')",
    );
    try {
      const { code, stdout, stderr } = await runCli('db', ['copy', '--to', url], { DATA_DIR: dataDir });
      expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
      expect(stderr).toBe(
        'Nothing was copied: PostgreSQL already holds another message with id 1: copy into an empty database, or the one this file was copied into before.\n',
      );
      await expect(pg.subscribers.list()).resolves.toEqual([]);
    } finally {
      await pg.close();
    }
  });
});
