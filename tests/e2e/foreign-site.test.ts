import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { type ForeignServer, type ForeignSite, makeForeignSite, SHOP_FOOTER, SHOP_NAME, SHOP_TAGLINE } from '../support/foreign-site.ts';
import { parseMail } from '../support/mime.ts';
import { eventually, type FakeSmtpServer, freePort, startSmtpServer } from '../support/smtp.ts';
import { launchChromium, loadsPage, openPage } from './support/browser.ts';

/**
 * Proof on a site that is not this one (issue 29 item 4): a coffee roaster's own Astro 7 site
 * (tests/support/foreign-site.ts) installs `site-forms` from `npm pack`, adds the integration as
 * the README says, and is served by `@astrojs/node`, standalone and in middleware mode behind
 * the owner's own `node:http` server. In Chromium, with and without JavaScript, a visitor sends
 * the contact form, the newsletter form in the shop's footer and the owner's `callback` form:
 * each is stored, mailed through a real SMTP server, shown in `/admin`, and every page the
 * integration brings is the shop's layout. The shop is German (its site.config.ts), the admin
 * English (decision 0134).
 */

const PASSWORD = 'correct horse battery staple';
const OWNER = 'inhaber@lindner.example';

let shop: ForeignSite;
let browser: Browser;
let smtp: FakeSmtpServer;
let server: ForeignServer;

beforeAll(async () => {
  shop = makeForeignSite(['standalone', 'middleware']);
  const { pack, install, build } = shop.timings;
  console.log(`foreign site: npm pack ${pack} ms, npm install ${install} ms, astro build standalone ${build.standalone} ms, middleware ${build.middleware} ms`);
  // The owner's secrets in their project's .env, as the README says (the hash in single quotes).
  shop.writeDotEnv({ ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD), CONTACT_TO: OWNER, CONTACT_FROM: 'website@lindner.example' });
  browser = await launchChromium();
  smtp = await startSmtpServer();
  const port = await freePort();
  server = await shop.start({
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    SMTP_URL: smtp.url(),
    SPAM_FILTER: 'on',
    RATE_LIMIT_MAX: '0',
    NEWSLETTER_PROVIDER: 'local',
    NEWSLETTER_DOUBLE_OPT_IN: 'true',
  });
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await smtp?.close();
  shop?.remove();
});

function read<T>(at: ForeignServer, sql: string, ...values: string[]): T[] {
  const db = new DatabaseSync(join(at.dataDir, 'forms.db'), { readOnly: true });
  try {
    return db.prepare(sql).all(...values) as T[];
  } finally {
    db.close();
  }
}

const statusOf = (at: ForeignServer, name: string) => read<{ status: string }>(at, 'SELECT status FROM submissions WHERE name = ?', name)[0]?.status;
const subscribed = (at: ForeignServer, email: string) => read<{ email: string }>(at, 'SELECT email FROM subscribers WHERE email = ?', email).length === 1;

/** The mail whose subject ends with `subject`, once the SMTP server has it. */
const mailEndingWith = (mailbox: FakeSmtpServer, subject: string) =>
  eventually(`the mail "…${subject}"`, () => mailbox.received.find((m) => parseMail(m.raw).header('subject')[0]?.endsWith(subject)));

/** The page is the shop's: its own header and footer around what the integration rendered. */
async function expectShopLayout(page: Page): Promise<void> {
  await expect(page.locator('.shop-header .shop-name').textContent()).resolves.toBe(SHOP_NAME);
  await expect(page.locator('.shop-header .shop-tagline').textContent()).resolves.toBe(SHOP_TAGLINE);
  await expect(page.locator('.shop-footer h2').textContent()).resolves.toBe(SHOP_FOOTER);
}

/** Presses the button named `name` in `scope` and answers the status of the page the browser loads. */
function press(page: Page, name: string, scope = 'body'): Promise<number> {
  return loadsPage(page, () => page.locator(scope).getByRole('button', { name, exact: true }).click());
}

