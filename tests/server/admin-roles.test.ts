import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { ADMIN_NAV } from '../../packages/site-forms/src/lib/admin/nav.ts';
import { csrfTokenFor, hashToken } from '../../packages/site-forms/src/lib/admin/session.ts';
import { type Site, startSite } from '../support/site.ts';

/**
 * Issue 42 step S4 on the built server: an editor and a reader of the quote form, with sessions
 * of their own, beside a message of the contact form and one of the quote form. What they read is
 * their form's; what they post is refused by their role (403) or, for another form's message, as
 * if it did not exist (404); the owner-only pages stay the owner's (403).
 */
const PASSWORD = 'correct horse battery staple';
const EDDIE = 'EddieSessionTokenOfTheQuoteEditor_012345678';
const RITA = 'RitaSessionTokenOfTheQuoteReader_0123456789';
/** A reader of the quote form and of the local list (step S5: the subscribers' page without its buttons). */
const NORA = 'NoraSessionTokenOfTheListReader_01234567890';
/** A file of Carl's (contact) message and one of Quinn's (quote). */
const CARL_FILE = 'CarlsFileOfTheContactForm';
const QUINN_FILE = 'QuinnsFileOfTheQuoteFormX';

let dataDir: string;
let site: Site;
let db: DatabaseSync;
let carl: number;
let quinn: number;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'site-forms-roles-'));
  site = await startSite({ ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD) }, { dataDir });
  // The server may be writing (the first owner, its housekeeping) just after it starts: wait for its
  // lock, as tests/server/invitations.test.ts does, rather than fail with "database is locked".
  db = new DatabaseSync(join(dataDir, 'forms.db'), { timeout: 5_000 });
  const now = new Date().toISOString();
  const person = db.prepare(
    "INSERT INTO admin_users (id, email, name, role, forms, origin, user_handle, created_at, updated_at) VALUES (?, ?, ?, ?, '[\"quote\"]', 'invited', ?, ?, ?)",
  );
  person.run(2, 'eddie@example.org', 'Eddie', 'editor', 'handle-eddie', now, now);
  person.run(3, 'rita@example.org', 'Rita', 'reader', 'handle-rita', now, now);
  db.prepare(
    "INSERT INTO admin_users (id, email, name, role, forms, origin, user_handle, created_at, updated_at) VALUES (4, 'nora@example.org', 'Nora', 'reader', '[\"quote\",\"newsletter\"]', 'invited', 'handle-nora', ?, ?)",
  ).run(now, now);
  db.prepare('INSERT INTO subscribers (email, created_at) VALUES (?, ?)').run('sub@example.org', now);
  const session = db.prepare(
    "INSERT INTO admin_person_sessions (token_hash, user_id, stage, method, created_at, last_seen_at) VALUES (?, ?, 'full', 'password', ?, ?)",
  );
  session.run(hashToken(EDDIE), 2, now, now);
  session.run(hashToken(RITA), 3, now, now);
  session.run(hashToken(NORA), 4, now, now);
  const message = db.prepare("INSERT INTO submissions (created_at, name, email, message, status, form) VALUES (?, ?, ?, ?, 'sent', ?) RETURNING id");
  carl = Number((message.get(now, 'Carl Contact', 'carl@example.org', 'About the contact form.', 'contact') as { id: number }).id);
  quinn = Number((message.get(now, 'Quinn Quote', 'quinn@example.org', 'A quote, please.', 'quote') as { id: number }).id);
  // As a post leaves a file: its bytes under DATA_DIR/files, its row beside the message.
  mkdirSync(join(dataDir, 'files', '2026-11'), { recursive: true });
  for (const [id, submissionId] of [
    [CARL_FILE, carl],
    [QUINN_FILE, quinn],
  ] as const) {
    writeFileSync(join(dataDir, 'files', '2026-11', id), `bytes of ${id}`);
    db.prepare('INSERT INTO files (id, submission_id, field, name, size, type, storage_key, created_at, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)').run(
      id,
      submissionId,
      'drawings',
      `${id}.txt`,
      `bytes of ${id}`.length,
      'text/plain',
      `2026-11/${id}`,
      now,
    );
  }
}, 60_000);
afterAll(async () => {
  db?.close();
  await site?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const cookieOf = (token: string) => `admin_session=${token}`;
const get = (path: string, token: string) => fetch(`${site.url}${path}`, { headers: { cookie: cookieOf(token) }, redirect: 'manual' });
const post = (path: string, token: string, fields: Record<string, string>) =>
  fetch(`${site.url}${path}`, {
    method: 'POST',
    body: new URLSearchParams({ csrf: csrfTokenFor(token), ...fields }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url, cookie: cookieOf(token) },
    redirect: 'manual',
  });
const statusOf = (id: number) => (db.prepare('SELECT status FROM submissions WHERE id = ?').get(id) as { status: string }).status;

describe('a reader of the quote form', () => {
  test('lists, counts and opens the quote form’s messages only', async () => {
    const list = await get('/admin/messages', RITA);
    expect(list.status).toBe(200);
    const html = await list.text();
    expect(html).toContain('Quinn Quote');
    expect(html).not.toContain('Carl Contact');
    expect(await (await get('/admin/messages?form=contact', RITA)).text()).not.toContain('Carl Contact');
    expect(await (await get('/admin/messages?q=carl', RITA)).text()).not.toContain('Carl Contact');
    expect((await get(`/admin/messages/${quinn}`, RITA)).status).toBe(200);
    expect((await get(`/admin/messages/${carl}`, RITA)).status).toBe(404);
    const own = await get(`/admin/messages/${quinn}/files/${QUINN_FILE}`, RITA);
    expect([own.status, await own.text()]).toEqual([200, `bytes of ${QUINN_FILE}`]);
    expect((await get(`/admin/messages/${carl}/files/${CARL_FILE}`, RITA)).status).toBe(404);
  });

  test.each(['/admin/webhooks', '/admin/audit', '/admin/subscribers', '/admin/messages/1/delete'])('%s is refused (403)', async (path) => {
    expect((await get(path, RITA)).status).toBe(403);
  });

  test('a crafted post is refused (403) and changes nothing', async () => {
    for (const [path, id] of [
      ['/admin/actions/spam', quinn],
      ['/admin/actions/delete', quinn],
      ['/admin/actions/spam', carl],
    ] as const) {
      const answer = await post(path, RITA, { id: String(id) });
      expect(answer.status).toBe(403);
      expect(await answer.text()).toContain('Your role cannot do this.');
    }
    expect([statusOf(quinn), statusOf(carl)]).toEqual(['sent', 'sent']);
    const answer = await post('/admin/actions/export', RITA, { what: 'messages', format: 'csv' });
    expect(answer.status).toBe(403);
  });
});

describe('an editor of the quote form', () => {
  test('cannot reach another form’s message: 404 on its pages and its posts, nothing changed', async () => {
    expect((await get(`/admin/messages/${carl}`, EDDIE)).status).toBe(404);
    expect((await get(`/admin/messages/${carl}/delete`, EDDIE)).status).toBe(404);
    expect((await post('/admin/actions/spam', EDDIE, { id: String(carl) })).status).toBe(404);
    expect((await post('/admin/actions/delete', EDDIE, { id: String(carl) })).status).toBe(404);
    expect(statusOf(carl)).toBe('sent');
  });

  test('exports their form’s messages only', async () => {
    const answer = await post('/admin/actions/export', EDDIE, { what: 'messages', format: 'json' });
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { name: string }[]).map((m) => m.name)).toEqual(['Quinn Quote']);
  });

  test('marks their form’s message as spam, and the owner’s audit page names them', async () => {
    const answer = await post('/admin/actions/spam', EDDIE, { id: String(quinn) });
    expect([answer.status, answer.headers.get('location')]).toEqual([303, `/admin/messages/${quinn}?done=mark-spam-sent`]);
    expect(statusOf(quinn)).toBe('spam');
    const signIn = await fetch(`${site.url}/admin/actions/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ password: PASSWORD }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url },
      redirect: 'manual',
    });
    const owner = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const audit = await fetch(`${site.url}/admin/audit`, { headers: { cookie: owner } });
    expect(audit.status).toBe(200);
    const html = await audit.text();
    expect(html).toContain(`Marked as spam: #${quinn}`);
    expect(html).toContain('Eddie &lt;eddie@example.org&gt;');
  });
});

/** The owner's session cookie, from signing in with the site's password. */
async function ownerCookie(): Promise<string> {
  const signIn = await fetch(`${site.url}/admin/actions/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ password: PASSWORD }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url },
    redirect: 'manual',
  });
  return signIn.headers.get('set-cookie')!.split(';')[0]!;
}
const getAs = (path: string, cookie: string) => fetch(`${site.url}${path}`, { headers: { cookie }, redirect: 'manual' });
/** The admin posts a page's forms send, by the last part of their address (`spam`, `sign-out`…). */
const postsOf = (html: string) => [...html.matchAll(/<form[^>]*action="\/admin\/actions\/([a-z-]+)"/g)].map((m) => m[1]!);
/** The addresses of the admin's navigation on a page. */
const navOf = (html: string) => [...(/<nav class="admin-nav"[\s\S]*?<\/nav>/.exec(html)?.[0] ?? '').matchAll(/href="([^"]+)"/g)].map((m) => m[1]!);
/** The counts per status of the overview. */
const countsOf = (html: string) =>
  [...(/<ul class="admin-counts">[\s\S]*?<\/ul>/.exec(html)?.[0] ?? '').matchAll(/<strong>(\d+)<\/strong>/g)].map((m) => Number(m[1]));

describe('what each person sees (step S5)', () => {
  test('a reader’s message page and list offer nothing that changes anything: no post but sign-out, no delete link', async () => {
    for (const path of [`/admin/messages/${quinn}`, '/admin/messages']) {
      const answer = await get(path, RITA);
      expect(answer.status).toBe(200);
      const html = await answer.text();
      expect(postsOf(html)).toEqual(['sign-out']);
      expect(html).not.toContain(`/admin/messages/${quinn}/delete`);
    }
  });

  test('an editor’s message page has triage and delete; their list has the export of messages', async () => {
    const html = await (await get(`/admin/messages/${quinn}`, EDDIE)).text();
    // Quinn's message is sent or, once the editor's test above marked it, spam: one of the two.
    expect(postsOf(html).filter((path) => path !== 'sign-out')).toEqual([statusOf(quinn) === 'spam' ? 'release' : 'spam']);
    expect(html).toContain(`href="/admin/messages/${quinn}/delete"`);
    expect(postsOf(await (await get('/admin/messages', EDDIE)).text())).toEqual(['sign-out', 'export', 'export', 'export']);
  });

  test('a reader of the list sees its addresses without delete, export or retry', async () => {
    const answer = await get('/admin/subscribers', NORA);
    expect(answer.status).toBe(200);
    const html = await answer.text();
    expect(html).toContain('sub@example.org');
    expect(postsOf(html)).toEqual(['sign-out']);
  });

  test('the overview opens to a reader with their form’s counts only, without the site’s set-up; the owner’s counts every form', async () => {
    const reader = await get('/admin', RITA);
    expect(reader.status).toBe(200);
    const html = await reader.text();
    expect(countsOf(html).reduce((a, b) => a + b, 0)).toBe(1);
    expect(html).not.toContain('<dt>Database</dt>');
    expect(html).toContain('Rita');
    const owner = await (await getAs('/admin', await ownerCookie())).text();
    expect(countsOf(owner).reduce((a, b) => a + b, 0)).toBe(2);
    expect(owner).toContain('<dt>Database</dt>');
  });

  test.each([
    ['the reader', RITA, ['/admin', '/admin/messages', '/admin/account']],
    ['the editor', EDDIE, ['/admin', '/admin/messages', '/admin/account']],
    ['the reader of the list', NORA, ['/admin', '/admin/messages', '/admin/subscribers', '/admin/account']],
  ])('%s’s navigation links the pages they may open, and every page it leaves out refuses them (403)', async (_, token, expected) => {
    const nav = navOf(await (await get('/admin/messages', token)).text());
    expect(nav).toEqual(expected);
    for (const path of nav) expect((await get(path, token)).status).toBe(200);
    for (const { path } of ADMIN_NAV.filter((entry) => !nav.includes(entry.path))) expect((await get(path, token)).status).toBe(403);
  });

  test('the owner’s navigation links every page, each open to them', async () => {
    const cookie = await ownerCookie();
    const nav = navOf(await (await getAs('/admin/messages', cookie)).text());
    expect(nav).toEqual(ADMIN_NAV.map((entry) => entry.path));
    for (const path of nav) expect((await getAs(path, cookie)).status).toBe(200);
  });
});
