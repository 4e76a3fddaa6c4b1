import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { buildOwnerSite } from '../support/build-site.ts';
import { type Site, startSite } from '../support/site.ts';
import { launchChromium, loadsPage, openPage } from './support/browser.ts';

/**
 * A form with a file field in Chromium, with and without JavaScript: the files listed before
 * sending, one too large named before the upload, the progress bar during it, a refused post that
 * asks for the files again; then the owner downloads the file from the admin.
 */
const PASSWORD = 'correct horse battery staple';
const WCAG_22_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
const FORM = `import { defineForm } from 'site-forms/config';
export default defineForm({
  name: 'apply',
  title: 'Apply',
  submitLabel: 'Send application',
  thanks: 'Thank you for applying.',
  fields: [
    { name: 'name', type: 'text', label: 'Name', required: true, minLength: 2 },
    { name: 'email', type: 'email', label: 'Email address', required: true },
    { name: 'cv', type: 'file', label: 'CV', hint: 'A PDF, at most 4 MB.', accept: ['application/pdf', '.pdf'], maxSize: 4_000_000, maxFiles: 2 },
  ],
});
`;
const PAGE = `---
import { FormPage } from 'site-forms/pages';
---
<FormPage form="apply" path="/apply" description="Apply with your CV." />
`;
const CONFIG = `import apply from './src/forms/apply.form.ts';
import { defineForms } from 'site-forms/config';
export default defineForms({
  contactFields: [{ name: 'sketch', type: 'file', label: 'Sketch', accept: ['application/pdf'], maxSize: 1_000_000 }],
  forms: [apply],
});
`;

/** A PDF its signature says is one, of `size` bytes. */
function pdf(size: number): Buffer {
  const head = Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj << >> endobj\n', 'latin1');
  const tail = Buffer.from('\n%%EOF\n');
  return Buffer.concat([head, Buffer.alloc(Math.max(0, size - head.length - tail.length), 0x20), tail]);
}

let built: ReturnType<typeof buildOwnerSite>;
let site: Site;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  built = buildOwnerSite(`uploads-${process.pid}`, { 'src/forms/apply.form.ts': FORM, 'src/pages/apply.astro': PAGE, 'forms.config.ts': CONFIG });
  site = await startSite({ ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD) }, { start: built.start });
  browser = await launchChromium();
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await site?.stop();
  built?.remove();
});
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

async function visit(javaScriptEnabled: boolean): Promise<Page> {
  const { context, page } = await openPage(browser, { javaScriptEnabled, acceptDownloads: true });
  contexts.push(context);
  await page.goto(`${site.url}/apply`);
  return page;
}

/** The stored applications and their files, oldest first. */
function stored(): Array<{ name: string; files: string }> {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    return db
      .prepare(
        "SELECT s.name AS name, COALESCE((SELECT group_concat(f.name || ':' || f.size, ',') FROM files f WHERE f.submission_id = s.id), '') AS files FROM submissions s WHERE s.form = 'apply' ORDER BY s.id",
      )
      .all() as Array<{ name: string; files: string }>;
  } finally {
    db.close();
  }
}

describe('with JavaScript', () => {
  test('the chosen files are listed, the upload shows its progress as a bar and in words, then the thanks; axe finds nothing', async () => {
    const page = await visit(true);
    await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
    await page.getByLabel('Email address').fill('ada@example.org');
    await page.getByLabel('CV').setInputFiles([{ name: 'cv.pdf', mimeType: 'application/pdf', buffer: pdf(3_000_000) }]);
    await expect.poll(() => page.getByRole('list', { name: 'Chosen files' }).textContent()).toBe('cv.pdf (3 MB)');
    const { violations } = await new AxeBuilder({ page }).withTags(WCAG_22_AA).analyze();
    expect(violations.map((v) => v.id)).toEqual([]);
    // A slow uplink, so that the upload lasts long enough to be seen.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 1_000_000 });
    await page.getByRole('button', { name: 'Send application' }).click();
    const bar = page.getByRole('progressbar', { name: 'Upload progress' });
    await bar.waitFor({ state: 'visible' });
    await expect.poll(async () => Number(await bar.getAttribute('value')), { timeout: 10_000 }).toBeGreaterThan(0);
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: 10_000 }).toMatch(/^Sending: (25|50|75|100) %$/);
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: 20_000 }).toBe('Thank you for applying.');
    expect(stored().at(-1)).toEqual({ name: 'Ada Lovelace', files: 'cv.pdf:3000000' });
  });

  test('a file too large, or one file too many, is named at the field before a byte is sent', async () => {
    const page = await visit(true);
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') posts.push(request.url());
    });
    await page.getByLabel('Name', { exact: true }).fill('Bob Builder');
    await page.getByLabel('Email address').fill('bob@example.org');
    await page.getByLabel('CV').setInputFiles([{ name: 'huge.pdf', mimeType: 'application/pdf', buffer: pdf(4_000_001) }]);
    await expect.poll(() => page.locator('#apply-cv-error').textContent()).toBe('huge.pdf is larger than 4 MB; choose a smaller file.');
    await page.getByRole('button', { name: 'Send application' }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('apply-cv');
    const three = ['a', 'b', 'c'].map((name) => ({ name: `${name}.pdf`, mimeType: 'application/pdf', buffer: pdf(1000) }));
    await page.getByLabel('CV').setInputFiles(three);
    await expect.poll(() => page.locator('#apply-cv-error').textContent()).toBe('Choose at most 2 files.');
    expect(posts.filter((url) => url.includes('/api/forms/apply'))).toEqual([]);
  });

  test('the contact form with a file field added in contactFields: listed, named when too large, sent with its file in the page', async () => {
    const { context, page } = await openPage(browser, { javaScriptEnabled: true });
    contexts.push(context);
    await page.goto(`${site.url}/contact`);
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') posts.push(new URL(request.url()).pathname);
    });
    await page.getByLabel('Name', { exact: true }).fill('Edsger Dijkstra');
    await page.getByLabel('Email address').fill('edsger@example.org');
    await page.getByLabel('Message').fill('The sketch of the bracket that broke.');
    await page.getByLabel('Sketch').setInputFiles([{ name: 'big.pdf', mimeType: 'application/pdf', buffer: pdf(1_000_001) }]);
    await expect.poll(() => page.locator('#contact-sketch-error').textContent()).toBe('big.pdf is larger than 1 MB; choose a smaller file.');
    await page.getByRole('button', { name: 'Send message' }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('contact-sketch');
    expect(posts).toEqual([]);
    await page.getByLabel('Sketch').setInputFiles([{ name: 'bracket.pdf', mimeType: 'application/pdf', buffer: pdf(5000) }]);
    await expect.poll(() => page.getByRole('list', { name: 'Chosen files' }).textContent()).toBe('bracket.pdf (5 kB)');
    await page.getByRole('button', { name: 'Send message' }).click();
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: 20_000 }).toMatch(/^Thanks/);
    expect(new URL(page.url()).pathname).toBe('/contact');
    expect(posts).toEqual(['/api/contact']);
    const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
    try {
      const row = db
        .prepare("SELECT f.name AS name, f.size AS size FROM files f JOIN submissions s ON s.id = f.submission_id WHERE s.name = 'Edsger Dijkstra'")
        .get();
      expect(row).toEqual({ name: 'bracket.pdf', size: 5000 });
    } finally {
      db.close();
    }
  });

  test('keyboard only: Tab reaches the file field, then the button, in order', async () => {
    const page = await visit(true);
    await page.locator('#apply-name').focus();
    const order = ['apply-name'];
    for (let i = 0; i < 2; i++) {
      await page.keyboard.press('Tab');
      order.push(await page.evaluate(() => document.activeElement?.id ?? ''));
    }
    expect(order).toEqual(['apply-name', 'apply-email', 'apply-cv']);
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent?.trim())).resolves.toBe('Send application');
  });
});

