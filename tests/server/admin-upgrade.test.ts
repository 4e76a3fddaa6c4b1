import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { hashToken } from '../../packages/site-forms/src/lib/admin/session.ts';
import { MIGRATIONS } from '../../packages/site-forms/src/lib/sql/migrations.ts';
import { runCli } from '../contact/run-inbox.ts';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/postgres.ts';
import { type Site, startSite } from '../support/site.ts';

/**
 * An install of the version before people (issue 42), upgraded by the built server: a SQLite file
 * left at the schema before people, with a live session of the one password and audit entries.
 * The server with the same ADMIN_PASSWORD_HASH upgrades it; the old cookie still opens /admin as
 * the first owner; the old one-field form still signs in; two starts make one first owner.
 */
const PASSWORD = 'correct horse battery staple';
/** The step of issue 42, found by its name so a step merged before it moves nothing here. */
const PEOPLE_STEP = MIGRATIONS.findIndex((step) => step.name === 'people, passkeys, sign-in links and API keys');
const OLD_TOKEN = 'OldSessionTokenOfTheOnePassword_0123456789a';

let dataDir: string;
let env: Record<string, string>;
let site: Site | undefined;

beforeAll(async () => {
  expect(PEOPLE_STEP).toBeGreaterThan(0);
  expect(OLD_TOKEN).toMatch(/^[A-Za-z0-9_-]{43}$/);
  dataDir = mkdtempSync(join(tmpdir(), 'site-forms-upgrade-'));
  env = { ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD) };
  const old = new DatabaseSync(join(dataDir, 'forms.db'));
  for (const step of MIGRATIONS.slice(0, PEOPLE_STEP)) old.exec(step.sqlite);
  old.exec(`PRAGMA user_version = ${PEOPLE_STEP}`);
  // Signed in a minute ago by the version before people, which wrote only these two tables.
  const minuteAgo = new Date(Date.now() - 60_000).toISOString();
  old.prepare('INSERT INTO admin_sessions (token_hash, created_at, last_seen_at) VALUES (?, ?, ?)').run(hashToken(OLD_TOKEN), minuteAgo, minuteAgo);
  old.prepare("INSERT INTO admin_audit (at, action, detail, client, repeats) VALUES (?, 'sign-in', '', 'abc', 1)").run(minuteAgo);
  old.close();
});
afterAll(async () => {
  await site?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const people = () => {
  const db = new DatabaseSync(join(dataDir, 'forms.db'), { readOnly: true });
  try {
    return db.prepare('SELECT origin, role, password_hash FROM admin_users ORDER BY id').all();
  } finally {
    db.close();
  }
};

const get = (path: string, cookie?: string) => fetch(`${site!.url}${path}`, { headers: cookie ? { cookie } : {}, redirect: 'manual' });

test('the old cookie still opens /admin, the old one-field form signs in, and two starts make one first owner', async () => {
  site = await startSite(env, { dataDir });
  expect(people()).toEqual([{ origin: 'env', role: 'owner', password_hash: null }]);

  const overview = await get('/admin', `admin_session=${OLD_TOKEN}`);
  expect(overview.status).toBe(200);
  const html = await overview.text();
  expect(html).toContain('<h1>Overview</h1>');
  // Its owner pages too: the old session is the first owner's.
  expect((await get('/admin/audit', `admin_session=${OLD_TOKEN}`)).status).toBe(200);

  // The form of the version before people: the password alone.
  const signIn = await fetch(`${site.url}/admin/actions/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ password: PASSWORD }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url },
    redirect: 'manual',
  });
  expect([signIn.status, signIn.headers.get('location')]).toEqual([303, '/admin']);
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
  expect((await get('/admin/messages', cookie)).status).toBe(200);

  await site.stop();
  site = await startSite(env, { dataDir });
  expect(people()).toEqual([{ origin: 'env', role: 'owner', password_hash: null }]);
  // The new session outlives the restart (it is in the database); the old cookie too.
  expect((await get('/admin/messages', cookie)).status).toBe(200);
  expect((await get('/admin', `admin_session=${OLD_TOKEN}`)).status).toBe(200);
});

test('the sign-in page: the password first, as before, then an optional email, labelled, for password managers', async () => {
  site ??= await startSite(env, { dataDir });
  const html = await (await get('/admin')).text();
  expect(html).toMatch(/<label for="password">Password<\/label>/);
  expect(html).toMatch(/<label for="email">Email \(optional\)<\/label>/);
  const email = /<input[^>]*id="email"[^>]*>/.exec(html)?.[0] ?? '';
  expect(email).toContain('autocomplete="username"');
  expect(email).toContain('type="email"');
  expect(email).not.toContain('required');
  expect(html.indexOf('id="password"')).toBeLessThan(html.indexOf('id="email"'));
});

test('ADMIN_PASSWORD_HASH removed: the first owner’s cookie opens nothing, and /admin is 404 while nobody else exists', async () => {
  await site?.stop();
  site = undefined;
  const own = mkdtempSync(join(tmpdir(), 'site-forms-unset-'));
  let server: Site | undefined = await startSite(env, { dataDir: own });
  try {
    const signIn = await fetch(`${server.url}/admin/actions/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ password: PASSWORD }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      redirect: 'manual',
    });
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const open = (path: string) => fetch(`${server!.url}${path}`, { headers: { cookie }, redirect: 'manual' });
    expect((await open('/admin/messages')).status).toBe(200);
    await server.stop();
    server = await startSite({}, { dataDir: own });
    expect([(await open('/admin/messages')).status, (await open('/admin')).status]).toEqual([404, 404]);
  } finally {
    await server?.stop();
    rmSync(own, { recursive: true, force: true });
  }
});

