import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { NAVIGATION, postForm, type Site, startSite } from '../support/site.ts';
import { startAstroDev } from '../support/astro-dev.ts';
import { launchChromium, loadsPage, openPage } from './support/browser.ts';

// An owner's Astro site whose own /admin and /api/contact come first (issue 40 item 5, decision 0230):
// the forms move under `siteForms({ base: '/forms' })`, and the owner's routes keep answering.
// The owner's site of tests/fixtures/owner-site, with those two routes of its own and the option,
// site-forms copied in from packages/site-forms as an install puts it, built and served by the
// adapter's standalone server.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = join(ROOT, 'tests/fixtures/owner-site');
const LIBRARY = join(ROOT, 'packages/site-forms');

/** The owner's files over the fixture's; `astroBase` sets Astro's own `base` too. */
const ownerFiles = (astroBase?: string): Record<string, string> => ({
  'astro.config.mjs': `import node from '@astrojs/node';
import { defineConfig } from 'astro/config';
import siteForms from 'site-forms';

export default defineConfig({
  output: 'static',${astroBase ? `\n  base: '${astroBase}',` : ''}
  adapter: node({ mode: 'standalone' }),
  integrations: [siteForms({ layout: './src/layouts/Bakery.astro', base: '/forms' })],
});
`,
  'src/pages/admin.astro': `---
export const prerender = false;
---
<html lang="en"><body><h1>The bakery's own back office</h1></body></html>
`,
  'src/pages/api/contact.ts': `export const prerender = false;
const own = () => new Response(JSON.stringify({ bakery: 'own contact route' }), { headers: { 'content-type': 'application/json' } });
export const GET = own;
export const POST = own;
`,
});

function ownerSite(astroBase?: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'owner-base-'));
  cpSync(FIXTURE, folder, { recursive: true });
  for (const [file, text] of Object.entries(ownerFiles(astroBase))) {
    mkdirSync(join(folder, file, '..'), { recursive: true });
    writeFileSync(join(folder, file), text);
  }
  const modules = join(folder, 'node_modules');
  mkdirSync(modules);
  const ours = join(ROOT, 'node_modules');
  for (const name of readdirSync(ours)) if (!name.startsWith('.') && !name.startsWith('site-forms')) symlinkSync(join(ours, name), join(modules, name));
  for (const part of ['package.json', 'bin', 'dist']) cpSync(join(LIBRARY, part), join(modules, 'site-forms', part), { recursive: true });
  return folder;
}

