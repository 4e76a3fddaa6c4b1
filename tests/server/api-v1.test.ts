/**
 * The REST API /api/v1 on the built server (issue 42), SQLite, keys made and revoked with
 * `npm run admin -- api-key` in the server's own folder while it runs: a read key sees only its
 * forms and changes nothing; a write key marks spam (audited with the key) and cannot reach
 * another form; 401 without, with a bad or a revoked key (at the very next request); cursor pages;
 * subscribers only with `newsletter`; the per-key budget (API_RATE_LIMIT_PER_MINUTE) leaves
 * another key alone. The suite's forms are contact only: a `quote` message is stored directly.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openStore, type Store } from '../../packages/site-forms/src/lib/database/database.ts';
import { createLogger } from '../../packages/site-forms/src/lib/log.ts';
import { runCli } from '../contact/run-inbox.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { TEST_DATABASE } from '../support/stores.ts';

const CONTACT = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.' };

describe('/api/v1 on the built server', () => {
  let site: Site;
  let limited: Site;
  let store: Store;
  let contact: number[];
  let quote: number;
  beforeAll(async () => {
    [site, limited] = await Promise.all([startSite(), startSite({ API_RATE_LIMIT_PER_MINUTE: '3' })]);
    for (let i = 0; i < 3; i++) expect((await postForm(`${site.url}/api/contact`, CONTACT)).status).toBe(200);
    store = openStore({ ...TEST_DATABASE, url: undefined, dataDir: site.dataDir }, createLogger({ level: 'silent' }));
    await store.ready;
    quote = (await store.messages.receive({ ...CONTACT, held: undefined, form: 'quote' })).id;
    contact = (await store.sql.all<{ id: number }>("SELECT id FROM submissions WHERE form = 'contact' ORDER BY id")).map((row) => Number(row.id));
    await store.sql.run('INSERT INTO subscribers (email, created_at) VALUES (?, ?)', ['sub@example.com', new Date().toISOString()]);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await Promise.all([site?.stop(), limited?.stop()]);
  });

  /** A key made by the command line in `on`'s folder: the last line of its stdout. */
  const makeKey = async (args: string[], on = () => site) => {
    const run = await runCli('admin', ['api-key', 'create', ...args], { DATA_DIR: on().dataDir });
    expect(run.code, run.stderr).toBe(0);
    return run.stdout.trim().split('\n').at(-1)!;
  };
  const api = (path: string, key: string | undefined, init: RequestInit = {}, on = site) =>
    fetch(`${on.url}${path}`, {
      ...init,
      headers: { ...(key !== undefined && { authorization: `Bearer ${key}` }), ...(init.headers as Record<string, string>) },
    });
  const statusOf = async (id: number) => (await store.sql.get<{ status: string }>('SELECT status FROM submissions WHERE id = ?', [id]))?.status;

  test('a read key of contact: lists only contact messages, 404 for the quote message, 403 on spam and delete, nothing changed', async () => {
    const key = await makeKey(['--name', 'reader', '--scope', 'read', '--forms', 'contact']);
    const listed = await api('/api/v1/messages', key);
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as { messages: Array<{ id: number; form: string }> };
    expect(body.messages.map((m) => m.id)).toEqual([...contact].reverse());
    expect((await api(`/api/v1/messages/${quote}`, key)).status).toBe(404);
    expect((await api('/api/v1/messages?form=quote', key)).status).toBe(404);
    expect((await api(`/api/v1/messages/${contact[0]}/spam`, key, { method: 'POST' })).status).toBe(403);
    const deleted = await api(`/api/v1/messages/${contact[0]}`, key, { method: 'DELETE' });
    expect(deleted.status).toBe(403);
    expect(deleted.headers.get('www-authenticate')).toBe('Bearer realm="site-forms", error="insufficient_scope"');
    expect(await statusOf(contact[0]!)).toBe('pending');
  });

  test('a write key of quote: spam changes the status, audited with the key; a contact message is 404 and unchanged', async () => {
    const key = await makeKey(['--name', 'quotes', '--scope', 'write', '--forms', 'quote']);
    const spam = await api(`/api/v1/messages/${quote}/spam`, key, { method: 'POST' });
    expect(spam.status).toBe(200);
    await expect(spam.json()).resolves.toEqual({ success: true, changed: true, status: 'spam', deferred: false });
    expect(await statusOf(quote)).toBe('spam');
    const { id } = (await store.sql.get<{ id: number }>("SELECT id FROM api_keys WHERE name = 'quotes'"))!;
    // The keys' making by the command line is audited too (decision 0283); what the key did:
    expect(await store.sql.all("SELECT action, detail, actor, actor_name FROM admin_audit WHERE action NOT LIKE 'key-%'")).toEqual([
      { action: 'mark-spam', detail: `#${quote}`, actor: `key:${Number(id)}`, actor_name: 'key quotes' },
    ]);
    expect((await api(`/api/v1/messages/${contact[1]}/spam`, key, { method: 'POST' })).status).toBe(404);
    expect(await statusOf(contact[1]!)).toBe('pending');
  });

  test('401 with WWW-Authenticate: no key, a bad one, and a key revoked by the command line at its very next request', async () => {
    const none = await api('/api/v1/forms', undefined);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="site-forms"');
    const bad = await api('/api/v1/forms', 'sfk_nope');
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe('Bearer realm="site-forms", error="invalid_token"');
    const key = await makeKey(['--name', 'short-lived', '--scope', 'read']);
    expect((await api('/api/v1/forms', key)).status).toBe(200);
    expect((await runCli('admin', ['api-key', 'revoke', 'short-lived'], { DATA_DIR: site.dataDir })).code).toBe(0);
    const revoked = await api('/api/v1/forms', key);
    expect(revoked.status).toBe(401);
    expect(revoked.headers.get('www-authenticate')).toBe('Bearer realm="site-forms", error="invalid_token"');
  });

  test('cursor pages (limit 2) newest first with no duplicate; a status filter', async () => {
    const key = await makeKey(['--name', 'pager', '--scope', 'read']);
    const seen: number[] = [];
    let next: string | null = null;
    do {
      const page = (await (await api(`/api/v1/messages?limit=2${next ? `&cursor=${next}` : ''}`, key)).json()) as {
        messages: Array<{ id: number }>;
        next: string | null;
      };
      seen.push(...page.messages.map((m) => m.id));
      next = page.next;
    } while (next !== null);
    expect(seen).toEqual([quote, ...[...contact].reverse()]);
    const spam = (await (await api('/api/v1/messages?status=spam', key)).json()) as { messages: Array<{ id: number }> };
    expect(spam.messages.map((m) => m.id)).toEqual([quote]);
  });

  test('subscribers need newsletter among the key’s forms; a write key with it erases', async () => {
    const contactOnly = await makeKey(['--name', 'no-list', '--scope', 'write', '--forms', 'contact']);
    expect((await api('/api/v1/subscribers', contactOnly)).status).toBe(404);
    const key = await makeKey(['--name', 'list', '--scope', 'write', '--forms', 'newsletter']);
    await expect((await api('/api/v1/subscribers', key)).json()).resolves.toMatchObject({ subscribers: [{ email: 'sub@example.com' }], next: null });
    const erased = await api('/api/v1/subscribers/erase', key, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"email":"sub@example.com"}',
    });
    await expect(erased.json()).resolves.toEqual({ success: true, found: true });
    expect(await store.sql.all('SELECT email FROM subscribers')).toEqual([]);
  });

  test('API_RATE_LIMIT_PER_MINUTE=3: the 4th request of a key is 429 with Retry-After; another key still gets 200', async () => {
    const first = await makeKey(['--name', 'busy', '--scope', 'read'], () => limited);
    const second = await makeKey(['--name', 'calm', '--scope', 'read'], () => limited);
    for (let i = 0; i < 3; i++) expect((await api('/api/v1/forms', first, {}, limited)).status).toBe(200);
    const refused = await api('/api/v1/forms', first, {}, limited);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await api('/api/v1/forms', second, {}, limited)).status).toBe(200);
  });
});
