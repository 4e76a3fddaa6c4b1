import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { Agent, type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { Window } from 'happy-dom';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { NAVIGATION, postForm, type Site, startSite } from '../support/site.ts';
import { startAstroDev } from '../support/astro-dev.ts';
import { eventually, type FakeSmtpServer, freePort, type SmtpAnswer, startSmtpServer } from '../support/smtp.ts';

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

/** The library's folder in this checkout, built on `npm install` (its dist/, decision 0220). */
const PACKAGE = join(ROOT, 'packages/site-forms');

/**
 * A copy of the fixture in a temp folder with its own node_modules: this checkout's packages
 * linked, and site-forms as the library's package.json `files` ships it (its manifest, bin/ and
 * the compiled dist/) copied in, as an install puts it there.
 * Hint: a copy rather than a link, so the package really sits under node_modules, where Node
 * will not strip types, and Vite sees its files inside the owner's project.
 */
function ownerSite(): string {
  const folder = mkdtempSync(join(tmpdir(), 'owner-site-'));
  cpSync(FIXTURE, folder, { recursive: true });
  const modules = join(folder, 'node_modules');
  mkdirSync(modules);
  const ours = join(ROOT, 'node_modules');
  for (const name of readdirSync(ours)) if (!name.startsWith('.') && name !== 'site-forms') symlinkSync(join(ours, name), join(modules, name));
  for (const part of ['package.json', 'bin', 'dist']) cpSync(join(PACKAGE, part), join(modules, 'site-forms', part), { recursive: true });
  return folder;
}

/** `astro build` in an owner's folder, as they would run it. */
function build(folder: string): void {
  const env = { ...process.env, ASTRO_TELEMETRY_DISABLED: '1', SITE_CONFIG: '', FORMS_CONFIG: '', CONTACT_FORM_ENDPOINT: '' };
  // Not --silent: the adapter's server would then not say where it listens.
  const run = spawnSync(process.execPath, [join(folder, 'node_modules/astro/bin/astro.mjs'), 'build'], { cwd: folder, env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the owner's site did not build:\n${run.stderr}${run.stdout}`);
}

beforeAll(() => {
  root = ownerSite();
  build(root);
  entry = join(root, 'dist/server/entry.mjs');
}, 240_000);

afterAll(async () => {
  for (const site of sites) await site.stop().catch(() => {});
  await smtp?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

async function start(env: Record<string, string> = {}, dataDir?: string, server = entry): Promise<Site> {
  const site = await startSite(env, { start: server, ...(dataDir && { dataDir }) });
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

/** A GET with the Host header the test names, which fetch would not send. */
function withHost(url: string, host: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { host }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
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
    // What `npx site-forms` runs: the package's bin, by Node from node_modules (decision 0220).
    const bin = join(root, 'node_modules/site-forms/bin/site-forms.mjs');
    const run = spawnSync(process.execPath, [bin, 'inbox', 'list'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', ENV_FILE: '', DATA_DIR: site.dataDir },
      encoding: 'utf8',
    });
    expect(run.stderr).not.toContain('ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING');
    // Node's own note that type stripping is experimental is about us, not the owner.
    expect(run.stderr).not.toContain('ExperimentalWarning');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Listed Baker');
  });

  test('npx site-forms inbox export, in the owner’s folder: the columns of the owner’s own forms.config.ts, read by the built command', async () => {
    const answer = await postForm(`${site.url}/api/forms/order`, { name: 'Column Baker', loaves: '4', honeypot: '' });
    expect(answer.status).toBe(200);
    const bin = join(root, 'node_modules/site-forms/bin/site-forms.mjs');
    const run = spawnSync(process.execPath, [bin, 'inbox', 'export', '--format', 'csv'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', ENV_FILE: '', DATA_DIR: site.dataDir },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    // `loaves` is a field of the owner's "order" form alone: the package's neutral forms have no such column.
    const [header, ...rows] = run.stdout.split('\r\n');
    expect(header?.split(',')).toContain('loaves');
    const row = rows.find((line) => line.includes('Column Baker'));
    expect(row?.split(',').at(-1)).toBe('4');
  });

  test('every hint names the command that works in the owner’s folder, npx site-forms, never npm run (the package has no scripts there)', async () => {
    const notes = site.logs.filter((line): line is Record<string, unknown> => typeof line === 'object' && typeof line.note === 'string');
    expect(notes.find((line) => line.event === 'contact.smtp_off')?.note).toBe(
      'SMTP_URL is not set: contact messages are stored, not emailed (npx site-forms inbox list).',
    );
    expect(notes.find((line) => line.event === 'newsletter.local')?.note).toContain('(npx site-forms subscribers export --format csv)');
    expect(notes.map((line) => line.note).join('\n')).not.toContain('npm run');
    const bin = join(root, 'node_modules/site-forms/bin/site-forms.mjs');
    // Not spawnSync: a test process blocked for seconds leaves its pooled keep-alive sockets to time out unseen, and the next fetch fails.
    const tool = (...args: string[]) =>
      new Promise<{ stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { PATH: process.env.PATH ?? '', ENV_FILE: '', DATA_DIR: site.dataDir } });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
        child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
        child.once('close', () => resolve({ stdout, stderr }));
      });
    const help = await tool('subscribers', 'help');
    expect(help.stdout).toMatch(/^Usage: npx site-forms subscribers <command>\n/);
    expect(help.stdout).toContain('(npx site-forms subscribers export --format csv > subscribers.csv)');
    expect(help.stdout).not.toContain('npm run');
    expect((await tool('inbox', 'show', '999999')).stderr).toBe('No contact message #999999. See npx site-forms inbox list.\n');
    expect((await tool('admin', 'help')).stdout).toMatch(/^Usage: npx site-forms admin <command>\n/);
  });

  test('an owner’s form of their forms.config.ts, placed with <Form name="order" />: its route, and its thank-you page in their layout', async () => {
    const form = await page(await fetch(`${site.url}/order`));
    expect(form.querySelector('form#order-form')?.getAttribute('action')).toBe('/api/forms/order');
    const answer = await postForm(`${site.url}/api/forms/order`, { name: 'Order Baker', loaves: '3', honeypot: '' });
    expect(answer.status).toBe(200);
    await expect(answer.json()).resolves.toEqual({ success: true });
    const body = new FormData();
    for (const [name, value] of Object.entries({ name: 'Paper Order', loaves: '2', honeypot: '' })) body.append(name, value);
    const navigated = await fetch(`${site.url}/api/forms/order`, { method: 'POST', body, headers: { ...NAVIGATION, origin: site.url }, redirect: 'manual' });
    expect(navigated.status).toBe(303);
    expect(navigated.headers.get('location')).toBe('/thank-you/order/');
    const thanks = await page(await fetch(new URL('/thank-you/order/', site.url)));
    expect(thanks.querySelector('[data-bakery-header]')?.textContent).toBe('Bäckerei Korn, fresh since 1921');
    expect(thanks.querySelector('h1')?.textContent).toBe('Thank you! Your bread will be ready on Saturday.');
    expect(stored(site).map((row) => row.name)).toEqual(expect.arrayContaining(['Order Baker', 'Paper Order']));
  });

  test('the owner’s own form post keeps Astro’s origin check: cross-site refused, same-origin taken', async () => {
    const note = (origin: string) => fetch(`${site.url}/note`, { method: 'POST', body: new URLSearchParams({ note: 'Rye' }), headers: { origin } });
    const foreign = await note('https://evil.example');
    expect(foreign.status).toBe(403);
    await expect(foreign.text()).resolves.toBe('Cross-site POST form submissions are forbidden');
    const same = await note(site.url);
    expect(same.status).toBe(200);
    expect(same.headers.get('content-security-policy')).toBeNull();
    expect((await page(same)).querySelector('[data-note]')?.textContent).toBe('Rye');
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

describe('a form with a file field, in an owner’s server (issue 39 items 1 and 19)', () => {
  const PNG = Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a0a80000000049454e44ae426082',
    'hex',
  );
  let site: Site;
  beforeAll(async () => {
    site = await start({ RATE_LIMIT_MAX: '1000' });
  });

  /** The form as Chromium posts it without JavaScript: multipart, with the photo. */
  function withPhoto(fields: Record<string, string>, photo: Buffer): FormData {
    const body = new FormData();
    for (const [name, value] of Object.entries(fields)) body.append(name, value);
    body.append('photo', new Blob([new Uint8Array(photo)], { type: 'image/png' }), 'cake.png');
    return body;
  }

  test('without JavaScript, a valid post with its photo: 303 to the thank-you page, the message stored for delivery, not held', async () => {
    const body = withPhoto({ ...valid, name: 'Photo Baker' }, PNG);
    const response = await fetch(`${site.url}/api/contact`, { method: 'POST', body, headers: { ...NAVIGATION, origin: site.url }, redirect: 'manual' });
    expect([response.status, response.headers.get('location')]).toEqual([303, '/thank-you/contact/']);
    expect(stored(site)).toContainEqual({ name: 'Photo Baker', status: 'pending' });
  });

  test('without JavaScript, a refused post with its photo: the form again with the typed text, not a 500', async () => {
    const body = withPhoto({ ...valid, email: 'not-an-address', name: 'Refused Baker' }, PNG);
    const refused = await fetch(`${site.url}/api/contact`, { method: 'POST', body, headers: { ...NAVIGATION, origin: site.url }, redirect: 'manual' });
    expect(refused.status).toBe(303);
    const again = await fetch(new URL(refused.headers.get('location')!, site.url), { headers: NAVIGATION, redirect: 'manual' });
    expect(again.status).toBe(400);
    const document = await page(again);
    expect(document.querySelector<HTMLInputElement>('input[name="name"]')?.getAttribute('value')).toBe('Refused Baker');
    expect(stored(site).map((row) => row.name)).not.toContain('Refused Baker');
  });

  test('a picture, a photo past its maxSize and a third post on one keep-alive connection: the 413 closes it, the third is answered', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = async (fields: Record<string, string>, photo: Buffer) => {
      const request = new Request('http://x/', { method: 'POST', body: withPhoto(fields, photo) });
      const bytes = Buffer.from(await request.arrayBuffer());
      return new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        let answered = false;
        const req = httpRequest(`${site.url}/api/contact`, {
          method: 'POST',
          agent,
          headers: { 'content-type': request.headers.get('content-type')!, 'content-length': String(bytes.length) },
        });
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => {
            answered = true;
            resolve({ status: res.statusCode ?? 0, connection: res.headers.connection });
          });
        });
        req.on('error', (error) => {
          if (!answered) reject(error);
        });
        req.end(bytes);
      });
    };
    try {
      const picture = await send({ ...valid, name: 'First Baker' }, PNG);
      const refused = await send({ ...valid, name: 'Large Baker' }, Buffer.concat([PNG, Buffer.alloc(300_000)]));
      const third = await send({ ...valid, name: 'Third Baker' }, PNG);
      expect([picture.status, refused.status, refused.connection, third.status]).toEqual([200, 413, 'close', 200]);
      expect(stored(site)).toContainEqual({ name: 'Third Baker', status: 'pending' });
    } finally {
      agent.destroy();
    }
  });
});