/** `astro build` in the owner's folder, as they would run it. */
function build(folder: string): void {
  const env = { ...process.env, ASTRO_TELEMETRY_DISABLED: '1', SITE_CONFIG: '', FORMS_CONFIG: '', CONTACT_FORM_ENDPOINT: '' };
  const run = spawnSync(process.execPath, [join(folder, 'node_modules/astro/bin/astro.mjs'), 'build'], { cwd: folder, env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the owner's site did not build:\n${run.stderr}${run.stdout}`);
}

let folder: string;
let site: Site;
let browser: Browser | undefined;
const others: Array<{ folder: string; site?: Site }> = [];

beforeAll(async () => {
  folder = ownerSite();
  build(folder);
  site = await startSite({ ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD) }, { start: join(folder, 'dist/server/entry.mjs') });
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await site?.stop().catch(() => {});
  if (folder) rmSync(folder, { recursive: true, force: true });
  for (const other of others) {
    await other.site?.stop().catch(() => {});
    rmSync(other.folder, { recursive: true, force: true });
  }
});

function stored(of: Site = site): string[] {
  const db = new DatabaseSync(join(of.dataDir, 'forms.db'), { readOnly: true });
  try {
    return (db.prepare('SELECT name FROM submissions ORDER BY id').all() as Array<{ name: string }>).map((row) => row.name);
  } finally {
    db.close();
  }
}

const PASSWORD = 'correct horse battery staple';
const valid = { name: 'Prefixed Baker', email: 'grete@example.org', message: 'Two loaves of rye for Saturday, please.', honeypot: '' };

describe("siteForms({ base: '/forms' }) in a site with its own /admin and /api/contact", () => {
  test("the owner's /admin and /api/contact answer as the owner wrote them", async () => {
    const admin = await fetch(`${site.url}/admin`);
    expect(admin.status).toBe(200);
    expect(await admin.text()).toContain("The bakery's own back office");
    const contact = await postForm(`${site.url}/api/contact`, valid, { origin: site.url });
    await expect(contact.json()).resolves.toEqual({ bakery: 'own contact route' });
    expect(stored()).toEqual([]);
  });

  test('the API answers under the prefix with its contract: a script’s post is stored, a near miss is a JSON 404', async () => {
    const response = await postForm(`${site.url}/forms/api/contact`, { ...valid, name: 'Script Baker' });
    expect(response.status).toBe(200);
    await expect(response.json()).resolves.toEqual({ success: true });
    expect(stored()).toContain('Script Baker');
    const health = await fetch(`${site.url}/forms/api/health`);
    expect(health.status).toBe(200);
    const miss = await fetch(`${site.url}/forms/api/nothing`);
    expect(miss.status).toBe(404);
    await expect(miss.json()).resolves.toMatchObject({ success: false });
  });

  test('a person’s post goes to the thank-you page under the prefix, which has no link out of it', async () => {
    const body = new FormData();
    for (const [name, value] of Object.entries({ ...valid, name: 'Person Baker' })) body.append(name, value);
    const response = await fetch(`${site.url}/forms/api/contact`, { method: 'POST', body, headers: { ...NAVIGATION, origin: site.url }, redirect: 'manual' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/forms/thank-you/contact/');
    expect(stored()).toContain('Person Baker');
    const thanks = await fetch(`${site.url}/forms/thank-you/contact/`);
    expect(thanks.status).toBe(200);
    expect(await thanks.text()).not.toMatch(/(?:href|action)="\/(?:admin|api|thank-you|newsletter|theme\.css)\b/);
    expect(await fetch(`${site.url}/thank-you/contact/`).then((r) => r.status)).toBe(404);
  });

  test('the admin lives under the prefix: its sign-in redirects there, its session opens its pages, its links lead there', async () => {
    const signIn = await fetch(`${site.url}/forms/admin/actions/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ password: PASSWORD }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url },
      redirect: 'manual',
    });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get('location')).toBe('/forms/admin');
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const messages = await fetch(`${site.url}/forms/admin/messages`, { headers: { cookie } });
    expect(messages.status).toBe(200);
    const html = await messages.text();
    expect(html).toContain('href="/forms/admin/subscribers"');
    expect(html).toContain('action="/forms/admin/actions/sign-out"');
    expect(html).not.toMatch(/(?:href|action)="\/(?:admin|api)\//);
  });

  test('without JavaScript in Chromium: the form on the owner’s page posts under the prefix, is stored, the thank-you page shows', async () => {
    const { context, page } = await openPage(browser!, { javaScriptEnabled: false });
    try {
      await page.goto(`${site.url}/`);
      expect(await page.locator('form[data-contact-form]').getAttribute('action')).toBe('/forms/api/contact');
      await page.locator('form[data-contact-form] [name="name"]').fill('No Script Baker');
      await page.locator('form[data-contact-form] [name="email"]').fill('grete@example.org');
      await page.locator('form[data-contact-form] [name="message"]').fill('Two loaves of rye for Saturday, please.');
      const status = await loadsPage(page, () => page.locator('form[data-contact-form] button[type="submit"]').click());
      expect(status).toBe(200);
      expect(new URL(page.url()).pathname).toBe('/forms/thank-you/contact/');
      expect(stored()).toContain('No Script Baker');
    } finally {
      await context.close();
    }
  });

  test('with JavaScript in Chromium: the script posts under the prefix and its challenge comes from there, the message is stored', async () => {
    const { context, page } = await openPage(browser!);
    const requests: string[] = [];
    page.on('request', (request) => requests.push(`${request.method()} ${new URL(request.url()).pathname}`));
    try {
      await page.goto(`${site.url}/`);
      await page.locator('form[data-contact-form] [name="name"]').fill('Script Page Baker');
      await page.locator('form[data-contact-form] [name="email"]').fill('grete@example.org');
      await page.locator('form[data-contact-form] [name="message"]').fill('Two loaves of rye for Saturday, please.');
      await page.locator('form[data-contact-form] button[type="submit"]').click();
      await expect.poll(() => stored()).toContain('Script Page Baker');
      expect(page.url()).toBe(`${site.url}/`);
      expect(requests).toContain('POST /forms/api/contact');
      expect(requests.filter((line) => line.includes('/api/') && !line.includes('/forms/api/'))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe("astro dev with siteForms({ base: '/forms' })", () => {
  test('answers the forms under the prefix and leaves /admin and /api/contact to the owner', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'owner-base-dev-'));
    writeFileSync(join(folder, '.env'), [`DATA_DIR=${dataDir}`, 'RATE_LIMIT_MAX=0', 'SPAM_FILTER=off'].join('\n'));
    const dev = await startAstroDev(folder, '/forms/api/health');
    try {
      const { url } = dev;
      const response = await postForm(`${url}/forms/api/contact`, { ...valid, name: 'Dev Baker' });
      await expect(response.json()).resolves.toEqual({ success: true });
      const own = await postForm(`${url}/api/contact`, valid, { origin: url });
      await expect(own.json()).resolves.toEqual({ bakery: 'own contact route' });
      expect(await fetch(`${url}/admin`).then((r) => r.text())).toContain("The bakery's own back office");
      const body = new FormData();
      for (const [name, value] of Object.entries({ ...valid, name: 'Dev Person Baker' })) body.append(name, value);
      const person = await fetch(`${url}/forms/api/contact`, { method: 'POST', body, headers: { ...NAVIGATION, origin: url }, redirect: 'manual' });
      expect(person.headers.get('location')).toBe('/forms/thank-you/contact/');
      expect(await fetch(`${url}/forms/thank-you/contact/`).then((r) => r.status)).toBe(200);
      expect(stored({ dataDir } as Site)).toEqual(['Dev Baker', 'Dev Person Baker']);
    } finally {
      await dev.stop();
      rmSync(join(folder, '.env'), { force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});

describe("Astro's own base composes: base: '/shop' and siteForms({ base: '/forms' })", () => {
  let shop: Site;
  beforeAll(async () => {
    const other: { folder: string; site?: Site } = { folder: ownerSite('/shop') };
    others.push(other);
    build(other.folder);
    shop = await startSite({}, { start: join(other.folder, 'dist/server/entry.mjs') });
    other.site = shop;
  }, 240_000);

  test("the owner's pages and routes under Astro's base stay theirs; ours are under both", async () => {
    expect(await fetch(`${shop.url}/shop/admin`).then((r) => r.text())).toContain("The bakery's own back office");
    await expect(postForm(`${shop.url}/shop/api/contact`, valid, { origin: shop.url }).then((r) => r.json())).resolves.toEqual({ bakery: 'own contact route' });
    const home = await fetch(`${shop.url}/shop/`).then((r) => r.text());
    expect(home).toContain('action="/shop/forms/api/contact"');
    const json = await postForm(`${shop.url}/shop/forms/api/contact`, { ...valid, name: 'Shop Script Baker' });
    await expect(json.json()).resolves.toEqual({ success: true });
    expect(stored(shop)).toEqual(['Shop Script Baker']);
  });

  test('without JavaScript in Chromium: the post is stored and the thank-you page under both bases shows', async () => {
    const { context, page } = await openPage(browser!, { javaScriptEnabled: false });
    try {
      await page.goto(`${shop.url}/shop/`);
      await page.locator('form[data-contact-form] [name="name"]').fill('Shop Person Baker');
      await page.locator('form[data-contact-form] [name="email"]').fill('grete@example.org');
      await page.locator('form[data-contact-form] [name="message"]').fill('Two loaves of rye for Saturday, please.');
      const status = await loadsPage(page, () => page.locator('form[data-contact-form] button[type="submit"]').click());
      expect(status).toBe(200);
      expect(new URL(page.url()).pathname).toBe('/shop/forms/thank-you/contact/');
      expect(stored(shop)).toContain('Shop Person Baker');
    } finally {
      await context.close();
    }
  });
});
