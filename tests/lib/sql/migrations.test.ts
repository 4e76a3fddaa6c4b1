import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, test } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { MIGRATIONS } from '../../../packages/site-forms/src/lib/sql/migrations.ts';
import { openStore } from '../../../packages/site-forms/src/lib/database/database.ts';
import { TEST_DATABASE } from '../../support/stores.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('a SQLite file of the previous version', () => {
  test('is upgraded in place at start: every message, its history and its id kept; statuses no longer checked by SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'site-forms-migrate-'));
    dirs.push(dir);
    // The file as the previous release left it: steps 1 and 2, with a message and its history.
    const old = new DatabaseSync(join(dir, 'forms.db'));
    old.exec('PRAGMA foreign_keys = ON');
    old.exec(MIGRATIONS[0]!.sqlite);
    old.exec(MIGRATIONS[1]!.sqlite);
    old.exec('PRAGMA user_version = 2');
    old.exec(`INSERT INTO submissions (id, created_at, name, email, message, status, attempts, last_error)
              VALUES (7, '2026-05-01T08:00:00.000Z', 'Ada', 'ada@example.org', 'Hello there, friend.', 'failed', 1, '550')`);
    old.exec(`INSERT INTO delivery_attempts (submission_id, attempted_at, outcome, error) VALUES (7, '2026-05-01T08:00:01.000Z', 'failed', '550')`);
    old.exec(`INSERT INTO subscribers (email, created_at) VALUES ('grace@example.org', '2026-01-01T00:00:00.000Z')`);
    expect(() => old.exec("UPDATE submissions SET status = 'spam' WHERE id = 7")).toThrow(/CHECK constraint failed/);
    old.close();

    const store = openStore({ ...TEST_DATABASE, url: undefined, dataDir: dir }, createLogger({ level: 'silent' }));
    try {
      await expect(store.sql.get('PRAGMA user_version')).resolves.toEqual({ user_version: MIGRATIONS.length });
      await expect(store.outbox.find(7)).resolves.toMatchObject({ id: 7, name: 'Ada', status: 'failed', attempts: 1, lastError: '550' });
      await expect(store.outbox.history(7)).resolves.toEqual([{ at: '2026-05-01T08:00:01.000Z', outcome: 'failed', error: '550' }]);
      await expect(store.subscribers.list()).resolves.toEqual([{ email: 'grace@example.org', created: '2026-01-01T00:00:00.000Z' }]);
      // The next message continues after the highest id, and deleting a message still takes its history with it.
      await expect(store.submissions.save({ name: 'Bob', email: 'bob@example.org', message: 'Hello there, friend.', honeypot: '' })).resolves.toBe(8);
      await store.sql.run("UPDATE submissions SET status = 'spam' WHERE id = 8");
      await store.sql.run('DELETE FROM submissions WHERE id = 7');
      await expect(store.outbox.history(7)).resolves.toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describe('a SQLite file of the version before the audit log was bounded', () => {
  test('keeps no erased subscriber’s address in its audit log: only the domain is left, and every entry counts once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'site-forms-migrate-'));
    dirs.push(dir);
    const old = new DatabaseSync(join(dir, 'forms.db'));
    for (const step of MIGRATIONS.slice(0, 6)) old.exec(step.sqlite);
    old.exec('PRAGMA user_version = 6');
    old.exec(`INSERT INTO admin_audit (at, action, detail, client) VALUES
      ('2026-11-01T08:00:00.000Z', 'delete-subscriber', 'erase.me@example.org', 'abc'),
      ('2026-11-01T08:01:00.000Z', 'delete-message', '#7', 'abc')`);
    old.close();

    const store = openStore({ ...TEST_DATABASE, url: undefined, dataDir: dir }, createLogger({ level: 'silent' }));
    try {
      await expect(store.sql.all('SELECT action, detail, repeats FROM admin_audit ORDER BY id')).resolves.toEqual([
        { action: 'delete-subscriber', detail: '…@example.org', repeats: 1 },
        { action: 'delete-message', detail: '#7', repeats: 1 },
      ]);
    } finally {
      await store.close();
    }
  });
});

/** The step of issue 42, found by its name so a step merged before it moves nothing here. */
const PEOPLE_STEP = MIGRATIONS.findIndex((step) => step.name === 'people, passkeys, sign-in links and API keys');
const PEOPLE_TABLES = ['admin_users', 'admin_person_sessions', 'admin_links', 'admin_passkeys', 'admin_webauthn_challenges', 'api_keys'];

describe('a SQLite file of the version before people (one password, sessions of nobody in particular)', () => {
  test('is upgraded in place: its sessions and audit entries kept, the audit entries naming nobody, the new tables empty, and the old writes still accepted', async () => {
    expect(PEOPLE_STEP).toBeGreaterThan(0);
    const dir = mkdtempSync(join(tmpdir(), 'site-forms-migrate-'));
    dirs.push(dir);
    const old = new DatabaseSync(join(dir, 'forms.db'));
    for (const step of MIGRATIONS.slice(0, PEOPLE_STEP)) old.exec(step.sqlite);
    old.exec(`PRAGMA user_version = ${PEOPLE_STEP}`);
    old.exec(`INSERT INTO admin_sessions (token_hash, created_at, last_seen_at) VALUES ('live', '2026-11-29T02:00:00.000Z', '2026-11-29T02:10:00.000Z')`);
    old.exec(`INSERT INTO admin_audit (at, action, detail, client, repeats) VALUES
      ('2026-11-29T02:00:00.000Z', 'sign-in', '', 'abc', 1),
      ('2026-11-29T02:05:00.000Z', 'delete-message', '#7', 'abc', 1)`);
    old.close();

    const store = openStore({ ...TEST_DATABASE, url: undefined, dataDir: dir }, createLogger({ level: 'silent' }));
    try {
      await expect(store.sql.get('PRAGMA user_version')).resolves.toEqual({ user_version: MIGRATIONS.length });
      await expect(store.sql.all('SELECT token_hash, created_at, last_seen_at FROM admin_sessions')).resolves.toEqual([
        { token_hash: 'live', created_at: '2026-11-29T02:00:00.000Z', last_seen_at: '2026-11-29T02:10:00.000Z' },
      ]);
      await expect(store.sql.all('SELECT id, action, detail, actor, actor_name FROM admin_audit ORDER BY id')).resolves.toEqual([
        { id: 1, action: 'sign-in', detail: '', actor: null, actor_name: null },
        { id: 2, action: 'delete-message', detail: '#7', actor: null, actor_name: null },
      ]);
      for (const table of PEOPLE_TABLES) await expect(store.sql.get(`SELECT count(*) AS n FROM ${table}`), table).resolves.toEqual({ n: 0 });
      // An instance of the previous version beside this one writes as it always did.
      await store.sql.run("INSERT INTO admin_audit (at, action, detail, client) VALUES ('2026-11-29T03:00:00.000Z', 'sign-out', '', 'abc')");
      await store.sql.run(
        "INSERT INTO admin_sessions (token_hash, created_at, last_seen_at) VALUES ('next', '2026-11-29T03:00:00.000Z', '2026-11-29T03:00:00.000Z')",
      );
      await expect(store.sql.get('SELECT actor, repeats FROM admin_audit WHERE id = 3')).resolves.toEqual({ actor: null, repeats: 1 });
    } finally {
      await store.close();
    }
  });
});
