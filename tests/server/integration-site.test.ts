import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { Window } from 'happy-dom';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { NAVIGATION, postForm, type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, freePort, startSmtpServer } from '../support/smtp.ts';

// An owner's own Astro site (tests/fixtures/owner-site: its layout, its home page with
// <ContactForm />, `siteForms({ layout })` and @astrojs/node standalone), with `site-forms`
// installed from this checkout, built once and served by the adapter's own server: the
// integration's road, not the starter's (decision 0165).
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = join(ROOT, 'tests/fixtures/owner-site');

let root: string;
let entry: string;
const sites: Site[] = [];
let smtp: FakeSmtpServer | undefined;

/**
 * A copy of the fixture in a temp folder with its own node_modules: this checkout's packages
 * linked, and site-forms as this checkout's package (what package.json's `files` ships: its
 * manifest, bin/ and src/) copied in, as an install puts it there.
 * Hint: a copy rather than a link, so the package really sits under node_modules, where Node
 * will not strip types by itself, and Vite sees its files inside the owner's project.
 */
function ownerSite(): string {
  const folder = mkdtempSync(join(tmpdir(), 'owner-site-'));
  cpSync(FIXTURE, folder, { recursive: true });
  const modules = join(folder, 'node_modules');
  mkdirSync(modules);
  const ours = join(ROOT, 'node_modules');
  for (const name of readdirSync(ours)) if (!name.startsWith('.')) symlinkSync(join(ours, name), join(modules, name));
  for (const part of ['package.json', 'bin', 'src']) cpSync(join(ROOT, part), join(modules, 'site-forms', part), { recursive: true });
  return folder;
}

