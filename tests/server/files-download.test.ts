import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { openStore, type Store } from '../../packages/site-forms/src/lib/database/database.ts';
import { createFileLinks } from '../../packages/site-forms/src/lib/files/links.ts';
import { createLogger } from '../../packages/site-forms/src/lib/log.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { TEST_DATABASE } from '../support/stores.ts';

/**
 * A message's files downloaded from the built server: from the admin by the signed-in owner only,
 * and by the signed, expiring link of webhooks; always as an attachment, never shown inline.
 */
const PASSWORD = 'correct horse battery staple';
// A file whose bytes a browser would render as a page if it were let to: it must only ever download.
const HTML = Buffer.from('<!doctype html><script>alert(document.cookie)</script>');
const NAME = 'Angebot "Größe" 1.html';
const FILE_ID = 'AbCdEfGhIjKlMnOpQrStUvWx';
const OTHER_ID = 'ZyXwVuTsRqPoNmLkJiHgFeDc';
const LOST_ID = 'LoStLoStLoStLoStLoStLoSt';

let site: Site;
let links: ReturnType<typeof createFileLinks>;
let store: Store;

/** A file as a post leaves it: its bytes under DATA_DIR/files, its row beside the message. */
function storeFile(db: DatabaseSync, dataDir: string, id: string, submissionId: number, bytes: Buffer, name: string, position: number): void {
  const key = `2026-11/${id}`;
  mkdirSync(join(dataDir, 'files', '2026-11'), { recursive: true });
  writeFileSync(join(dataDir, 'files', '2026-11', id), bytes);
  db.prepare('INSERT INTO files (id, submission_id, field, name, size, type, storage_key, created_at, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
    id,
    submissionId,
    'drawings',
    name,
    bytes.length,
    'text/html',
    key,
    '2026-11-26T10:00:00.000Z',
    position,
  );
}

beforeAll(async () => {
  site = await startSite({ ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD), FILE_LINK_LIFETIME_SECONDS: '3600' });
  for (const name of ['Ada Lovelace', 'Bob Builder']) {
    const response = await postForm(`${site.url}/api/contact`, { name, email: 'ada@example.org', message: 'The drawings are attached.', honeypot: '' });
    expect(response.status).toBe(200);
  }
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'));
  storeFile(db, site.dataDir, FILE_ID, 1, HTML, NAME, 0);
  storeFile(db, site.dataDir, OTHER_ID, 2, Buffer.from('other'), 'other.txt', 0);
  // A row whose bytes are gone from the storage (removed by hand, or a bucket emptied).
  db.prepare('INSERT INTO files (id, submission_id, field, name, size, type, storage_key, created_at, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
    LOST_ID,
    1,
    'drawings',
    'lost.pdf',
    10,
    'application/pdf',
    `2026-11/${LOST_ID}`,
    '2026-11-26T10:00:00.000Z',
    1,
  );
  db.close();
  // The links' key is the store's: a second opening of the same database signs as the server does.
  store = openStore({ ...TEST_DATABASE, url: undefined, dataDir: site.dataDir }, createLogger({ level: 'silent' }));
  links = createFileLinks(store.sql, { lifetimeSeconds: 3600 });
});
afterAll(async () => {
  await store?.close();
  await site?.stop();
});

function get(path: string, cookie?: string): Promise<Response> {
  return fetch(`${site.url}${path}`, { headers: cookie ? { cookie } : {}, redirect: 'manual' });
}

async function signIn(): Promise<string> {
  const response = await fetch(`${site.url}/admin/actions/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ password: PASSWORD }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url },
    redirect: 'manual',
  });
  expect(response.status).toBe(303);
  return response.headers.get('set-cookie')!.split(';')[0]!;
}

/** What every download must say, whoever asks: a file to save, of no type a browser would render. */
function expectAttachment(response: Response): void {
  expect(response.headers.get('content-disposition')).toBe(
    `attachment; filename="Angebot _Gr__e_ 1.html"; filename*=UTF-8''Angebot%20%22Gr%C3%B6%C3%9Fe%22%201.html`,
  );
  expect(response.headers.get('content-type')).toBe('application/octet-stream');
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  expect(response.headers.get('cache-control')).toBe('private, no-store');
}

describe('the admin download', () => {
  test('a signed-out request is sent to sign in, as for every admin page, and gets no byte of the file', async () => {
    const response = await get(`/admin/messages/1/files/${FILE_ID}`);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/admin?ended=expired');
    expect(await response.text()).not.toContain('alert(');
  });

  test('the signed-in owner gets the file as an attachment, byte for byte', async () => {
    const response = await get(`/admin/messages/1/files/${FILE_ID}`, await signIn());
    expect(response.status).toBe(200);
    expectAttachment(response);
    expect(response.headers.get('content-length')).toBe(String(HTML.length));
    expect(Buffer.from(await response.arrayBuffer()).equals(HTML)).toBe(true);
  });

  test("a file is only found under its own message: another message's address is the admin's not-found page", async () => {
    const cookie = await signIn();
    expect((await get(`/admin/messages/2/files/${FILE_ID}`, cookie)).status).toBe(404);
    expect((await get('/admin/messages/1/files/NoSuchFileNoSuchFileNo', cookie)).status).toBe(404);
    // Its row there, its bytes gone from the storage: not found either, never a 500.
    expect((await get(`/admin/messages/1/files/${LOST_ID}`, cookie)).status).toBe(404);
  });

  test("the message's page lists each file with its name, size and type, and the download link", async () => {
    const page = await (await get('/admin/messages/1', await signIn())).text();
    expect(page).toContain('<h2>Files</h2>');
    expect(page).toContain(`href="/admin/messages/1/files/${FILE_ID}"`);
    expect(page).toContain('Angebot &quot;Größe&quot; 1.html');
    expect(page).toContain(`${HTML.length} B`);
    expect(page).toContain('text/html');
  });
});

describe('the signed link of webhooks', () => {
  const query = (link: string) => new URL(link, site.url);

  test('a valid link downloads the file, as an attachment, without a session', async () => {
    const response = await get(await links.sign(FILE_ID));
    expect(response.status).toBe(200);
    expectAttachment(response);
    expect(Buffer.from(await response.arrayBuffer()).equals(HTML)).toBe(true);
  });

  test('an expired link is a 403 in JSON', async () => {
    const response = await get(await links.sign(FILE_ID, new Date(Date.now() - 3601_000)));
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual({ success: false, error: 'This download link has expired or is not valid.' });
  });

  test("an altered link, or one file's signature on another file's address, is a 403 in JSON", async () => {
    const url = query(await links.sign(FILE_ID));
    const longer = new URL(url);
    longer.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 86_400));
    const swapped = new URL(url);
    swapped.pathname = `/api/files/${OTHER_ID}`;
    for (const altered of [longer, swapped]) {
      const response = await get(`${altered.pathname}${altered.search}`);
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ success: false, error: 'This download link has expired or is not valid.' });
    }
    const bare = await get(`/api/files/${FILE_ID}`);
    expect(bare.status).toBe(403);
  });

  test('a valid link to a file that is gone is a 404 in JSON, its row gone or only its bytes', async () => {
    for (const id of ['NoSuchFileNoSuchFileNo', LOST_ID]) {
      const response = await get(await links.sign(id));
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ success: false, error: 'Not found' });
    }
  });
});