/**
 * Sends a form the spam filter checks: with JavaScript the page's script solves the proof and thanks
 * in place; without, the filter asks the person to confirm (a page of the shop's layout), then the
 * thank-you page follows, in the shop's layout too.
 */
async function send(page: Page, javaScript: boolean, form: string, button: string, thanks: string, thankYou: { path: string; heading: string }) {
  if (javaScript) {
    const formPage = new URL(page.url()).pathname;
    await page.locator(form).getByRole('button', { name: button, exact: true }).click();
    // The thanks in place of the form's fields (its error region goes with them), on the same page:
    // a failure shows the refusal instead, or the address the browser went to if no script took the form.
    const outcome = () =>
      Promise.all([page.locator(form).getByRole('status').allTextContents(), page.locator(`${form}-error`).allTextContents(), new URL(page.url()).pathname]);
    // The page's script solves the proof of work first: seconds on two busy cores.
    await expect.poll(outcome, { timeout: 20_000 }).toEqual([[thanks], [], formPage]);
    return;
  }
  await expect(press(page, button, form)).resolves.toBe(200);
  await expect(page.locator('main h2').first().textContent()).resolves.toBe('Noch ein Schritt: Nachricht senden?');
  await expectShopLayout(page);
  await expect(press(page, 'Meine Nachricht senden', 'main')).resolves.toBe(200);
  expect(new URL(page.url()).pathname).toBe(thankYou.path);
  await expect(page.locator('h1').textContent()).resolves.toBe(thankYou.heading);
  await expectShopLayout(page);
}

