import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { buildOtherSite } from '../support/build-site.ts';
import { parseMail } from '../support/mime.ts';
import { type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';
import { launchChromium, loadsPage, openPage } from './support/browser.ts';

/**
 * A German owner's site (tests/fixtures/werkstatt-sued.*.config.ts) in Chromium, with and without
 * JavaScript: a visitor reads German everywhere, at the field and in the script's words, and the
 * pages stay accessible (decision 0134).
 */
let built: ReturnType<typeof buildOtherSite>;
let site: Site;
let smtp: FakeSmtpServer;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  built = buildOtherSite(`werkstatt-sued-e2e-${process.pid}`, 'tests/fixtures/werkstatt-sued.site.config.ts', {
    FORMS_CONFIG: 'tests/fixtures/werkstatt-sued.forms.config.ts',
  });
  smtp = await startSmtpServer();
  site = await startSite(
    {
      SMTP_URL: smtp.url(),
      CONTACT_TO: 'owner@example.com',
      CONTACT_FROM: 'forms@example.com',
      SPAM_FILTER: 'on',
      // A post without the page's proof is held: without JavaScript, the person confirms it.
      SPAM_WEIGHTS: 'proof-missing=2',
    },
    { start: built.start },
  );
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await site?.stop();
  await smtp?.close();
  built?.remove();
});

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

async function visit(path: string, javaScriptEnabled: boolean): Promise<Page> {
  const { context, page } = await openPage(browser, { javaScriptEnabled });
  contexts.push(context);
  await page.goto(`${site.url}${path}`);
  return page;
}

async function axeViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']).analyze();
  return violations.map((violation) => violation.id);
}

async function fillContact(page: Page, message: string): Promise<void> {
  await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
  await page.getByLabel('E-Mail-Adresse', { exact: true }).fill('ada@example.org');
  await page.getByLabel('Nachricht', { exact: true }).fill(message);
}

const mailsTo = (address: string) => smtp.received.filter((mail) => mail.to.includes(address)).map((mail) => parseMail(mail.raw));