describe('the guard holds in an owner’s server as in the starter', () => {
  test('PUBLIC_URL set: a request to our routes under another Host is a 421 in JSON; the owner’s page is left alone', async () => {
    const site = await start({ PUBLIC_URL: 'https://www.baeckerei-korn.example' });
    // A DNS-rebinding page reaches the server under its own name (an IP address or localhost would pass).
    const refused = await withHost(`${site.url}/api/health`, 'rebind.example');
    expect(refused.status).toBe(421);
    expect(JSON.parse(refused.body)).toEqual({ success: false, error: expect.any(String) });
    expect(refused.headers['content-security-policy']).toContain("default-src 'self'");
    expect((await withHost(site.url, 'rebind.example')).status).toBe(200);
  });

  test('RATE_LIMIT_MAX: the third post of a client within the window is a 429 in JSON with Retry-After', async () => {
    const site = await start({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_SECONDS: '600' });
    const statuses: number[] = [];
    for (let post = 0; post < 3; post++) statuses.push((await postForm(`${site.url}/api/contact`, { ...valid, name: `Baker ${post}` })).status);
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    const third = await postForm(`${site.url}/api/contact`, { ...valid, name: 'Baker 3' });
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    await expect(third.json()).resolves.toMatchObject({ success: false });
  });
});