describe('without JavaScript', () => {
  test('the form posts with its file as every form does, to the thank-you page', async () => {
    const page = await visit(false);
    await page.getByLabel('Name', { exact: true }).fill('Grace Hopper');
    await page.getByLabel('Email address').fill('grace@example.org');
    await page.getByLabel('CV').setInputFiles([{ name: 'résumé.pdf', mimeType: 'application/pdf', buffer: pdf(2000) }]);
    await expect(loadsPage(page, () => page.getByRole('button', { name: 'Send application' }).click())).resolves.toBe(200);
    expect(new URL(page.url()).pathname).toBe('/thank-you/apply/');
    expect(stored().at(-1)).toEqual({ name: 'Grace Hopper', files: 'résumé.pdf:2000' });
  });

  test('a refused post keeps what was typed and says the files must be chosen again', async () => {
    const page = await visit(false);
    // Two zero-width spaces pass the browser's minlength; the server counts what a reader sees.
    await page.getByLabel('Name', { exact: true }).fill('\u200b\u200b');
    await page.getByLabel('Email address').fill('grace@example.org');
    await page.getByLabel('CV').setInputFiles([{ name: 'cv.pdf', mimeType: 'application/pdf', buffer: pdf(2000) }]);
    await expect(loadsPage(page, () => page.getByRole('button', { name: 'Send application' }).click())).resolves.toBe(400);
    await expect(page.getByLabel('Email address').inputValue()).resolves.toBe('grace@example.org');
    await expect(page.locator('#apply-cv-hint').textContent()).resolves.toBe('A PDF, at most 4 MB. Your files were not kept: please choose them again.');
    // axe runs as a script: the same page (its draft's address) in a browser that runs them.
    const checked = await visit(true);
    await checked.goto(page.url());
    await expect(checked.locator('#apply-cv-hint').textContent()).resolves.toBe('A PDF, at most 4 MB. Your files were not kept: please choose them again.');
    const { violations } = await new AxeBuilder({ page: checked }).withTags(WCAG_22_AA).analyze();
    expect(violations.map((v) => v.id)).toEqual([]);
  });
});

describe('without JavaScript, a file too large (issue 39 item 8)', () => {
  test('the 413 brings the form back with what was typed, and names the limit as the page does', async () => {
    const page = await visit(false);
    await page.getByLabel('Name', { exact: true }).fill('Katherine Johnson');
    await page.getByLabel('Email address').fill('katherine@example.org');
    await page.getByLabel('CV').setInputFiles([{ name: 'huge.pdf', mimeType: 'application/pdf', buffer: pdf(4_000_001) }]);
    await expect(loadsPage(page, () => page.getByRole('button', { name: 'Send application' }).click())).resolves.toBe(413);
    await expect(page.getByLabel('Name', { exact: true }).inputValue()).resolves.toBe('Katherine Johnson');
    await expect(page.getByLabel('Email address').inputValue()).resolves.toBe('katherine@example.org');
    await expect(page.locator('body').textContent()).resolves.toContain('CV: a file is larger than 4 MB');
  });
});

describe("the owner's download", () => {
  test('signed in, the owner opens the message and downloads its file, byte for byte', async () => {
    const page = await visit(true);
    await page.goto(`${site.url}/admin`);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.goto(`${site.url}/admin/messages`);
    await page.getByRole('link', { name: 'Grace Hopper' }).first().click();
    const link = page.getByRole('link', { name: 'résumé.pdf' });
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe('résumé.pdf');
    expect(readFileSync((await download.path())!)).toEqual(pdf(2000));
  });
});