describe('a German site with JavaScript', () => {
  test.each(['/', '/contact'])('%s: German, lang="de", and no axe violations', async (path) => {
    const page = await visit(path, true);
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('de');
    await expect(page.getByRole('link', { name: 'Startseite' }).count()).resolves.toBe(1);
    await expect(axeViolations(page)).resolves.toEqual([]);
  });

  test('a contact message is sent: the German thanks in place, the owner’s mail in German too', async () => {
    const page = await visit('/contact', true);
    await fillContact(page, 'Ein Tisch aus Eiche, zwei Meter lang, bitte.');
    await page.getByRole('button', { name: 'Nachricht senden' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Danke für Ihre Nachricht! Wir melden uns bald bei Ihnen.');
    expect(new URL(page.url()).pathname).toBe('/contact');
    await eventually('the owner’s mail', () => mailsTo('owner@example.com').length === 1);
    expect(mailsTo('owner@example.com')[0]!.header('subject')).toEqual(['[Werkstatt Süd] Neue Nachricht von Ada Lovelace']);
  });

  test('a message the server refuses: the German message at its field, which takes the focus', async () => {
    const page = await visit('/contact', true);
    // Past the browser's own checks, so the server's message is the one shown.
    await page.evaluate(() => document.querySelector('form')!.setAttribute('novalidate', ''));
    await fillContact(page, 'Kurz');
    await page.getByLabel('Telefon', { exact: true }).fill('abc');
    await page.getByRole('button', { name: 'Nachricht senden' }).click();
    await expect.poll(() => page.locator('#contact-message-error').textContent()).toBe('Die Nachricht muss mindestens 10 Zeichen lang sein');
    await expect(page.locator('#contact-phone-error').textContent()).resolves.toBe('„Telefon“ muss eine Telefonnummer sein');
    await expect(page.locator('#contact-message').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('contact-message');
    await expect(page.getByRole('button', { name: 'Nachricht senden' }).isEnabled()).resolves.toBe(true);
    await expect(axeViolations(page)).resolves.toEqual([]);
  });

  test('the script’s own words are German: the busy button while sending, and a failed request', async () => {
    const page = await visit('/contact', true);
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The post is held, then dropped as a lost network would: the script's words, not the server's, show.
    await page.route('**/api/contact', async (route) => {
      await held;
      await route.abort('failed');
    });
    await fillContact(page, 'Ein Tisch aus Eiche, zwei Meter lang, bitte.');
    const button = page.locator('#contact-form button[type="submit"]');
    await button.click();
    await expect.poll(() => button.textContent()).toBe('Wird gesendet …');
    await expect(button.isDisabled()).resolves.toBe(true);
    release();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Etwas ist schiefgegangen. Bitte versuchen Sie es noch einmal.');
    await expect(button.textContent()).resolves.toBe('Nachricht senden');
  });

  test('a refused address for the newsletter: the German message at its field', async () => {
    const page = await visit('/', true);
    await page.evaluate(() => document.querySelector('form')!.setAttribute('novalidate', ''));
    await page.getByLabel('E-Mail-Adresse', { exact: true }).fill('ada@localhost');
    await page.getByRole('button', { name: 'Abonnieren' }).click();
    await expect.poll(() => page.locator('#newsletter-email-error').textContent()).toBe('Bitte geben Sie eine gültige E-Mail-Adresse ein');
  });
});

describe('a German site without JavaScript', () => {
  test('a refused message: the page again, titled as an error, each German message at its field, the first focused', async () => {
    const page = await visit('/contact', false);
    // Values a browser lets through and the server refuses.
    await fillContact(page, 'Bitte rufen Sie mich wegen eines Schranks an.');
    await page.getByLabel('E-Mail-Adresse', { exact: true }).fill('ada@localhost');
    await page.getByLabel('Telefon', { exact: true }).fill('abc');
    await expect(loadsPage(page, () => page.getByRole('button', { name: 'Nachricht senden' }).click())).resolves.toBe(400);
    await expect(page.title()).resolves.toBe('Fehler: Kontakt · Werkstatt Süd');
    await expect(page.locator('#contact-email-error').textContent()).resolves.toBe('Bitte geben Sie eine gültige E-Mail-Adresse ein');
    await expect(page.locator('#contact-phone-error').textContent()).resolves.toBe('„Telefon“ muss eine Telefonnummer sein');
    await expect(page.getByLabel('Telefon', { exact: true }).inputValue()).resolves.toBe('abc');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('contact-email');
  });

  test('a message sent: confirmed with one German button, then the German thank-you page', async () => {
    const page = await visit('/contact', false);
    await fillContact(page, 'Bitte rufen Sie mich wegen eines Schranks an.');
    await expect(loadsPage(page, () => page.getByRole('button', { name: 'Nachricht senden' }).click())).resolves.toBe(200);
    await expect(page.locator('h2').textContent()).resolves.toBe('Noch ein Schritt: Nachricht senden?');
    await expect(page.title()).resolves.toBe('Nachricht bestätigen · Kontakt · Werkstatt Süd');

    await expect(loadsPage(page, () => page.getByRole('button', { name: 'Meine Nachricht senden' }).click())).resolves.toBe(200);
    expect(new URL(page.url()).pathname).toBe('/thank-you/contact/');
    await expect(page.locator('h1').textContent()).resolves.toBe('Danke für Ihre Nachricht!');
    await expect(page.getByRole('link', { name: 'Zurück zur Startseite' }).count()).resolves.toBe(1);
  });

  test('the pages a person without the script meets (refused, asked to confirm) have no axe violations', async () => {
    // axe runs in the page, so the page's own script is kept out instead of JavaScript itself.
    const { context, page } = await openPage(browser);
    contexts.push(context);
    await context.route('**/_astro/*.js', (route) => route.abort());
    await page.goto(`${site.url}/contact`);
    await fillContact(page, 'Bitte rufen Sie mich wegen eines Schranks an.');
    await page.getByLabel('E-Mail-Adresse', { exact: true }).fill('ada@localhost');
    await expect(loadsPage(page, () => page.getByRole('button', { name: 'Nachricht senden' }).click())).resolves.toBe(400);
    await expect(page.locator('#contact-email-error').textContent()).resolves.toBe('Bitte geben Sie eine gültige E-Mail-Adresse ein');
    await expect(axeViolations(page)).resolves.toEqual([]);

    await page.getByLabel('E-Mail-Adresse', { exact: true }).fill('ada@example.org');
    await expect(loadsPage(page, () => page.getByRole('button', { name: 'Nachricht senden' }).click())).resolves.toBe(200);
    await expect(page.locator('h2').textContent()).resolves.toBe('Noch ein Schritt: Nachricht senden?');
    await expect(axeViolations(page)).resolves.toEqual([]);
  });
});
