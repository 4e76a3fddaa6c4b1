/**
 * The API keys and the people on PostgreSQL with two instances (issue 42, "Done when": API keys
 * revoked at once on PostgreSQL with two instances): two built servers on one database, each with
 * a DATA_DIR of its own. A key made by the command line works on both; a key made in the admin of
 * instance A, shown once, works on B; revoked through the admin of A (a real signed-in post with
 * its CSRF token, read from the page), B answers 401 at the very next request, with no wait; a
 * write on A (mark spam) is read on B; a person removed on A has their session cookie refused on B
 * at once. Nothing is cached per instance: each request reads the database.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { openStore, type Store } from '../../packages/site-forms/src/lib/database/database.ts';
import { createLogger } from '../../packages/site-forms/src/lib/log.ts';
import { runCli } from '../contact/run-inbox.ts';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/postgres.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { TEST_DATABASE } from '../support/stores.ts';

const PASSWORD = 'correct horse battery staple';
const EDDIE_PASSWORD = 'an editor edits and edits';
const CONTACT = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.' };

describe.skipIf(!postgresAvailable)('API keys and people on two instances of one PostgreSQL', () => {
  let postgres: PostgresServer;
  let url: string;
  let a: Site;
  let b: Site;
  let store: Store;
  let message: number;
  beforeAll(async () => {
    postgres = await startPostgres();
    url = await postgres.createDatabase('api_two_instances');
    const env = { DATABASE_URL: url, ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD) };
    // One after the other: the first makes the schema and the first owner.
    a = await startSite(env);
    b = await startSite(env);
    expect((await postForm(`${a.url}/api/contact`, CONTACT)).status).toBe(200);
    store = openStore({ ...TEST_DATABASE, url, dataDir: a.dataDir }, createLogger({ level: 'silent' }));
    await store.ready;
    message = Number((await store.sql.get<{ id: number }>('SELECT id FROM submissions ORDER BY id LIMIT 1'))!.id);
    const at = new Date().toISOString();
    await store.sql.run(
      `INSERT INTO admin_users (email, name, role, forms, password_hash, origin, user_handle, digest, created_at, updated_at)
       VALUES ('eddie@example.org', 'Eddie', 'editor', '["contact"]', ?, 'cli', 'handle-of-eddie', 0, ?, ?)`,
      [await hashPassword(EDDIE_PASSWORD), at, at],
    );
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    for (const site of [a, b]) await site?.stop().catch(() => {});
    await postgres?.remove();
  });

  /** A key made by `npm run admin -- api-key create` on the database: the last line of its stdout. */
  const cliKey = async (...args: string[]) => {
    const run = await runCli('admin', ['api-key', 'create', ...args], { DATABASE_URL: url });
    expect(run.code, run.stderr).toBe(0);
    return run.stdout.trim().split('\n').at(-1)!;
  };
  const api = (site: Site, path: string, key: string, init: RequestInit = {}) =>
    fetch(`${site.url}${path}`, { ...init, headers: { authorization: `Bearer ${key}` } });
  const signIn = async (site: Site, email: string, password: string) => {
    const answer = await fetch(`${site.url}/admin/actions/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ email, password }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url },
      redirect: 'manual',
    });
    expect([answer.status, answer.headers.get('location')]).toEqual([303, '/admin']);
    return answer.headers.get('set-cookie')!.split(';')[0]!;
  };
  const page = (site: Site, path: string, cookie: string) => fetch(`${site.url}${path}`, { headers: { cookie }, redirect: 'manual' });
  const adminPost = (site: Site, path: string, cookie: string, fields: Record<string, string>) =>
    fetch(`${site.url}${path}`, {
      method: 'POST',
      body: new URLSearchParams(fields),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url, cookie },
      redirect: 'manual',
    });
  /** The owner's keys page on A, with its CSRF token (the session's, as any of its pages carries it). */
  const keysPage = async (cookie: string) => {
    const answer = await page(a, '/admin/keys', cookie);
    expect(answer.status).toBe(200);
    const html = await answer.text();
    return { html, csrf: /name="csrf" value="([^"]+)"/.exec(html)![1]! };
  };

  test('a key made by the command line works on both instances', async () => {
    const key = await cliKey('--name', 'both', '--scope', 'read');
    for (const site of [a, b]) {
      const listed = await api(site, '/api/v1/messages', key);
      expect(listed.status).toBe(200);
      expect(((await listed.json()) as { messages: Array<{ id: number }> }).messages.map((m) => m.id)).toEqual([message]);
    }
  });

  test('a key made in the admin of A is shown once and works on B; revoked in the admin of A, B refuses it at its very next request', async () => {
    const cookie = await signIn(a, '', PASSWORD);
    const { csrf } = await keysPage(cookie);
    const made = await adminPost(a, '/admin/actions/create-key', cookie, { csrf, name: 'made here', scope: 'read', 'form.contact': 'on' });
    expect(made.status).toBe(200);
    expect(made.headers.get('cache-control')).toContain('no-store');
    const key = /id="shown-value"[^>]*value="(sfk_[^"]+)"/.exec(await made.text())?.[1];
    expect(key).toMatch(/^sfk_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/);
    expect((await api(b, '/api/v1/messages', key!)).status).toBe(200);

    // The list shows its name and prefix, never the key again.
    const { html } = await keysPage(cookie);
    expect(html).toContain('made here');
    expect(html).toContain(`${key!.slice(0, 8)}…`);
    expect(html).not.toContain(key!.slice(17));
    const id = /name="id" value="(\d+)"[\s\S]*?aria-label="Revoke the key made here"/.exec(html)?.[1];
    expect(id).toMatch(/^\d+$/);

    const cliMade = await cliKey('--name', 'ci', '--scope', 'read');
    const ciId = /name="id" value="(\d+)"[\s\S]*?aria-label="Revoke the key ci"/.exec((await keysPage(cookie)).html)![1]!;
    for (const revokedId of [id!, ciId]) {
      const revoked = await adminPost(a, '/admin/actions/revoke-key', cookie, { csrf, id: revokedId });
      expect([revoked.status, revoked.headers.get('location')]).toEqual([303, '/admin/keys?revoked=1']);
    }
    // The very next request on B, with no wait: 401.
    for (const revokedKey of [key!, cliMade]) {
      const refused = await api(b, '/api/v1/messages', revokedKey);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="site-forms", error="invalid_token"');
      await expect(refused.json()).resolves.toMatchObject({ success: false, code: 'invalid_key' });
    }
    const audit = await store.sql.all<{ action: string; detail: string; actor_name: string }>(
      "SELECT action, detail, actor_name FROM admin_audit WHERE action LIKE 'key-%' ORDER BY id",
    );
    expect(audit.map((row) => [row.action, row.actor_name])).toEqual([
      ['key-created', 'Owner'],
      ['key-revoked', 'Owner'],
      ['key-revoked', 'Owner'],
    ]);
    expect(JSON.stringify(audit)).not.toContain(key!.slice(17));
    // Nothing secret reached either instance's log.
    expect(JSON.stringify([...a.logs, ...b.logs])).not.toContain(key!.slice(17));
  });

  test('a write on A (mark spam) is read on B', async () => {
    const writer = await cliKey('--name', 'writer', '--scope', 'write');
    const spam = await api(a, `/api/v1/messages/${message}/spam`, writer, { method: 'POST' });
    expect(spam.status).toBe(200);
    const read = await api(b, `/api/v1/messages/${message}`, writer);
    expect(read.status).toBe(200);
    expect(((await read.json()) as { message: { status: string } }).message.status).toBe('spam');
  });

  test('a person removed in the admin of A has their session cookie refused on B at once', async () => {
    const eddie = await signIn(b, 'eddie@example.org', EDDIE_PASSWORD);
    expect((await page(b, '/admin/messages', eddie)).status).toBe(200);
    // The keys are the owner's: an editor's page is refused.
    expect((await page(b, '/admin/keys', eddie)).status).toBe(403);
    const owner = await signIn(a, '', PASSWORD);
    const { csrf } = await keysPage(owner);
    const { id } = (await store.sql.get<{ id: number }>("SELECT id FROM admin_users WHERE email = 'eddie@example.org'"))!;
    const removed = await adminPost(a, '/admin/actions/remove-person', owner, { csrf, id: String(Number(id)) });
    expect([removed.status, removed.headers.get('location')]).toEqual([303, '/admin/people?removed=1']);
    const after = await page(b, '/admin/messages', eddie);
    expect([after.status, after.headers.get('location')]).toEqual([303, '/admin?ended=expired']);
  });
});