describe.each([
  ['with JavaScript', true],
  ['without JavaScript', false],
])('the shop’s forms, standalone, %s', (_, javaScript) => {
  const tag = javaScript ? 'js' : 'nojs';

  test('the contact form on the shop’s /kontakt: thanks, stored, mailed to the owner', async () => {
    const { context, page } = await openPage(browser, { javaScriptEnabled: javaScript });
    try {
      const name = `Greta Kontakt ${tag}`;
      await page.goto(`${server.url}/kontakt`);
      await expectShopLayout(page);
      const form = page.locator('#contact-form');
      await form.getByLabel('Name', { exact: true }).fill(name);
      await form.getByLabel('E-Mail-Adresse', { exact: true }).fill('greta@example.org');
      await form.getByLabel('Nachricht', { exact: true }).fill('Haben Sie den Äthiopien-Kaffee auch gemahlen?');
      await send(page, javaScript, '#contact-form', 'Nachricht senden', 'Danke für Ihre Nachricht! Wir melden uns bald bei Ihnen.', {
        path: '/thank-you/contact/',
        heading: 'Danke für Ihre Nachricht!',
      });
      const mail = await mailEndingWith(smtp, `[${SHOP_NAME}] Neue Nachricht von ${name}`);
      expect(mail.to).toEqual([OWNER]);
      expect(parseMail(mail.raw).text).toContain('Haben Sie den Äthiopien-Kaffee auch gemahlen?');
      await eventually('the message marked sent', () => statusOf(server, name) === 'sent');
    } finally {
      await context.close();
    }
  });

  test('the owner’s callback form (forms.config.ts) on the shop’s /callback: thanks, stored, mailed', async () => {
    const { context, page } = await openPage(browser, { javaScriptEnabled: javaScript });
    try {
      const name = `Hans Rückruf ${tag}`;
      await page.goto(`${server.url}/callback`);
      await expectShopLayout(page);
      const form = page.locator('#callback-form');
      await form.getByLabel('Ihr Name', { exact: true }).fill(name);
      await form.getByLabel('Telefonnummer', { exact: true }).fill('+49 431 987654');
      await form.getByLabel('Wann passt es Ihnen?').selectOption('afternoon');
      await send(page, javaScript, '#callback-form', 'Rückruf anfordern', 'Danke! Wir rufen Sie zurück.', {
        path: '/thank-you/callback/',
        heading: 'Danke! Wir rufen Sie zurück.',
      });
      const mail = await mailEndingWith(smtp, `[${SHOP_NAME}] Neu: Rückruf anfordern von ${name}`);
      expect(parseMail(mail.raw).text).toContain('+49 431 987654');
      await eventually('the callback request marked sent', () => statusOf(server, name) === 'sent');
    } finally {
      await context.close();
    }
  });

  test('the newsletter form in the shop’s footer: double opt-in mailed, confirmed from the link, on the list', async () => {
    const { context, page } = await openPage(browser, { javaScriptEnabled: javaScript });
    try {
      const email = `leserin-${tag}@example.org`;
      await page.goto(`${server.url}/`);
      const form = page.locator('#newsletter-form');
      await form.getByLabel('E-Mail-Adresse', { exact: true }).fill(email);
      if (javaScript) {
        await form.getByRole('button', { name: 'Abonnieren', exact: true }).click();
        await expect.poll(() => form.getByRole('status').textContent(), { timeout: 20_000 }).toContain('Danke für Ihr Abonnement!');
      } else {
        await expect(press(page, 'Abonnieren', '#newsletter-form')).resolves.toBe(200);
        expect(new URL(page.url()).pathname).toBe('/thank-you/confirm-subscription/');
        await expect(page.locator('h1').textContent()).resolves.toBe('Bitte prüfen Sie Ihr Postfach');
        await expectShopLayout(page);
      }
      const mail = await eventually(`the confirmation mail to ${email}`, () => smtp.received.find((m) => m.to.includes(email)));
      const confirm = /https?:\/\/\S+\/newsletter\/confirm\/?\?token=[\w-]+/.exec(parseMail(mail.raw).text)?.[0];
      expect(confirm?.startsWith(`${server.url}/newsletter/confirm`)).toBe(true);
      expect(subscribed(server, email)).toBe(false);

      await page.goto(confirm!);
      await expectShopLayout(page);
      await expect(press(page, 'Mein Abonnement bestätigen', 'main')).resolves.toBe(200);
      expect(new URL(page.url()).pathname).toBe('/thank-you/newsletter/');
      await expect(page.locator('h1').textContent()).resolves.toBe('Danke für Ihr Abonnement!');
      await expectShopLayout(page);
      expect(subscribed(server, email)).toBe(true);
    } finally {
      await context.close();
    }
  });

  test('a refused contact post keeps what was typed, with the message at the field, in the shop’s layout', async () => {
    const { context, page } = await openPage(browser, { javaScriptEnabled: javaScript });
    try {
      const name = `Greta Zu Kurz ${tag}`;
      await page.goto(`${server.url}/kontakt`);
      const form = page.locator('#contact-form');
      await form.getByLabel('Name', { exact: true }).fill(name);
      await form.getByLabel('E-Mail-Adresse', { exact: true }).fill('greta@example.org');
      // Ten characters for the browser's own check, six for the server's once trimmed.
      await form.getByLabel('Nachricht', { exact: true }).fill('Hallo!    ');
      if (javaScript) {
        await form.getByRole('button', { name: 'Nachricht senden', exact: true }).click();
        await expect
          .poll(() => page.locator('#contact-message-error').textContent(), { timeout: 20_000 })
          .toBe('Die Nachricht muss mindestens 10 Zeichen lang sein');
        expect(new URL(page.url()).pathname).toBe('/kontakt');
      } else {
        await expect(press(page, 'Nachricht senden', '#contact-form')).resolves.toBe(400);
        await expect(page.locator('#contact-message-error').textContent()).resolves.toBe('Die Nachricht muss mindestens 10 Zeichen lang sein');
        expect(new URL(page.url()).origin).toBe(server.url);
      }
      await expectShopLayout(page);
      await expect(page.locator('#contact-form').getByLabel('Name', { exact: true }).inputValue()).resolves.toBe(name);
      await expect(page.locator('#contact-form').getByLabel('Nachricht', { exact: true }).inputValue()).resolves.toBe('Hallo!    ');
      expect(statusOf(server, name)).toBeUndefined();
    } finally {
      await context.close();
    }
  });

  test('a refused post of the owner’s callback form keeps what was typed, with the message at the field, in the shop’s layout', async () => {
    const { context, page } = await openPage(browser, { javaScriptEnabled: javaScript });
    try {
      const name = `Hans Zu Kurz ${tag}`;
      await page.goto(`${server.url}/callback`);
      const form = page.locator('#callback-form');
      await form.getByLabel('Ihr Name', { exact: true }).fill(name);
      // Digits the browser lets through, too few for the server's check of a phone number.
      await form.getByLabel('Telefonnummer', { exact: true }).fill('0431');
      await form.getByLabel('Wann passt es Ihnen?').selectOption('afternoon');
      if (javaScript) {
        await form.getByRole('button', { name: 'Rückruf anfordern', exact: true }).click();
        await expect
          .poll(() => Promise.all([page.locator('#callback-phone-error').allTextContents(), new URL(page.url()).pathname]), { timeout: 20_000 })
          .toEqual([['„Telefonnummer“ muss eine Telefonnummer sein'], '/callback']);
      } else {
        await expect(press(page, 'Rückruf anfordern', '#callback-form')).resolves.toBe(400);
        await expect(page.locator('#callback-phone-error').textContent()).resolves.toBe('„Telefonnummer“ muss eine Telefonnummer sein');
        expect(new URL(page.url()).origin).toBe(server.url);
      }
      await expectShopLayout(page);
      const shown = page.locator('#callback-form');
      await expect(shown.getByLabel('Ihr Name', { exact: true }).inputValue()).resolves.toBe(name);
      await expect(shown.getByLabel('Telefonnummer', { exact: true }).inputValue()).resolves.toBe('0431');
      await expect(shown.getByLabel('Wann passt es Ihnen?').inputValue()).resolves.toBe('afternoon');
      expect(statusOf(server, name)).toBeUndefined();
    } finally {
      await context.close();
    }
  });
});

