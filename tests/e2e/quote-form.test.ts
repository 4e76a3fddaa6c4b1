import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { buildOwnerSite } from '../support/build-site.ts';
import { parseMail } from '../support/mime.ts';
import { type Site, startSite } from '../support/site.ts';
import { type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';
import { launchChromium, loadsPage, openPage, screenshotAtWidths } from './support/browser.ts';

/**
 * The example of docs/examples/quote/, added to a copy of the site exactly as its README says (the
 * definition in src/forms/, the page in src/pages/, forms.config.ts listing it), then used in
 * Chromium with and without JavaScript: stored, mailed, exported.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXAMPLE = join(ROOT, 'docs/examples/quote');
const PASSWORD = 'correct horse battery staple';
/** The tags of WCAG 2.0, 2.1 and 2.2 at levels A and AA, as tests/e2e/accessibility.test.ts checks. */
const WCAG_22_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

let built: ReturnType<typeof buildOwnerSite>;
let site: Site;
let smtp: FakeSmtpServer;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  built = buildOwnerSite(`quote-${process.pid}`, {
    'src/forms/quote.form.ts': readFileSync(join(EXAMPLE, 'quote.form.ts'), 'utf8'),
    'src/pages/quote.astro': readFileSync(join(EXAMPLE, 'quote.astro'), 'utf8'),
    'forms.config.ts': readFileSync(join(EXAMPLE, 'forms.config.ts'), 'utf8'),
  });
  smtp = await startSmtpServer();
  site = await startSite(
    { SMTP_URL: smtp.url(), CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'forms@example.com', ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD) },
    { start: built.start },
  );
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await site?.stop();
  await smtp?.close();
  built?.remove();
});

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

async function visit(javaScriptEnabled: boolean): Promise<Page> {
  const { context, page } = await openPage(browser, { javaScriptEnabled });
  contexts.push(context);
  await page.goto(`${site.url}/quote`);
  return page;
}

async function fill(page: Page, name: string, email = 'ada@example.org'): Promise<void> {
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Email address', { exact: true }).fill(email);
  await page.getByLabel('What is it for?').selectOption('table');
  await page.getByLabel('Budget in euros').fill('1200');
  await page.getByLabel('Details', { exact: true }).fill('An oak table, 2 m long, by March.');
  await page.getByLabel('You may keep my details to prepare the quote.').check();
}

