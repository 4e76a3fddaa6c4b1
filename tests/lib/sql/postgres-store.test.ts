import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { MIGRATIONS } from '../../../packages/site-forms/src/lib/sql/migrations.ts';
import { MIGRATION_LOCK_KEY, openPostgres, type PostgresOptions } from '../../../packages/site-forms/src/lib/sql/postgres.ts';
import type { Sql } from '../../../packages/site-forms/src/lib/sql/sql.ts';
import { type PostgresServer, postgresAvailable, startPostgres } from '../../support/postgres.ts';
import { eventually } from '../../support/smtp.ts';
import { TEST_DATABASE } from '../../support/stores.ts';

// The PostgreSQL store itself (sql/postgres.ts), opened directly on a real server: how it
// migrates beside other instances, ends its transactions, and lives through broken connections.
describe.skipIf(!postgresAvailable)('the PostgreSQL store', () => {
  let postgres: PostgresServer;
  let databases = 0;
  const opened: Sql[] = [];
  const clients: pg.Client[] = [];
  beforeAll(async () => {
    postgres = await startPostgres();
  }, 60_000);
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.end().catch(() => {});
    for (const sql of opened.splice(0)) await sql.close().catch(() => {});
  });
  afterAll(async () => {
    await postgres?.remove();
  });

  const newDatabase = () => postgres.createDatabase(`direct_${++databases}`);
  const open = (url: string, options: Partial<PostgresOptions> = {}) => {
    const sql = openPostgres({ ...TEST_DATABASE, ...options, url });
    opened.push(sql);
    return sql;
  };
  /** A connection of the test's own, beside the store's pool. */
  const connect = async (url: string) => {
    const client = new pg.Client({ connectionString: url });
    // A test that stops the server cuts this connection too.
    client.on('error', () => {});
    clients.push(client);
    await client.connect();
    return client;
  };
  const settled = (promise: Promise<unknown>, withinMs: number) =>
    Promise.race([
      promise.then(
        () => 'ready',
        (error: Error) => `failed: ${error.message}`,
      ),
      sleep(withinMs, 'waiting'),
    ]);
  const steps = () => {
    const told: Array<{ version: number; name: string }> = [];
    return { told, onMigrated: (step: { version: number; name: string }) => void told.push(step) };
  };

  test('statements asked for at once wait for the migrations, whose steps are told once, in order, and committed', async () => {
    const url = await newDatabase();
    const { told, onMigrated } = steps();
    const sql = open(url, { onMigrated });
    expect(sql.engine).toBe('postgresql');
    await expect(sql.all('SELECT email FROM subscribers')).resolves.toEqual([]);
    expect(told.map((step) => step.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect([told[0], told[13], told[14], told[15], told[16], told[17], told[18], told[19]]).toEqual([
      { version: 1, name: 'submissions and subscribers' },
      { version: 14, name: 'automatic replies: only to a person, so many an hour' },
      { version: 15, name: 'newsletter consents: the links of a mail sent again' },
      { version: 16, name: 'the client of each draft' },
      { version: 17, name: 'leases that name their worker' },
      { version: 18, name: 'files with a message' },
      { version: 19, name: 'queue times as timestamptz on PostgreSQL' },
      { version: 20, name: 'people, passkeys, sign-in links and API keys' },
    ]);
    // Another connection sees every step: each was committed.
    const other = await connect(url);
    expect((await other.query('SELECT version FROM schema_migrations ORDER BY version')).rows.map((row) => row.version)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
    ]);
    await expect(other.query('SELECT count(*)::int AS n FROM form_drafts')).resolves.toMatchObject({ rows: [{ n: 0 }] });

    const again = steps();
    await expect(open(url, { onMigrated: again.onMigrated }).ready).resolves.toBeUndefined();
    expect(again.told).toEqual([]);
  });

  test('its connections name the site and carry the timeouts: a statement’s, and twice that idle in a transaction', async () => {
    const sql = open(await newDatabase(), { statementTimeoutMs: 1_500 });
    await expect(
      sql.get(
        "SELECT current_setting('application_name') AS app, current_setting('statement_timeout') AS statement, current_setting('idle_in_transaction_session_timeout') AS idle",
      ),
    ).resolves.toEqual({ app: 'site-forms', statement: '1500ms', idle: '3s' });
  });

  test('statements without parameters, and what run counts', async () => {
    const sql = open(await newDatabase());
    await expect(sql.all("SELECT 'a' AS letter")).resolves.toEqual([{ letter: 'a' }]);
    await expect(sql.get('SELECT email FROM subscribers')).resolves.toBeUndefined();
    await expect(sql.run("INSERT INTO subscribers (email, created_at) VALUES ('a@example.org', 't'), ('b@example.org', 't')")).resolves.toEqual({ changes: 2 });
    await expect(sql.runOnce("UPDATE subscribers SET created_at = 'u'")).resolves.toEqual({ changes: 2 });
    // A statement that counts no rows at all (the driver says null) changed none.
    await expect(sql.run('CREATE INDEX subscribers_created ON subscribers (created_at)')).resolves.toEqual({ changes: 0 });
  });

  test('a statement is prepared once per connection and then only executed: the connection holds it by name', async () => {
    const sql = open(await newDatabase(), { poolSize: 1 });
    const statement = 'SELECT count(*) AS n FROM subscribers WHERE email = ?';
    await sql.get(statement, ['a@example.org']);
    await sql.get(statement, ['b@example.org']);
    const held = await sql.all<{ statement: string }>('SELECT statement FROM pg_prepared_statements ORDER BY prepare_time');
    expect(held.map((row) => row.statement)).toEqual([
      'SELECT count(*) AS n FROM subscribers WHERE email = $1',
      'SELECT statement FROM pg_prepared_statements ORDER BY prepare_time',
    ]);
  });

  test('a database of the previous version: its queue times become TIMESTAMPTZ, every row kept at the instant its text named, read back as that text', async () => {
    const url = await newDatabase();
    const client = await connect(url);
    // The schema as the previous version left it: every step before 19, recorded.
    await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
    const before = MIGRATIONS.findIndex((step) => step.name === 'queue times as timestamptz on PostgreSQL');
    for (const [i, step] of MIGRATIONS.slice(0, before).entries()) {
      await client.query(step.postgresql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [i + 1, step.name]);
    }
    await client.query(
      `INSERT INTO submissions (created_at, name, email, message, status, next_attempt_at, lease_until, leased_by)
       VALUES ('2026-11-01T10:00:00.000Z', 'Ada', 'ada@example.org', 'Hello there, Ada here.', 'pending', '2026-11-01T10:00:00.000Z', '2026-11-01T10:05:00.123Z', 'w1'),
              ('2026-11-01T11:00:00.000Z', 'Bob', 'bob@example.org', 'Hello there, Bob here.', 'sent', NULL, NULL, NULL)`,
    );
    await client.query(
      `INSERT INTO signup_queue (email, provider, status, next_attempt_at, created_at) VALUES ('c@example.org', 'mailchimp', 'waiting', '2026-11-02T00:00:00.000Z', '2026-11-01T00:00:00.000Z')`,
    );
    await client.query(
      `INSERT INTO webhook_deliveries (event_id, endpoint, status, next_attempt_at, lease_until, created_at) VALUES ('e1', 'a', 'pending', '2026-11-03T00:00:00.000Z', NULL, '2026-11-03T00:00:00.000Z')`,
    );

    const sql = open(url);
    await sql.ready;
    const types = await client.query<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
       WHERE column_name IN ('next_attempt_at', 'lease_until') ORDER BY table_name, column_name`,
    );
    expect(new Set(types.rows.map((row) => row.data_type))).toEqual(new Set(['timestamp with time zone']));
    expect(types.rows).toHaveLength(6);
    await expect(sql.all('SELECT name, next_attempt_at, lease_until FROM submissions ORDER BY id')).resolves.toEqual([
      { name: 'Ada', next_attempt_at: '2026-11-01T10:00:00.000Z', lease_until: '2026-11-01T10:05:00.123Z' },
      { name: 'Bob', next_attempt_at: null, lease_until: null },
    ]);
    await expect(sql.get('SELECT next_attempt_at FROM signup_queue')).resolves.toEqual({ next_attempt_at: '2026-11-02T00:00:00.000Z' });
    await expect(sql.get('SELECT next_attempt_at FROM webhook_deliveries')).resolves.toEqual({ next_attempt_at: '2026-11-03T00:00:00.000Z' });
    // Compared as instants: the same moment written with another offset is the same lease.
    await expect(sql.get("SELECT name FROM submissions WHERE lease_until = '2026-11-01T11:05:00.123+01:00'")).resolves.toEqual({ name: 'Ada' });
  });

  test('a database of the version before people: its sessions and audit entries kept, the entries naming nobody, the new tables empty, the old writes still accepted', async () => {
    const url = await newDatabase();
    const client = await connect(url);
    await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
    const before = MIGRATIONS.findIndex((step) => step.name === 'people, passkeys, sign-in links and API keys');
    expect(before).toBeGreaterThan(0);
    for (const [i, step] of MIGRATIONS.slice(0, before).entries()) {
      await client.query(step.postgresql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [i + 1, step.name]);
    }
    await client.query(
      "INSERT INTO admin_sessions (token_hash, created_at, last_seen_at) VALUES ('live', '2026-11-29T02:00:00.000Z', '2026-11-29T02:10:00.000Z')",
    );
    await client.query(`INSERT INTO admin_audit (at, action, detail, client) VALUES
      ('2026-11-29T02:00:00.000Z', 'sign-in', '', 'abc'),
      ('2026-11-29T02:05:00.000Z', 'delete-message', '#7', 'abc')`);

    const sql = open(url);
    await sql.ready;
    await expect(sql.get('SELECT max(version) AS version FROM schema_migrations')).resolves.toEqual({ version: MIGRATIONS.length });
    await expect(sql.all('SELECT token_hash, created_at, last_seen_at FROM admin_sessions')).resolves.toEqual([
      { token_hash: 'live', created_at: '2026-11-29T02:00:00.000Z', last_seen_at: '2026-11-29T02:10:00.000Z' },
    ]);
    await expect(sql.all('SELECT action, detail, repeats, actor, actor_name FROM admin_audit ORDER BY id')).resolves.toEqual([
      { action: 'sign-in', detail: '', repeats: 1, actor: null, actor_name: null },
      { action: 'delete-message', detail: '#7', repeats: 1, actor: null, actor_name: null },
    ]);
    for (const table of ['admin_users', 'admin_person_sessions', 'admin_links', 'admin_passkeys', 'admin_webauthn_challenges', 'api_keys']) {
      await expect(sql.get(`SELECT count(*)::int AS n FROM ${table}`), table).resolves.toEqual({ n: 0 });
    }
    // An instance of the previous version beside this one writes as it always did.
    await client.query("INSERT INTO admin_audit (at, action, detail, client) VALUES ('2026-11-29T03:00:00.000Z', 'sign-out', '', 'abc')");
    await client.query(
      "INSERT INTO admin_sessions (token_hash, created_at, last_seen_at) VALUES ('next', '2026-11-29T03:00:00.000Z', '2026-11-29T03:00:00.000Z')",
    );
  });

  test('the step of people leaves the same columns on PostgreSQL as on SQLite', async () => {
    const sql = open(await newDatabase());
    await sql.ready;
    const tables = ['admin_users', 'admin_person_sessions', 'admin_links', 'admin_passkeys', 'admin_webauthn_challenges', 'api_keys', 'admin_audit'];
    const sqlite = new DatabaseSync(':memory:');
    for (const step of MIGRATIONS) sqlite.exec(step.sqlite);
    for (const table of tables) {
      // SQLite writes a primary key's NOT NULL in `pk`, not `notnull`.
      const onSqlite = sqlite.prepare(`SELECT name, max("notnull", pk > 0) AS required FROM pragma_table_info('${table}') ORDER BY cid`).all();
      const onPostgres = await sql.all<{ name: string; required: number }>(
        "SELECT column_name AS name, CASE WHEN is_nullable = 'NO' THEN 1 ELSE 0 END AS required FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
        [table],
      );
      expect(onSqlite.length, table).toBeGreaterThan(0);
      expect(onPostgres, table).toEqual(onSqlite.map((column) => ({ ...column })));
    }
    sqlite.close();
  });

  test('an instance that finds another migrating waits for it; once it is done, the next one starts at once', async () => {
    const url = await newDatabase();
    const other = await connect(url);
    await other.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const first = open(url);
    await expect(settled(first.ready, 300)).resolves.toBe('waiting');
    await other.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    await expect(settled(first.ready, 5_000)).resolves.toBe('ready');
    await expect(settled(open(url).ready, 5_000)).resolves.toBe('ready');
  });

  test('a step that fails is rolled back and told with its own error, and the next start applies it', async () => {
    const url = await newDatabase();
    await open(url).ready;
    // A database where steps 14 on are not recorded (15 to 18 and 20 undone) and an object already takes the name of its table.
    const other = await connect(url);
    await other.query(
      'DELETE FROM schema_migrations WHERE version >= 14; DROP TABLE files; ALTER TABLE submissions DROP COLUMN leased_by; ALTER TABLE webhook_deliveries DROP COLUMN leased_by; ALTER TABLE signup_queue DROP COLUMN leased_by; DROP INDEX form_drafts_client; ALTER TABLE form_drafts DROP COLUMN client_key; ALTER TABLE newsletter_consents DROP COLUMN resent_confirm_hash, DROP COLUMN resent_unsubscribe_hash; ALTER TABLE submissions DROP COLUMN shown_person; DROP TABLE auto_reply_hours; DROP TABLE admin_users, admin_person_sessions, admin_links, admin_passkeys, admin_webauthn_challenges, api_keys; ALTER TABLE admin_audit DROP COLUMN actor, DROP COLUMN actor_name; CREATE VIEW auto_reply_hours AS SELECT 1 AS x',
    );
    const failing = steps();
    await expect(open(url, { onMigrated: failing.onMigrated }).ready).rejects.toThrow('relation "auto_reply_hours" already exists');
    expect(failing.told).toEqual([]);
    // Rolled back whole: the column added before the failing statement is gone too.
    await expect(
      other.query(
        "SELECT count(*)::int AS columns, (SELECT max(version) FROM schema_migrations) AS applied FROM information_schema.columns WHERE column_name = 'shown_person'",
      ),
    ).resolves.toMatchObject({ rows: [{ columns: 0, applied: 13 }] });

    await other.query('DROP VIEW auto_reply_hours');
    const mended = steps();
    await expect(settled(open(url, { onMigrated: mended.onMigrated }).ready, 5_000)).resolves.toBe('ready');
    expect(mended.told).toEqual([
      { version: 14, name: 'automatic replies: only to a person, so many an hour' },
      { version: 15, name: 'newsletter consents: the links of a mail sent again' },
      { version: 16, name: 'the client of each draft' },
      { version: 17, name: 'leases that name their worker' },
      { version: 18, name: 'files with a message' },
      { version: 19, name: 'queue times as timestamptz on PostgreSQL' },
      { version: 20, name: 'people, passkeys, sign-in links and API keys' },
    ]);
  });

  test('the server process of a migrating connection dying: ready rejects with the cut, and the process lives on', async () => {
    const url = await newDatabase();
    const other = await connect(url);
    await other.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const sql = open(url);
    await expect(settled(sql.ready, 300)).resolves.toBe('waiting');
    const { rows } = await other.query("SELECT pid FROM pg_stat_activity WHERE application_name = 'site-forms' AND datname = current_database()");
    expect(rows).toHaveLength(1);
    // Killed outright, it sends no goodbye: the socket just closes under the waiting query.
    process.kill(rows[0].pid, 'SIGKILL');
    await expect(sql.ready).rejects.toThrow('Connection terminated unexpectedly');
    // The server restarts its other processes after a crash; it answers again by itself.
    await eventually(
      'PostgreSQL to answer again',
      () =>
        connect(url).then(
          () => true,
          () => false,
        ),
      15_000,
    );
  });

  test('a server that cannot be reached: opening answers, ready and every statement reject with why, and closing works', async () => {
    const sql = open('postgres://postgres@127.0.0.1:1/forms', { connectTimeoutMs: 1_000 });
    // Nobody has asked for anything yet: the failed migration must not be an unhandled rejection.
    // The pause is what is tested: a refused connection fails within it while nothing listens.
    await sleep(200);
    await expect(sql.ready).rejects.toThrow('connect ECONNREFUSED 127.0.0.1:1');
    await expect(sql.all('SELECT 1')).rejects.toThrow('connect ECONNREFUSED 127.0.0.1:1');
    await expect(sql.close()).resolves.toBeUndefined();
  });

  test('closed, it runs no more statements', async () => {
    const sql = open(await newDatabase());
    await sql.ready;
    await sql.close();
    await expect(sql.all('SELECT 1')).rejects.toThrow('Cannot use a pool after calling end on the pool');
  });

  describe('transactions on a pool of one connection', () => {
    const insert = 'INSERT INTO subscribers (email, created_at) VALUES (?, ?)';

    test('a committed transaction is seen by every other connection', async () => {
      const url = await newDatabase();
      const sql = open(url, { poolSize: 1 });
      await expect(sql.transaction(async (tx) => (await tx.run(insert, ['a@example.org', 't'])).changes)).resolves.toBe(1);
      const other = await connect(url);
      await expect(other.query('SELECT email FROM subscribers')).resolves.toMatchObject({ rows: [{ email: 'a@example.org' }] });
    });

    test('work that throws leaves nothing, its error is what is thrown, and the connection is clean for the next statement', async () => {
      const sql = open(await newDatabase(), { poolSize: 1 });
      const bug = new Error('a bug in the work');
      await expect(
        sql.transaction(async (tx) => {
          await tx.run(insert, ['a@example.org', 't']);
          throw bug;
        }),
      ).rejects.toBe(bug);
      await expect(sql.all('SELECT email FROM subscribers')).resolves.toEqual([]);
      await expect(sql.transaction((tx) => tx.all('SELECT email FROM subscribers'))).resolves.toEqual([]);
    });

    test('many transactions on the one connection leave no listener behind on it', async () => {
      const sql = open(await newDatabase(), { poolSize: 1 });
      const warnings: string[] = [];
      const onWarning = (warning: Error) => void warnings.push(warning.name);
      process.on('warning', onWarning);
      try {
        for (let i = 0; i < 12; i++) await sql.transaction((tx) => tx.get('SELECT 1'));
        // Node emits a warning on the next tick: by the next turn of the event loop it has come, or never will.
        await new Promise((resolve) => setImmediate(resolve));
      } finally {
        process.off('warning', onWarning);
      }
      expect(warnings).toEqual([]);
    });

    test('a statement refused inside: its error is thrown, and the next statement runs', async () => {
      const sql = open(await newDatabase(), { poolSize: 1 });
      await sql.run(insert, ['a@example.org', 't']);
      await expect(
        sql.transaction(async (tx) => {
          await tx.run(insert, ['b@example.org', 't']);
          await tx.run(insert, ['a@example.org', 't']);
        }),
      ).rejects.toThrow('duplicate key value violates unique constraint "subscribers_pkey"');
      await expect(sql.all('SELECT email FROM subscribers')).resolves.toEqual([{ email: 'a@example.org' }]);
    });
  });

  test('a server that stops answering without closing: a statement fails after the statement and connect timeouts together', async () => {
    const sql = open(await newDatabase(), { poolSize: 1, statementTimeoutMs: 600, connectTimeoutMs: 400 });
    const { pid } = (await sql.get<{ pid: number }>('SELECT pg_backend_pid() AS pid'))!;
    // The server process of the pool's one connection, frozen: it neither answers nor closes.
    process.kill(pid, 'SIGSTOP');
    try {
      const start = Date.now();
      await expect(sql.get('SELECT 1')).rejects.toThrow('Query read timeout');
      expect(Date.now() - start).toBeGreaterThanOrEqual(950);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await expect(sql.get('SELECT 1 AS one')).resolves.toEqual({ one: 1 });
  });

  describe('an idle connection cut by the server', () => {
    const cutIdle = async (url: string) => {
      const other = await connect(url);
      const { rowCount } = await other.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'site-forms' AND datname = current_database()",
      );
      expect(rowCount).toBe(1);
    };

    test('is told to onIdleError, and the next statement takes a new connection', async () => {
      const url = await newDatabase();
      const errors: Error[] = [];
      const sql = open(url, { onIdleError: (error) => errors.push(error) });
      await sql.get('SELECT 1');
      await cutIdle(url);
      await eventually('the idle error', () => errors.length > 0, 5_000);
      expect(errors.map((error) => error.message)).toEqual(['terminating connection due to administrator command']);
      await expect(sql.get('SELECT 1 AS one')).resolves.toEqual({ one: 1 });
    });

    test('without onIdleError, is heard all the same: the process lives on', async () => {
      const url = await newDatabase();
      const sql = open(url);
      await sql.get('SELECT 1');
      await cutIdle(url);
      // The pause is what is tested: the cut reaches the idle client within it, with no listener of ours.
      await sleep(200);
      await expect(sql.get('SELECT 1 AS one')).resolves.toEqual({ one: 1 });
    });
  });
});