describe('the admin in an owner’s server', () => {
  test('sign in and see the messages; an action without its CSRF token is the admin’s refusal page, rendered on the integration’s road', async () => {
    const site = await start({ ADMIN_PASSWORD_HASH: await hashPassword('correct horse battery staple') });
    await postForm(`${site.url}/api/contact`, { ...valid, name: 'Admin Baker' });
    const post = (password: string) =>
      fetch(`${site.url}/admin/actions/sign-in`, {
        method: 'POST',
        body: new URLSearchParams({ password }),
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url },
        redirect: 'manual',
      });
    expect((await post('wrong horse')).headers.get('set-cookie')).toBeNull();
    const signedIn = await post('correct horse battery staple');
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const messages = await fetch(`${site.url}/admin/messages`, { headers: { cookie } });
    expect(messages.status).toBe(200);
    expect(messages.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await messages.text()).toContain('Admin Baker');
    // An action without the session's CSRF token: the admin's refusal, a page that /admin/[...rest] renders from locals.
    const forged = await fetch(`${site.url}/admin/actions/retry`, {
      method: 'POST',
      body: new URLSearchParams({ id: '1' }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url, cookie },
      redirect: 'manual',
    });
    expect(forged.status).toBe(403);
    // The export: a stream of the pipeline's answer, written as a Web stream by the adapter.
    const csrf = /name="csrf" value="([^"]+)"/.exec(await (await fetch(`${site.url}/admin`, { headers: { cookie } })).text())![1]!;
    const exported = await fetch(`${site.url}/admin/actions/export`, {
      method: 'POST',
      body: new URLSearchParams({ what: 'messages', format: 'csv', csrf }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url, cookie },
    });
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toContain('text/csv');
    expect(await exported.text()).toContain('Admin Baker');
    expect(forged.headers.get('content-type')).toContain('text/html');
    expect(await page(forged).then((document) => document.querySelector('h1')?.textContent)).toBe('Refused');
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
      // SIGTERM: the workers finish what they send, the database closes, and the process, where
      // no one else listens for the signal (the adapter's standalone server), ends by it as it would without us.
      expect(await first.stop()).toBeNull();
      expect(first.process.signalCode).toBe('SIGTERM');
      expect(first.logs).toContainEqual(expect.objectContaining({ event: 'server.stopped' }));
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

describe('astro dev in the owner’s folder', () => {
  test('serves the forms with the owner’s .env, beside their package.json', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'owner-site-dev-'));
    // The owner's .env, read from their project's folder (not from node_modules/site-forms).
    writeFileSync(join(root, '.env'), [`DATA_DIR=${dataDir}`, 'RATE_LIMIT_MAX=0', 'SPAM_FILTER=off'].join('\n'));
    const dev = await startAstroDev(root, '/api/health');
    try {
      const { url } = dev;
      const response = await postForm(`${url}/api/contact`, { ...valid, name: 'Dev Baker' });
      await expect(response.json()).resolves.toEqual({ success: true });
      expect(stored({ dataDir } as Site)).toEqual([{ name: 'Dev Baker', status: 'pending' }]);
      const home = await fetch(url);
      expect(await page(home).then((document) => document.querySelector('[data-bakery-header]')?.textContent)).toBe('Bäckerei Korn, fresh since 1921');
    } finally {
      await dev.stop();
      rmSync(join(root, '.env'), { force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  test('with a bad configuration: Astro stops with the one line naming the variable, no stack trace (decision 0225)', () => {
    const run = spawnSync(process.execPath, [join(root, 'node_modules/astro/bin/astro.mjs'), 'dev', '--port', '0', '--host', '127.0.0.1'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ASTRO_TELEMETRY_DISABLED: '1', ENV_FILE: '', LOG_LEVEL: 'loud' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    const printed = `${run.stdout}${run.stderr}`.replace(/\x1b\[[0-9;]*m/g, '').split('\n');
    expect(run.status).toBe(1);
    expect(printed.filter((line) => /^ {2}- LOG_LEVEL must be debug, info, warn, error or silent/.test(line))).toHaveLength(1);
    expect(printed.filter((line) => /^\s+at |Stack trace/.test(line))).toEqual([]);
  }, 90_000);
});

describe('the adapter in middleware mode, under the owner’s own node:http server', () => {
  let folder: string;
  beforeAll(() => {
    folder = ownerSite();
    const config = join(folder, 'astro.config.mjs');
    writeFileSync(config, readFileSync(config, 'utf8').replace("mode: 'standalone'", "mode: 'middleware'"));
    // The owner's server: the adapter's handler for every request (their Express or Fastify does the same).
    writeFileSync(
      join(folder, 'serve.mjs'),
      [
        "import { createServer } from 'node:http';",
        "import { handler } from './dist/server/entry.mjs';",
        'const server = createServer((req, res) => handler(req, res, () => { res.writeHead(404); res.end(); }));',
        "server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ event: 'server.listening', port: server.address().port })));",
      ].join('\n'),
    );
    build(folder);
  }, 240_000);
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  test('the services boot as the entry is imported, before the owner’s server listens; the forms answer on the same road', async () => {
    const site = await start({}, undefined, join(folder, 'serve.mjs'));
    const events = site.logs.flatMap((line) => (typeof line === 'object' ? [line.event] : []));
    expect(events.indexOf('server.config')).toBeGreaterThan(-1);
    expect(events.indexOf('server.config')).toBeLessThan(events.indexOf('server.listening'));
    const answer = await postForm(`${site.url}/api/contact`, { ...valid, name: 'Middle Baker' });
    await expect(answer.json()).resolves.toEqual({ success: true });
    expect(stored(site)).toEqual([{ name: 'Middle Baker', status: 'pending' }]);
    const body = new FormData();
    for (const [name, value] of Object.entries({ ...valid, email: 'nope' })) body.append(name, value);
    const refused = await fetch(`${site.url}/api/contact`, { method: 'POST', body, headers: { ...NAVIGATION, origin: site.url }, redirect: 'manual' });
    const again = await fetch(new URL(refused.headers.get('location')!, site.url), { headers: NAVIGATION });
    expect(again.status).toBe(400);
    expect((await page(again)).querySelector('[data-bakery-header]')?.textContent).toBe('Bäckerei Korn, fresh since 1921');
  });

  describe('the owner’s process is the owner’s (issue 40 item 5, decisions 0225 and 0226)', () => {
    /** An owner's server of their own, `lines` its code after the adapter's handler is served; it logs its own events as JSON lines. */
    function ownersServer(name: string, head: string[], lines: string[]): string {
      writeFileSync(
        join(folder, name),
        [
          "import { createServer } from 'node:http';",
          ...head,
          "const { handler } = await import('./dist/server/entry.mjs');",
          'const log = (event) => console.log(JSON.stringify({ event }));',
          'const server = createServer((req, res) => handler(req, res, () => { res.writeHead(404); res.end(); }));',
          ...lines,
          "server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ event: 'server.listening', port: server.address().port })));",
        ].join('\n'),
      );
      return join(folder, name);
    }

    const events = (site: Site) => site.logs.flatMap((line) => (typeof line === 'object' && typeof line.event === 'string' ? [line.event] : []));

    /** A site whose mail server holds the message it is handed until `release`, and a post sent to it. */
    async function sendUnderWay(server: string, dataDir: string) {
      let handedOver = false;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const held = await startSmtpServer({
        answer: async (): Promise<SmtpAnswer> => {
          handedOver = true;
          await gate;
          return 'accept';
        },
      });
      const site = await start({ SMTP_URL: held.url(), CONTACT_TO: 'owner@example.org', CONTACT_FROM: 'site@example.org' }, dataDir, server);
      expect((await postForm(`${site.url}/api/contact`, { ...valid, name: 'Closing Baker' })).status).toBe(200);
      await eventually('the message to be handed to the mail server', () => handedOver);
      return { site, held, release };
    }

    test('SIGTERM with a send under way and the owner’s own handler: the send is recorded, their handler runs, Node ends the process when their server has closed', async () => {
      const server = ownersServer(
        'serve-closing.mjs',
        [],
        [
          // The owner's stop: their server closes; the process ends when nothing is left, no exit of theirs.
          "process.on('SIGTERM', () => { log('owner.sigterm'); server.close(); server.closeIdleConnections(); });",
          // Node's own sign that the process ended by itself: never emitted after a process.exit().
          "process.on('beforeExit', () => log('owner.before_exit'));",
        ],
      );
      const dataDir = mkdtempSync(join(tmpdir(), 'owner-site-stop-'));
      try {
        const { site, held, release } = await sendUnderWay(server, dataDir);
        const exited = site.stop('SIGTERM');
        await eventually('the forms to begin stopping', () => events(site).includes('server.stopping'));
        release();
        expect(await exited).toBe(0);
        await held.close();
        expect(stored(site).find((row) => row.name === 'Closing Baker')?.status).toBe('sent');
        expect(held.received).toHaveLength(1);
        const seen = events(site);
        expect(seen).toContain('owner.sigterm');
        expect(seen).toContain('server.stopped');
        expect(seen.indexOf('owner.before_exit')).toBeGreaterThan(seen.indexOf('server.stopped'));
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });

    test('closeForms() of site-forms/runtime, awaited in the owner’s SIGTERM handler before their own exit: the send under way is recorded first', async () => {
      const server = ownersServer(
        'serve-hook.mjs',
        ["import { closeForms } from 'site-forms/runtime';"],
        ["process.on('SIGTERM', async () => { log('owner.sigterm'); server.close(); await closeForms(); log('owner.forms_closed'); process.exit(0); });"],
      );
      const dataDir = mkdtempSync(join(tmpdir(), 'owner-site-hook-'));
      try {
        const { site, held, release } = await sendUnderWay(server, dataDir);
        const exited = site.stop('SIGTERM');
        await eventually('the forms to begin stopping', () => events(site).includes('server.stopping'));
        release();
        expect(await exited).toBe(0);
        await held.close();
        expect(stored(site).find((row) => row.name === 'Closing Baker')?.status).toBe('sent');
        const seen = events(site);
        expect(seen.indexOf('owner.forms_closed')).toBeGreaterThan(seen.indexOf('server.stopped'));
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });

    test('a bad configuration: one line naming the variable, no stack, exit code 1, and the owner’s own last work still done', async () => {
      const server = ownersServer(
        'serve-misconfigured.mjs',
        ["process.on('beforeExit', () => console.log(JSON.stringify({ event: 'owner.before_exit' })));"],
        [],
      );
      const error = await start({ LOG_LEVEL: 'loud' }, undefined, server).then(
        (site) => site.stop().then(() => undefined),
        (e: Error) => e,
      );
      expect(error?.message).toMatch(/server exited with 1 before listening/);
      const printed = error!.message.split('\n').slice(1);
      // The configuration's one line per problem, under its heading, as `npm start` prints it.
      expect(printed.filter((line) => /^ {2}- LOG_LEVEL must be debug, info, warn, error or silent/.test(line))).toHaveLength(1);
      expect(printed.filter((line) => /^\s+at |Node\.js v|^\s*\^/.test(line))).toEqual([]);
      expect(printed).toContain(JSON.stringify({ event: 'owner.before_exit' }));
    });
  });
});