/** The stored quotes, oldest first. */
function stored(): Record<string, unknown>[] {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    return db.prepare("SELECT name, email, message, form, fields, status FROM submissions WHERE form = 'quote' ORDER BY id").all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

const FIELDS = '{"topic":"table","budget":1200,"details":"An oak table, 2 m long, by March.","consent":true}';

describe('the example quote form, with JavaScript', () => {
  test('the page has no axe violations, and a keyboard reaches every field in order, never the honeypot', async () => {
    const page = await visit(true);
    const { violations } = await new AxeBuilder({ page }).withTags(WCAG_22_AA).analyze();
    expect(violations.map((v) => v.id)).toEqual([]);
    await screenshotAtWidths(page, 'quote-empty');
    await page.locator('#quote-name').focus();
    const order = ['quote-name'];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Tab');
      order.push(await page.evaluate(() => document.activeElement?.id ?? document.activeElement?.tagName ?? ''));
    }
    expect(order).toEqual(['quote-name', 'quote-email', 'quote-topic', 'quote-budget', 'quote-details', 'quote-consent', '']);
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Ask for a quote');
  });

  test('a valid quote: thanked in place, stored with its fields, mailed with every label', async () => {
    const page = await visit(true);
    await fill(page, 'Ada Lovelace');
    await page.getByRole('button', { name: 'Ask for a quote' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Thank you! We will send you a quote within two working days.');
    expect(new URL(page.url()).pathname).toBe('/quote');
    expect(stored()).toEqual([{ name: 'Ada Lovelace', email: 'ada@example.org', message: '', form: 'quote', fields: FIELDS, status: expect.any(String) }]);

    await expect.poll(() => smtp.received.length, { timeout: 10_000 }).toBe(1);
    const mail = parseMail(smtp.received[0]!.raw);
    expect(mail.header('subject')).toEqual(['[Our Newsletter] New Request a quote from Ada Lovelace']);
    expect(mail.text).toMatch(
      /^What is it for\?: A table\r?\nBudget in euros: 1200\r?\nDetails: An oak table, 2 m long, by March\.\r?\nYou may keep my details to prepare the quote\.: Yes\r?\n\r?\n-- \r?\nFrom: Ada Lovelace <ada@example\.org>/,
    );
  });

  test('a quote the server refuses: each message at its field, the first one focused, nothing stored', async () => {
    const before = stored().length;
    const page = await visit(true);
    // Past the browser's own checks, as an old browser or a program would be.
    await page.evaluate(() => document.querySelector('form')!.setAttribute('novalidate', ''));
    await fill(page, 'Bo', 'bo@localhost');
    await page.getByLabel('Details', { exact: true }).fill('Short');
    await page.getByLabel('You may keep my details to prepare the quote.').uncheck();
    await page.getByRole('button', { name: 'Ask for a quote' }).click();
    await expect.poll(() => page.locator('#quote-email-error').textContent()).toBe('Please enter a valid email address');
    await expect(page.locator('#quote-details-error').textContent()).resolves.toBe('Details must be at least 10 characters');
    await expect(page.locator('#quote-consent-error').textContent()).resolves.toBe('We need your agreement to prepare a quote');
    await expect(page.locator('#quote-email').getAttribute('aria-describedby')).resolves.toBe('quote-email-error');
    const { violations } = await new AxeBuilder({ page }).withTags(WCAG_22_AA).analyze();
    expect(violations.map((v) => v.id)).toEqual([]);
    await screenshotAtWidths(page, 'quote-error');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('quote-email');
    expect(stored()).toHaveLength(before);
  });
});

describe('the example quote form, without JavaScript', () => {
  test('a valid quote: the thank-you page at /thank-you/quote/, and the quote stored', async () => {
    const before = stored().length;
    const page = await visit(false);
    await fill(page, 'Grace Hopper', 'grace@example.org');
    await expect(loadsPage(page, () => page.getByRole('button', { name: 'Ask for a quote' }).click())).resolves.toBe(200);
    expect(new URL(page.url()).pathname).toBe('/thank-you/quote/');
    await expect(page.locator('h1').textContent()).resolves.toBe('Thank you! We will send you a quote within two working days.');
    expect(stored().slice(before)).toEqual([
      { name: 'Grace Hopper', email: 'grace@example.org', message: '', form: 'quote', fields: FIELDS, status: expect.any(String) },
    ]);
  });

  test('a quote the server refuses: the form again with the messages at their fields and what was typed', async () => {
    const before = stored().length;
    const page = await visit(false);
    // Two zero-width spaces pass the browser's minlength; the server counts what a reader sees.
    await fill(page, '\u200b\u200b', 'grace@localhost');
    await expect(loadsPage(page, () => page.getByRole('button', { name: 'Ask for a quote' }).click())).resolves.toBe(400);
    expect(new URL(page.url()).pathname).toBe('/api/forms/quote');
    // Shown from its draft (decision 0133): a reload shows the same page and posts nothing.
    expect(new URL(page.url()).search).toMatch(/^\?draft=[\w-]{32}$/);
    await expect(loadsPage(page, () => page.reload())).resolves.toBe(400);
    await expect(page.title()).resolves.toMatch(/^Error: Request a quote/);
    await expect(page.locator('#quote-name-error').textContent()).resolves.toBe('Name must be at least 2 characters');
    await expect(page.locator('#quote-email-error').textContent()).resolves.toBe('Please enter a valid email address');
    await expect(page.getByLabel('Email address', { exact: true }).inputValue()).resolves.toBe('grace@localhost');
    await expect(page.getByLabel('What is it for?').inputValue()).resolves.toBe('table');
    await expect(page.getByLabel('You may keep my details to prepare the quote.').isChecked()).resolves.toBe(true);
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('quote-name');
    expect(stored()).toHaveLength(before);

    // Corrected, the same form posts again from its page at /api/forms/quote.
    await page.getByLabel('Name', { exact: true }).fill('Grace Hopper');
    await page.getByLabel('Email address', { exact: true }).fill('grace@example.org');
    await expect(loadsPage(page, () => page.getByRole('button', { name: 'Ask for a quote' }).click())).resolves.toBe(200);
    expect(new URL(page.url()).pathname).toBe('/thank-you/quote/');
    expect(stored()).toHaveLength(before + 1);
  });
});

describe("the quotes in the owner's exports", () => {
  test('a form column and one column per field, in CSV and JSON', async () => {
    const signIn = await fetch(`${site.url}/admin/actions/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ password: PASSWORD }),
      headers: { origin: site.url },
      redirect: 'manual',
    });
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await (await fetch(`${site.url}/admin`, { headers: { cookie } })).text())![1]!;
    const exported = async (format: string) =>
      (
        await fetch(`${site.url}/admin/actions/export`, {
          method: 'POST',
          body: new URLSearchParams({ csrf, what: 'messages', format }),
          headers: { cookie, origin: site.url },
        })
      ).text();
    const csv = (await exported('csv')).split('\r\n');
    expect(csv[0]).toBe('id,createdAt,name,email,message,status,attempts,nextAttemptAt,lastError,sentAt,spamReasons,form,topic,budget,details,consent');
    expect(csv.filter((line) => line.endsWith(',quote,table,1200,"An oak table, 2 m long, by March.",true'))).toHaveLength(3);
    const json = JSON.parse(await exported('json')) as Record<string, unknown>[];
    expect(json.find((m) => m.name === 'Ada Lovelace')).toMatchObject({
      form: 'quote',
      topic: 'table',
      budget: 1200,
      details: 'An oak table, 2 m long, by March.',
      consent: true,
    });

    // The admin's list filters by form.
    const list = await (await fetch(`${site.url}/admin/messages?form=quote`, { headers: { cookie } })).text();
    expect(list).toContain('<option value="quote" selected>Request a quote</option>');
    expect(list.match(/<a href="\/admin\/messages\/\d+">/g)).toHaveLength(3);
    // A quote has no message: its fields, with their labels, are its excerpt.
    expect(list).toContain(
      '<p class="excerpt">What is it for?: A table · Budget in euros: 1200 · Details: An oak table, 2 m long, by March. · You may keep my details…</p>',
    );
  });
});

describe('the example quote form behind the spam layers (SPAM_FILTER=on)', () => {
  let guarded: Site;
  beforeAll(async () => {
    guarded = await startSite({ SPAM_FILTER: 'on' }, { start: built.start });
  });
  afterAll(() => guarded?.stop());

  const quotes = () => {
    const db = new DatabaseSync(join(guarded.dataDir, 'forms.db'), { readOnly: true });
    try {
      return db.prepare("SELECT name, status, spam_reasons FROM submissions WHERE form = 'quote' ORDER BY id").all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  };

  async function open(javaScriptEnabled: boolean): Promise<Page> {
    const { context, page } = await openPage(browser, { javaScriptEnabled });
    contexts.push(context);
    await page.goto(`${guarded.url}/quote`);
    return page;
  }

  test('with JavaScript, the page solves the proof and the quote is accepted, not held', async () => {
    const page = await open(true);
    await fill(page, 'Ada Lovelace');
    // A person takes a moment; a form sent at once is one weak sign of a program.
    await page.waitForTimeout(3_100);
    await page.getByRole('button', { name: 'Ask for a quote' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Thank you! We will send you a quote within two working days.');
    expect(quotes()).toEqual([{ name: 'Ada Lovelace', status: 'pending', spam_reasons: null }]);
  });

  test('without JavaScript, the person confirms the quote with one click and lands on its thank-you page', async () => {
    const page = await open(false);
    await fill(page, 'Grace Hopper', 'grace@example.org');
    await expect(loadsPage(page, () => page.getByRole('button', { name: 'Ask for a quote' }).click())).resolves.toBe(200);
    await expect(page.locator('h2').textContent()).resolves.toBe('One more step: send your message?');
    await expect(page.locator('.confirm-preview dt').allTextContents()).resolves.toEqual([
      'Name',
      'Email address',
      'What is it for?',
      'Budget in euros',
      'Details',
    ]);
    await expect(page.locator('.confirm-preview dd').allTextContents()).resolves.toEqual([
      'Grace Hopper',
      'grace@example.org',
      'A table',
      '1200',
      'An oak table, 2 m long, by March.',
    ]);
    expect(quotes().at(-1)).toEqual({ name: 'Grace Hopper', status: 'spam', spam_reasons: '["proof-missing"]' });
    await expect(loadsPage(page, () => page.getByRole('button', { name: 'Send my message' }).click())).resolves.toBe(200);
    expect(new URL(page.url()).pathname).toBe('/thank-you/quote/');
    expect(quotes().at(-1)).toMatchObject({ name: 'Grace Hopper', status: 'pending' });
  });
});
