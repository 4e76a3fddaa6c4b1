import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { postForm, type Site, startSite } from '../support/site.ts';

/**
 * The owner's inbox over HTTP, against the built server and its real SQLite file: every
 * admin address and action without a session, from another origin, with an expired or
 * signed-out session, the sign-in throttle, and the admin's absence without a password hash.
 */
const PASSWORD = 'correct horse battery staple';
const SECRET_NAME = 'Ada Secretname';
let site: Site;
let db: DatabaseSync;

beforeAll(async () => {
  site = await startSite({ ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD), SPAM_FILTER: 'off' });
  for (const name of [SECRET_NAME, 'Bob Builder', 'Cy Failed']) {
    const response = await postForm(`${site.url}/api/contact`, { name, email: 'ada@example.org', message: 'A message of some length.', honeypot: '' });
    expect(response.status).toBe(200);
  }
  expect((await postForm(`${site.url}/api/newsletter`, { email: 'reader@example.org' })).status).toBe(200);
  db = new DatabaseSync(join(site.dataDir, 'forms.db'));
  // Without SMTP nothing is delivered; one message is made failed, as a given-up delivery leaves it.
  db.prepare("UPDATE submissions SET status = 'failed', last_error = 'refused' WHERE name = 'Cy Failed'").run();
});
afterAll(async () => {
  db?.close();
  await site?.stop();
});

/** Everything an action could change, to compare before and after. */
function snapshot() {
  return {
    messages: db.prepare('SELECT id, status FROM submissions ORDER BY id').all(),
    subscribers: db.prepare('SELECT email FROM subscribers ORDER BY email').all(),
    history: db.prepare('SELECT count(*) AS n FROM delivery_attempts').get(),
  };
}