describe('the owner, standalone', () => {
  test('signs in to /admin with the password of the shop’s .env and sees the messages the shop received', async () => {
    // A message of its own, so this test does not lean on the visitors' tests before it.
    const name = 'Ida Admin';
    const posted = await fetch(`${server.url}/api/contact`, {
      method: 'POST',
      body: new URLSearchParams({ name, email: 'ida@example.org', message: 'Bitte um Rückmeldung zum Abo.' }),
      headers: { accept: 'application/json' },
    });
    expect(posted.status).toBe(200);
    const { context, page } = await openPage(browser, { javaScriptEnabled: false });
    try {
      await page.goto(`${server.url}/admin`);
      await page.getByLabel('Password').fill(PASSWORD);
      await expect(press(page, 'Sign in')).resolves.toBe(200);
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.goto(`${server.url}/admin/messages`);
      await expect(page.getByText(name, { exact: true }).first().isVisible()).resolves.toBe(true);
    } finally {
      await context.close();
    }
  });

  test('the API answers the spec’s JSON: 200 {"success":true}, 400 with each field’s errors', async () => {
    const valid = await fetch(`${server.url}/api/contact`, {
      method: 'POST',
      body: new URLSearchParams({ name: 'Jonas Api', email: 'jonas@example.org', message: 'Eine Frage per Programm gestellt.' }),
      headers: { accept: 'application/json' },
    });
    expect([valid.status, await valid.text()]).toEqual([200, '{"success":true}']);
    const invalid = await fetch(`${server.url}/api/newsletter`, {
      method: 'POST',
      body: new URLSearchParams({ email: 'kein-at' }),
      headers: { accept: 'application/json' },
    });
    expect(invalid.status).toBe(400);
    await expect(invalid.json()).resolves.toEqual({ success: false, error: 'Bitte geben Sie eine gültige E-Mail-Adresse ein' });
  });
});