/**
 * The same upgrade on PostgreSQL (issue 42 "Done when", step S7a): a database left at the schema
 * before people, with a live session of the one password and audit entries; two built servers
 * start on it at once, migrate it and make ONE first owner; the old cookie opens /admin, the old
 * one-field form signs in, and `npm run admin -- users` lists that owner.
 */
describe.skipIf(!postgresAvailable)('on PostgreSQL', () => {
  let postgres: PostgresServer;
  let url: string;
  const servers: Site[] = [];
  const dataDirs: string[] = [];

  beforeAll(async () => {
    postgres = await startPostgres();
    url = await postgres.createDatabase('upgrade');
    const old = new pg.Client({ connectionString: url });
    await old.connect();
    try {
      // As the version before people left it: its steps applied and recorded, as sql/postgres.ts records them.
      await old.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
      for (const [index, step] of MIGRATIONS.slice(0, PEOPLE_STEP).entries()) {
        await old.query(step.postgresql);
        await old.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [index + 1, step.name]);
      }
      const minuteAgo = new Date(Date.now() - 60_000).toISOString();
      await old.query('INSERT INTO admin_sessions (token_hash, created_at, last_seen_at) VALUES ($1, $2, $2)', [hashToken(OLD_TOKEN), minuteAgo]);
      await old.query(
        "INSERT INTO admin_audit (at, action, detail, client, repeats) VALUES ($1, 'sign-in', '', 'abc', 1), ($1, 'export-messages', 'csv', 'abc', 1)",
        [minuteAgo],
      );
    } finally {
      await old.end();
    }
  }, 60_000);
  afterAll(async () => {
    for (const server of servers) await server.stop().catch(() => {});
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
    await postgres?.remove();
  });

  const query = async <Row extends object>(text: string): Promise<Row[]> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<Row>(text)).rows;
    } finally {
      await client.end();
    }
  };

  test('two servers starting at once upgrade it and make one first owner; the old cookie and the one-field form open /admin; users lists the owner', async () => {
    const start = () => {
      const dir = mkdtempSync(join(tmpdir(), 'site-forms-upgrade-pg-'));
      dataDirs.push(dir);
      return startSite({ ...env, DATABASE_URL: url }, { dataDir: dir });
    };
    servers.push(...(await Promise.all([start(), start()])));
    const [first, second] = servers as [Site, Site];
    // Each server answers /admin once it has made (or found) the first owner.
    for (const server of servers) expect((await fetch(`${server.url}/admin`)).status).toBe(200);
    expect(await query('SELECT origin, role, password_hash FROM admin_users ORDER BY id')).toEqual([{ origin: 'env', role: 'owner', password_hash: null }]);
    // The audit of the version before people is still there, with no actor.
    expect(await query("SELECT action, actor FROM admin_audit WHERE client = 'abc' ORDER BY id")).toEqual([
      { action: 'sign-in', actor: null },
      { action: 'export-messages', actor: null },
    ]);

    for (const server of servers) {
      const overview = await fetch(`${server.url}/admin`, { headers: { cookie: `admin_session=${OLD_TOKEN}` }, redirect: 'manual' });
      expect(overview.status).toBe(200);
      expect(await overview.text()).toContain('<h1>Overview</h1>');
    }
    expect((await fetch(`${first.url}/admin/audit`, { headers: { cookie: `admin_session=${OLD_TOKEN}` }, redirect: 'manual' })).status).toBe(200);

    const signIn = await fetch(`${second.url}/admin/actions/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ password: PASSWORD }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: second.url },
      redirect: 'manual',
    });
    expect([signIn.status, signIn.headers.get('location')]).toEqual([303, '/admin']);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    // A session in the database: the other instance knows it too.
    expect((await fetch(`${first.url}/admin/messages`, { headers: { cookie }, redirect: 'manual' })).status).toBe(200);

    const listed = await runCli('admin', ['users'], { DATABASE_URL: url, ...env });
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.split('\n');
    expect(lines[0]).toMatch(/^EMAIL\s+NAME\s+ROLE\s+FORMS\s+PASSWORD\s+PASSKEYS\s+LAST SIGN-IN$/);
    expect(lines[1]).toMatch(/^\(none\)\s+Owner\s+owner\s+every form\s+ADMIN_PASSWORD_HASH\s+0\s+\d{4}-\d\d-\d\dT/);
    expect(lines.filter((line) => /\sowner\s/.test(line))).toHaveLength(1);
  }, 120_000);
});