function post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${site.url}${path}`, {
    method: 'POST',
    body: new URLSearchParams(fields),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url, ...headers },
    redirect: 'manual',
  });
}

function get(path: string, cookie?: string): Promise<Response> {
  return fetch(`${site.url}${path}`, { headers: cookie ? { cookie } : {}, redirect: 'manual' });
}

/** Signs in and answers the cookie to send and the CSRF token of the session. */
async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const response = await post('/admin/actions/sign-in', { password: PASSWORD });
  expect(response.status).toBe(303);
  const cookie = response.headers.get('set-cookie')!.split(';')[0]!;
  const page = await (await get('/admin', cookie)).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
  return { cookie, csrf };
}

const ids = () => db.prepare('SELECT id, name FROM submissions ORDER BY id').all() as { id: number; name: string }[];
const idOf = (name: string) => String(ids().find((m) => m.name === name)!.id);

const PAGES = ['/admin/messages', '/admin/messages?q=Secretname', '/admin/messages/1', '/admin/messages/1/delete', '/admin/subscribers', '/admin/audit'];
const ACTIONS: [string, Record<string, string>][] = [
  ['/admin/actions/sign-out', {}],
  ['/admin/actions/retry', { id: '3' }],
  ['/admin/actions/spam', { id: '1' }],
  ['/admin/actions/release', { id: '1' }],
  ['/admin/actions/delete', { id: '1' }],
  ['/admin/actions/delete-subscriber', { email: 'reader@example.org' }],
  ['/admin/actions/export', { what: 'messages', format: 'csv' }],
];

describe('without a session', () => {
  test.each(PAGES)('GET %s sends to the sign-in page and shows no data', async (path) => {
    const response = await get(path);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/admin?ended=expired');
    expect(await response.text()).not.toContain(SECRET_NAME);
  });

  test('/admin shows the sign-in form and nothing else', async () => {
    const response = await get('/admin');
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('<label for="password">Password</label>');
    expect(html).toMatch(/<button type="submit"[^>]*>Sign in<\/button>/);
    expect(html).not.toContain(SECRET_NAME);
    expect(html).not.toContain('Sign out');
  });

  test.each(ACTIONS)('POST %s changes nothing and sends to the sign-in page', async (path, fields) => {
    const before = snapshot();
    const response = await post(path, { ...fields, csrf: 'guess' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/admin?ended=none');
    expect(await response.text()).not.toContain(SECRET_NAME);
    expect(snapshot()).toEqual(before);
  });
});

describe('with a session, from another origin', () => {
  test.each([...ACTIONS, ['/admin/actions/sign-in', { password: PASSWORD }] as [string, Record<string, string>]])(
    'POST %s is 403 and changes nothing',
    async (path, fields) => {
      const { cookie, csrf } = await signIn();
      const before = snapshot();
      for (const origin of ['https://evil.test', 'null']) {
        const response = await post(path, { ...fields, csrf }, { cookie, origin });
        expect(response.status).toBe(403);
        expect(response.headers.get('set-cookie')).toBeNull();
      }
      expect(snapshot()).toEqual(before);
      // The session still works: a refusal does not sign the owner out.
      expect((await get('/admin/messages', cookie)).status).toBe(200);
    },
  );

  test('with a session and a forged CSRF token: 403, nothing changed', async () => {
    const { cookie } = await signIn();
    const before = snapshot();
    const response = await post('/admin/actions/delete', { id: '1', csrf: 'JpTOCOkh_-ZPpy4ILLdj-Fe0tlLDl7ojiOwSSkPYKHw' }, { cookie });
    expect(response.status).toBe(403);
    expect(snapshot()).toEqual(before);
  });
});

describe('sessions that have ended', () => {
  test('a signed-out session shows nothing and changes nothing', async () => {
    const { cookie, csrf } = await signIn();
    const out = await post('/admin/actions/sign-out', { csrf }, { cookie });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toBe('admin_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict');
    const before = snapshot();
    expect((await post('/admin/actions/delete', { id: '1', csrf }, { cookie })).headers.get('location')).toBe('/admin?ended=expired');
    expect((await get('/admin/messages', cookie)).headers.get('location')).toBe('/admin?ended=expired');
    expect(snapshot()).toEqual(before);
  });

  test.each([
    ['idle for 30 minutes', "last_seen_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-30 minutes')"],
    ['begun 12 hours ago', "created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-12 hours')"],
  ])('a session %s has ended', async (_, change) => {
    const { cookie, csrf } = await signIn();
    db.exec(`UPDATE admin_person_sessions SET ${change}`);
    const before = snapshot();
    expect((await get('/admin/messages', cookie)).headers.get('location')).toBe('/admin?ended=expired');
    expect((await post('/admin/actions/delete', { id: '1', csrf }, { cookie })).headers.get('location')).toBe('/admin?ended=expired');
    expect(snapshot()).toEqual(before);
  });

  test('the database keeps only the hash of the token', async () => {
    const { cookie } = await signIn();
    const token = cookie.split('=')[1]!;
    const stored = db.prepare('SELECT token_hash FROM admin_person_sessions').all() as { token_hash: string }[];
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.some((s) => s.token_hash.includes(token))).toBe(false);
  });
});

describe('signed in', () => {
  test('every page answers no-store and noindex', async () => {
    const { cookie } = await signIn();
    for (const path of ['/admin', ...PAGES]) {
      const response = await get(path, cookie);
      expect([path, response.status]).toEqual([path, 200]);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    }
  });

  test('a search says how many match in a sentence, then "Show all" after a space; a NUL searched for is an empty result, not an outage', async () => {
    const { cookie } = await signIn();
    const text = (html: string) => html.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');
    expect(text(await (await get('/admin/messages?q=Secretname', cookie)).text())).toContain('1 message matches; page 1 of 1. Show all');
    const nul = await get('/admin/messages?q=%00', cookie);
    expect(nul.status).toBe(200);
    expect(text(await nul.text())).toContain('No message matches. Show all');
    expect((await fetch(`${site.url}/api/health`)).status).toBe(200);
  });

  test('the sign-in cookie is HttpOnly, SameSite=Strict, Path=/ (no Secure on plain http)', async () => {
    const response = await post('/admin/actions/sign-in', { password: PASSWORD });
    expect(response.headers.get('set-cookie')).toMatch(/^admin_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/);
  });

  test('a wrong password says so and no more', async () => {
    const response = await post('/admin/actions/sign-in', { password: 'not the password' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/admin?failed=1');
    expect(response.headers.get('set-cookie')).toBeNull();
    const html = await (await get('/admin?failed=1')).text();
    expect(html).toContain('Wrong password.');
  });

  test('the overview gives a browser that signed in a device cookie, once', async () => {
    const { cookie } = await signIn();
    const first = await get('/admin', cookie);
    const device = first.headers.get('set-cookie');
    expect(device).toMatch(/^admin_device=[\w-]{22}\.[\w-]{43}; Path=\/; Max-Age=31536000; HttpOnly; SameSite=Strict$/);
    const again = await get('/admin', `${cookie}; ${device!.split(';')[0]}`);
    expect(again.headers.get('set-cookie')).toBeNull();
  });

  test('export CSV downloads every message, audited', async () => {
    const { cookie, csrf } = await signIn();
    const response = await post('/admin/actions/export', { csrf, what: 'messages', format: 'csv' }, { cookie });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="messages-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.text()).toContain(SECRET_NAME);
    expect(db.prepare("SELECT count(*) AS n FROM admin_audit WHERE action = 'export-messages'").get()).toEqual({ n: 1 });
  });

  test('export of the subscribers carries each one’s consent, signed up without double opt-in: CSV and JSON', async () => {
    const { cookie, csrf } = await signIn();
    const csv = await (await post('/admin/actions/export', { csrf, what: 'subscribers', format: 'csv' }, { cookie })).text();
    const [header, row] = csv.replace(/^\uFEFF/, '').split('\r\n');
    expect(header).toBe('Email Address,Created,Consent,Signed Up,Confirmed,Consent Text,Consent Version,Consent Page,Client');
    expect(row).toMatch(
      /^reader@example\.org,\S+ \S+,subscribed,\S+ \S+,,I would like to receive the newsletter by email\. I can unsubscribe at any time\.,[0-9a-f]{12},\/,127\.0\.0\.0\/24$/,
    );
    const json = (await (await post('/admin/actions/export', { csrf, what: 'subscribers', format: 'json' }, { cookie })).json()) as unknown[];
    expect(json).toEqual([
      {
        email: 'reader@example.org',
        created: expect.any(String),
        consent: {
          status: 'subscribed',
          signedUpAt: expect.any(String),
          confirmedAt: null,
          text: 'I would like to receive the newsletter by email. I can unsubscribe at any time.',
          version: expect.stringMatching(/^[0-9a-f]{12}$/),
          page: '/',
          client: '127.0.0.0/24',
        },
      },
    ]);
  });

  test('a large export is streamed from a cursor: every message once, in order, while health keeps answering', async () => {
    // 1,234 more messages of 2,000 characters: three batches and a bit, each read on its own.
    const insert = db.prepare(`INSERT INTO submissions (created_at, name, email, message, status) VALUES (?, ?, 'bulk@example.org', ?, 'spam')`);
    db.exec('BEGIN');
    for (let n = 0; n < 1234; n++) insert.run(new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), `Bulk ${n}`, `${n} ${'x'.repeat(2000)}`);
    db.exec('COMMIT');
    const { cookie, csrf } = await signIn();
    const response = await post('/admin/actions/export', { csrf, what: 'messages', format: 'json' }, { cookie });
    expect(response.status).toBe(200);
    // Chunked: no length up front, the body is written as it is read.
    expect(response.headers.get('content-length')).toBeNull();
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    // While the export is being written, a second one is refused and the site answers.
    expect((await post('/admin/actions/export', { csrf, what: 'messages', format: 'csv' }, { cookie })).status).toBe(429);
    expect((await get('/api/health')).status).toBe(200);
    const chunks = [Buffer.from(first.value!)];
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(Buffer.from(next.value));
    const rows = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Array<{ id: number; name: string }>;
    const total = (db.prepare('SELECT count(*) AS n FROM submissions').get() as { n: number }).n;
    expect(rows).toHaveLength(total);
    expect(rows.map((row) => row.id)).toEqual([...rows.map((row) => row.id)].sort((a, b) => b - a));
    expect(new Set(rows.map((row) => row.id)).size).toBe(total);
    // Written to the end, the export lets the next one start.
    const again = await post('/admin/actions/export', { csrf, what: 'messages', format: 'csv' }, { cookie });
    expect(again.status).toBe(200);
    const csv = await again.text();
    expect(csv.split('\r\n').filter((line) => /^\d+,/.test(line))).toHaveLength(total);
    db.exec("DELETE FROM submissions WHERE email = 'bulk@example.org'");
  });

  test('retry puts the failed message back in the queue, audited', async () => {
    const { cookie, csrf } = await signIn();
    const id = idOf('Cy Failed');
    const response = await post('/admin/actions/retry', { csrf, id }, { cookie });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`/admin/messages/${id}?done=retry`);
    expect(db.prepare('SELECT status FROM submissions WHERE id = ?').get(id)).toEqual({ status: 'pending' });
    expect(db.prepare("SELECT detail FROM admin_audit WHERE action = 'retry'").get()).toEqual({ detail: `#${id}` });
  });

  test('delete erases the message and its history', async () => {
    const { cookie, csrf } = await signIn();
    const id = idOf('Bob Builder');
    const response = await post('/admin/actions/delete', { csrf, id }, { cookie });
    expect(response.headers.get('location')).toBe('/admin/messages?done=deleted');
    expect(db.prepare('SELECT count(*) AS n FROM submissions WHERE id = ?').get(id)).toEqual({ n: 0 });
    expect(db.prepare('SELECT count(*) AS n FROM delivery_attempts WHERE submission_id = ?').get(id)).toEqual({ n: 0 });
    expect((await get(`/admin/messages/${id}`, cookie)).status).toBe(404);
  });
});