describe('the same build in middleware mode, behind the owner’s own node:http server', () => {
  let mailbox: FakeSmtpServer;
  let behind: ForeignServer;

  beforeAll(async () => {
    mailbox = await startSmtpServer();
    behind = await shop.start({ SMTP_URL: mailbox.url(), SPAM_FILTER: 'on', RATE_LIMIT_MAX: '0', NEWSLETTER_PROVIDER: 'local' }, { mode: 'middleware' });
  }, 60_000);

  afterAll(async () => {
    await behind?.stop();
    await mailbox?.close();
  });

  test('the owner’s own route answers, and /api/health is ours', async () => {
    const own = await fetch(`${behind.url}/laden`);
    expect([own.status, await own.text()]).toEqual([200, 'Der Laden ist offen.\n']);
    const health = await fetch(`${behind.url}/api/health`);
    expect(health.status).toBe(200);
    await expect(health.json()).resolves.toMatchObject({ success: true });
  });

  test('the contact form in Chromium: thanks in place, stored, mailed', async () => {
    const { context, page } = await openPage(browser);
    try {
      const name = 'Greta Middleware';
      await page.goto(`${behind.url}/kontakt`);
      await expectShopLayout(page);
      const form = page.locator('#contact-form');
      await form.getByLabel('Name', { exact: true }).fill(name);
      await form.getByLabel('E-Mail-Adresse', { exact: true }).fill('greta@example.org');
      await form.getByLabel('Nachricht', { exact: true }).fill('Gesendet über den Server des Ladens.');
      await send(page, true, '#contact-form', 'Nachricht senden', 'Danke für Ihre Nachricht! Wir melden uns bald bei Ihnen.', { path: '', heading: '' });
      const mail = await mailEndingWith(mailbox, `[${SHOP_NAME}] Neue Nachricht von ${name}`);
      expect(parseMail(mail.raw).text).toContain('Gesendet über den Server des Ladens.');
      await eventually('the message marked sent', () => statusOf(behind, name) === 'sent');
    } finally {
      await context.close();
    }
  });

  test('the owner’s callback form without JavaScript: the thank-you page in the shop’s layout', async () => {
    const { context, page } = await openPage(browser, { javaScriptEnabled: false });
    try {
      const name = 'Hans Middleware';
      await page.goto(`${behind.url}/callback`);
      const form = page.locator('#callback-form');
      await form.getByLabel('Ihr Name', { exact: true }).fill(name);
      await form.getByLabel('Telefonnummer', { exact: true }).fill('+49 431 555000');
      await form.getByLabel('Wann passt es Ihnen?').selectOption('morning');
      await send(page, false, '#callback-form', 'Rückruf anfordern', '', { path: '/thank-you/callback/', heading: 'Danke! Wir rufen Sie zurück.' });
      await mailEndingWith(mailbox, `[${SHOP_NAME}] Neu: Rückruf anfordern von ${name}`);
    } finally {
      await context.close();
    }
  });

  test('the API answers the spec’s JSON behind the owner’s server', async () => {
    const valid = await fetch(`${behind.url}/api/forms/callback`, {
      method: 'POST',
      body: new URLSearchParams({ name: 'Jonas Middleware', phone: '+49 431 1', slot: 'morning' }),
      headers: { accept: 'application/json' },
    });
    expect([valid.status, await valid.text()]).toEqual([200, '{"success":true}']);
    const invalid = await fetch(`${behind.url}/api/forms/callback`, {
      method: 'POST',
      body: new URLSearchParams({ name: 'Jonas', slot: 'midnight' }),
      headers: { accept: 'application/json' },
    });
    expect(invalid.status).toBe(400);
    const body = (await invalid.json()) as { success: boolean; errors: Record<string, string[]> };
    expect(body.success).toBe(false);
    expect(Object.keys(body.errors).sort()).toEqual(['phone', 'slot']);
  });
});