beforeAll(() => {
  root = ownerSite();
  const env = { ...process.env, ASTRO_TELEMETRY_DISABLED: '1', SITE_CONFIG: '', FORMS_CONFIG: '', CONTACT_FORM_ENDPOINT: '' };
  // Not --silent: the adapter's server would then not say where it listens.
  const build = spawnSync(process.execPath, [join(root, 'node_modules/astro/bin/astro.mjs'), 'build'], { cwd: root, env, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`the owner's site did not build:\n${build.stderr}${build.stdout}`);
  entry = join(root, 'dist/server/entry.mjs');
}, 240_000);

afterAll(async () => {
  for (const site of sites) await site.stop().catch(() => {});
  await smtp?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

async function start(env: Record<string, string> = {}, dataDir?: string): Promise<Site> {
  const site = await startSite(env, { start: entry, ...(dataDir && { dataDir }) });
  sites.push(site);
  return site;
}

async function page(response: Response): Promise<Document> {
  const window = new Window();
  window.document.write(await response.text());
  return window.document as unknown as Document;
}

function stored(site: Site): Array<{ name: string; status: string }> {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    return db.prepare('SELECT name, status FROM submissions ORDER BY id').all() as Array<{ name: string; status: string }>;
  } finally {
    db.close();
  }
}

const valid = { name: 'Grete Korn', email: 'grete@example.org', message: 'Two loaves of rye for Saturday, please.', honeypot: '' };

describe("an owner's Astro site with integrations: [siteForms()]", () => {
  let site: Site;
  beforeAll(async () => {
    site = await start();
  });

  test('POST /api/contact, valid: 200 { success: true }, the message stored', async () => {
    const response = await postForm(`${site.url}/api/contact`, { ...valid, name: 'Stored Baker' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    await expect(response.json()).resolves.toEqual({ success: true });
    expect(stored(site)).toContainEqual({ name: 'Stored Baker', status: 'pending' });
  });

  test('POST /api/contact, invalid: 400 with the field errors', async () => {
    const response = await postForm(`${site.url}/api/contact`, { name: 'A', email: 'x', message: 'too short', honeypot: '' });
    expect(response.status).toBe(400);
    await expect(response.json()).resolves.toEqual({
      success: false,
      errors: {
        name: ['Name must be between 2 and 100 characters'],
        email: ['Please enter a valid email address'],
        message: ['Message must be at least 10 characters'],
      },
    });
  });

  test('without JavaScript: 303 to the thank-you page, which renders in the owner’s layout', async () => {
    const body = new FormData();
    for (const [name, value] of Object.entries({ ...valid, name: 'Paper Baker' })) body.append(name, value);
    const response = await fetch(`${site.url}/api/contact`, { method: 'POST', body, headers: { ...NAVIGATION, origin: site.url }, redirect: 'manual' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/thank-you/contact/');
    const thanks = await fetch(new URL('/thank-you/contact/', site.url));
    expect(thanks.status).toBe(200);
    const document = await page(thanks);
    expect(document.querySelector('[data-bakery-header]')?.textContent).toBe('Bäckerei Korn, fresh since 1921');
    expect(document.querySelector('h1')?.textContent).toBe('Thank you for your message!');
    expect(stored(site)).toContainEqual({ name: 'Paper Baker', status: 'pending' });
  });

  test('a refused post without JavaScript: the form’s page again with the typed text, in the owner’s layout, dressed with our CSP', async () => {
    const body = new FormData();
    for (const [name, value] of Object.entries({ ...valid, email: 'not-an-address', message: 'Rye bread, sliced, for the weekend.' })) body.append(name, value);
    const refused = await fetch(`${site.url}/api/contact`, { method: 'POST', body, headers: { ...NAVIGATION, origin: site.url }, redirect: 'manual' });
    expect(refused.status).toBe(303);
    expect(refused.headers.get('location')).toMatch(/^\/api\/contact\?draft=[\w-]{32}$/);
    const again = await fetch(new URL(refused.headers.get('location')!, site.url), { headers: NAVIGATION, redirect: 'manual' });
    expect(again.status).toBe(400);
    expect(again.headers.get('content-security-policy')).toContain("default-src 'self'");
    const document = await page(again);
    expect(document.querySelector('[data-bakery-header]')?.textContent).toBe('Bäckerei Korn, fresh since 1921');
    // Browsers drop the newline that opens a textarea; happy-dom keeps it.
    expect(document.querySelector('textarea[name="message"]')?.textContent?.replace(/^\n/, '')).toBe('Rye bread, sliced, for the weekend.');
    expect(document.querySelector<HTMLInputElement>('input[name="email"]')?.getAttribute('value')).toBe('not-an-address');
  });

  test('a body over 64 KiB: 413 JSON', async () => {
    const response = await postForm(`${site.url}/api/contact`, { ...valid, message: 'x'.repeat(70 * 1024) });
    expect(response.status).toBe(413);
    await expect(response.json()).resolves.toEqual({ success: false, error: expect.any(String) });
  });

  test('a post from a foreign Origin: 403 JSON, nothing stored', async () => {
    const response = await postForm(`${site.url}/api/contact`, { ...valid, name: 'Foreign Baker' }, { origin: 'https://evil.example' });
    expect(response.status).toBe(403);
    await expect(response.json()).resolves.toEqual({ success: false, error: expect.any(String) });
    expect(stored(site).map((row) => row.name)).not.toContain('Foreign Baker');
  });

  test('GET /api/health: 200 JSON with success', async () => {
    const response = await fetch(`${site.url}/api/health`);
    expect(response.status).toBe(200);
    await expect(response.json()).resolves.toMatchObject({ success: true });
  });

  test('a near miss under /api: a JSON 404, not a page', async () => {
    const response = await fetch(`${site.url}/api/contactt`, { method: 'POST', body: new FormData() });
    expect(response.status).toBe(404);
    await expect(response.json()).resolves.toEqual({ success: false, error: expect.any(String) });
  });

  test('npx site-forms inbox list, in the owner’s folder: the messages of the same database', async () => {
    await postForm(`${site.url}/api/contact`, { ...valid, name: 'Listed Baker' });
    // What `npx site-forms` runs: the package's bin, by Node from node_modules (decision 0163).
    const bin = join(root, 'node_modules/site-forms/bin/site-forms.mjs');
    const run = spawnSync(process.execPath, [bin, 'inbox', 'list'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', ENV_FILE: '', DATA_DIR: site.dataDir },
      encoding: 'utf8',
    });
    expect(run.stderr).not.toContain('ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Listed Baker');
  });

  test('the owner’s home page is theirs: their form in it, and not our Content-Security-Policy', async () => {
    const response = await fetch(site.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toBeNull();
    const document = await page(response);
    expect(document.querySelector('[data-bakery-header]')).not.toBeNull();
    expect(document.querySelector('form#contact-form')?.getAttribute('action')).toBe('/api/contact');
  });
});

describe('the background work starts with the server', () => {
  test('a message left pending before the start is delivered to the SMTP server with no request made', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'owner-site-data-'));
    try {
      // First a server whose mail server is down: the message is stored and waits.
      const mail = { CONTACT_TO: 'owner@example.org', CONTACT_FROM: 'site@example.org', DELIVERY_RETRY_BASE_MS: '50' };
      const first = await start({ ...mail, SMTP_URL: `smtp://127.0.0.1:${await freePort()}` }, dataDir);
      expect((await postForm(`${first.url}/api/contact`, { ...valid, name: 'Waiting Baker' })).status).toBe(200);
      await first.stop();
      expect(stored({ ...first, dataDir }).find((row) => row.name === 'Waiting Baker')?.status).toBe('pending');

      smtp = await startSmtpServer();
      const second = await start({ ...mail, SMTP_URL: smtp.url() }, dataDir);
      const received = await eventually('the waiting message to be mailed', () => smtp!.received[0]);
      expect(received.to).toEqual(['owner@example.org']);
      expect(received.raw).toContain('Two loaves of rye for Saturday, please.');
      await eventually('the message to be marked sent', () => stored(second).find((row) => row.name === 'Waiting Baker')?.status === 'sent');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