describe('sign-in throttling, behind a proxy that names each client', () => {
  let proxied: Site;
  beforeAll(async () => {
    proxied = await startSite({ ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD), TRUST_PROXY: '1' });
  });
  afterAll(() => proxied?.stop());

  const signInFrom = (client: string, password: string) =>
    fetch(`${proxied.url}/admin/actions/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ password }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: proxied.url, 'x-forwarded-for': client },
      redirect: 'manual',
    });

  test('ten failures from one address within 15 minutes, then 429 with Retry-After, even for the right password; the owner elsewhere still signs in', async () => {
    // Sent together: each waits its own growing delay, so ten take seconds, not a minute.
    const failures = await Promise.all(Array.from({ length: 10 }, () => signInFrom('198.51.100.7', 'a wrong password')));
    expect(failures.map((r) => r.status)).toEqual(Array(10).fill(303));
    const refused = await signInFrom('198.51.100.7', PASSWORD);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(refused.headers.get('set-cookie')).toBeNull();
    const owner = await signInFrom('203.0.113.20', PASSWORD);
    expect(owner.status).toBe(303);
    expect(owner.headers.get('set-cookie')).toMatch(/^admin_session=/);
  }, 60_000);
});

describe('wrong passwords from many addresses, in the audit log', () => {
  let flooded: Site;
  beforeAll(async () => {
    flooded = await startSite({ ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD), TRUST_PROXY: '1' });
  });
  afterAll(() => flooded?.stop());

  const signInFrom = (client: string, password: string) =>
    fetch(`${flooded.url}/admin/actions/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ password }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: flooded.url, 'x-forwarded-for': client },
      redirect: 'manual',
    });

  test('the first ten addresses have an entry each, the others one together, with how many times', async () => {
    // All at once, as a flood comes: one after another, the first owner's own throttle (decision
    // 0275: 1, 2, 4, 8 s after the fifth failure) would make the test wait a minute for its guesses.
    const guesses = await Promise.all(Array.from({ length: 13 }, (_, n) => signInFrom(`198.51.100.${n + 1}`, 'a wrong password')));
    expect(guesses.map((guess) => guess.status)).toEqual(Array(13).fill(303));
    const owner = await signInFrom('203.0.113.20', PASSWORD);
    const cookie = owner.headers.get('set-cookie')!.split(';')[0]!;
    const page = await (await fetch(`${flooded.url}/admin/audit`, { headers: { cookie } })).text();
    const entries = [...page.matchAll(/<li>\s*<span>([^<]*)<\/span>\s*<span class="meta">([^<]*)<\/span>/g)].map((m) => [m[1], m[2]]);
    expect(entries).toHaveLength(12);
    // The entry names who signed in (the first owner), with the client's hash as before.
    expect(entries[0]).toEqual(['Signed in', expect.stringMatching(/^Owner \([0-9a-f]+\)$/)]);
    expect(entries.filter(([what]) => what === 'Sign-in failed: wrong password')).toHaveLength(10);
    expect(entries).toContainEqual(['Sign-in failed: wrong password (3 times within a quarter of an hour)', 'other addresses']);
  }, 60_000);
});

test('no admin page is written into the static build', () => {
  const built = join(fileURLToPath(new URL('../../dist/client', import.meta.url)));
  expect(existsSync(join(built, 'index.html'))).toBe(true);
  expect(existsSync(join(built, 'admin'))).toBe(false);
});

describe('without ADMIN_PASSWORD_HASH', () => {
  let plain: Site;
  beforeAll(async () => {
    plain = await startSite();
  });
  afterAll(() => plain?.stop());

  test.each(['/admin', '/admin/', '/admin/messages', '/admin/messages/1', '/admin/subscribers', '/admin/audit', '/admin/anything'])(
    'GET %s is 404',
    async (path) => {
      const response = await fetch(`${plain.url}${path}`, { redirect: 'manual' });
      expect(response.status).toBe(404);
    },
  );

  test.each(['/admin/actions/sign-in', ...ACTIONS.map(([path]) => path)])('POST %s is 404', async (path) => {
    const response = await fetch(`${plain.url}${path}`, {
      method: 'POST',
      body: new URLSearchParams({ password: PASSWORD }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: plain.url },
      redirect: 'manual',
    });
    expect(response.status).toBe(404);
  });
});
