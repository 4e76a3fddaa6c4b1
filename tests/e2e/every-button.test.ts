import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { buildOwnerSite } from '../support/build-site.ts';
import { parseMail } from '../support/mime.ts';
import { nginxAvailable, startTlsProxy, type TlsProxy } from '../support/nginx.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, freePort, startSmtpServer } from '../support/smtp.ts';
import { launchChromium, loadsPage, openPage } from './support/browser.ts';

/**
 * Every button of the site pressed in Chromium, as a person presses it, with and without
 * JavaScript, directly and through nginx with TLS (issue 28, item 2): the newsletter with double
 * opt-in (its confirmation link opened from the mail caught by a real SMTP server, then its
 * unsubscribe link), the contact form and an owner's form (the quote example) with the spam
 * filter on (so without JavaScript each meets the confirmation step), each of the three refused
 * and corrected where the refusal left the visitor, and the owner's actions, a failed delivery's
 * Retry among them.
 * No request here carries an `Origin` the test wrote: the browser sends what it sends.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXAMPLE = join(ROOT, 'docs/examples/quote');
const PASSWORD = 'correct horse battery staple';
const OWNER = 'owner@example.com';

let built: ReturnType<typeof buildOwnerSite>;
let browser: Browser;
let passwordHash: string;

beforeAll(async () => {
  built = buildOwnerSite(`every-button-${process.pid}`, {
    // The site of the fixture, so that its name and language are this test's own.
    'site.config.ts': readFileSync(join(ROOT, 'tests/fixtures/atelier-nord.site.config.ts'), 'utf8').replace('../../src/', './src/'),
    'src/forms/quote.form.ts': readFileSync(join(EXAMPLE, 'quote.form.ts'), 'utf8'),
    'src/pages/quote.astro': readFileSync(join(EXAMPLE, 'quote.astro'), 'utf8'),
    'forms.config.ts': readFileSync(join(EXAMPLE, 'forms.config.ts'), 'utf8'),
  });
  passwordHash = await hashPassword(PASSWORD);
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  built?.remove();
});

/** One deployment under test: the server, the address a visitor types, and the mail it sends. */
type Deployment = { site: Site; smtp: FakeSmtpServer; home: string; stop(): Promise<void> };

/** What every deployment shares: double opt-in on the local list, the spam filter on, the admin. */
const settings = (smtp: FakeSmtpServer): Record<string, string> => ({
  SMTP_URL: smtp.url(),
  CONTACT_TO: OWNER,
  CONTACT_FROM: 'forms@example.com',
  ADMIN_PASSWORD_HASH: passwordHash,
  SPAM_FILTER: 'on',
  NEWSLETTER_PROVIDER: 'local',
  NEWSLETTER_DOUBLE_OPT_IN: 'true',
});

/** The built server on its own port, visited at http://127.0.0.1:<port>, which is its PUBLIC_URL. */
async function direct(): Promise<Deployment> {
  const smtp = await startSmtpServer();
  const port = await freePort();
  const home = `http://127.0.0.1:${port}`;
  const site = await startSite({ ...settings(smtp), PORT: String(port), PUBLIC_URL: home }, { start: built.start });
  return {
    site,
    smtp,
    home,
    async stop() {
      await site.stop();
      await smtp.close();
    },
  };
}

/** The built server behind Debian's nginx with deploy/nginx.conf, visited at https://localhost:<port>. */
async function behindTlsProxy(): Promise<Deployment> {
  const smtp = await startSmtpServer();
  const httpsPort = await freePort();
  const home = `https://localhost:${httpsPort}`;
  const site = await startSite({ ...settings(smtp), TRUST_PROXY: '1', PUBLIC_URL: home }, { start: built.start });
  let proxy: TlsProxy;
  try {
    proxy = await startTlsProxy(site.url, { httpsPort });
  } catch (error) {
    await site.stop();
    await smtp.close();
    throw error;
  }
  return {
    site,
    smtp,
    home,
    async stop() {
      await proxy.stop();
      await site.stop();
      await smtp.close();
    },
  };
}

/** What a case gets: the page, the deployment, whether JavaScript runs, and a tag for its own names. */
type Visit = { page: Page; at: Deployment; javaScriptEnabled: boolean; tag: string };

/** Presses the button named `name` and answers the status of the page the browser loads. */
function press(page: Page, name: string): Promise<number> {
  return loadsPage(page, () => page.getByRole('button', { name, exact: true }).click());
}

function readDb<T>(site: Site, read: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

const subscribers = (site: Site) => readDb(site, (db) => (db.prepare('SELECT email FROM subscribers').all() as { email: string }[]).map((r) => r.email));
const statusOf = (site: Site, name: string) =>
  readDb(site, (db) => (db.prepare('SELECT status FROM submissions WHERE name = ?').get(name) as { status: string } | undefined)?.status);
const idOf = (site: Site, name: string) => readDb(site, (db) => (db.prepare('SELECT id FROM submissions WHERE name = ?').get(name) as { id: number }).id);

/** The links of the confirmation mail sent to `email`, once it has come. */
async function confirmationLinks(smtp: FakeSmtpServer, email: string): Promise<{ confirm: string; unsubscribe: string }> {
  const mail = await eventually(`the confirmation mail to ${email}`, () => smtp.received.find((m) => m.to.includes(email)));
  const text = parseMail(mail.raw).text;
  const link = (path: string) => new RegExp(`https?://\\S+${path}\\?token=[\\w-]+`).exec(text)?.[0];
  return { confirm: link('/newsletter/confirm/')!, unsubscribe: link('/newsletter/unsubscribe/')! };
}

/** Subscribes `email` as a mail program and a person would, without a browser: the signup, then the link's token. */
async function subscribeByMail(at: Deployment, email: string): Promise<void> {
  expect((await postForm(`${at.site.url}/api/newsletter`, { email })).status).toBe(200);
  const token = new URL((await confirmationLinks(at.smtp, email)).confirm).searchParams.get('token')!;
  expect((await postForm(`${at.site.url}/api/newsletter/confirm`, { token })).status).toBe(200);
  expect(subscribers(at.site)).toContain(email);
}

/** The mail the owner got about a message from `name`. */
const ownerMailFrom = (smtp: FakeSmtpServer, name: string) =>
  eventually(`the owner's mail about ${name}`, () =>
    smtp.received.find((m) => m.to.includes(OWNER) && parseMail(m.raw).header('subject')[0]?.endsWith(` from ${name}`)),
  );

/** Fills and sends a form: with JavaScript the script posts it and thanks in place; without, the browser posts it and the spam filter asks to confirm. */
async function sendHeldWithoutScript(page: Page, button: string, visit: Visit, thanks: string, thankYouPage: string): Promise<void> {
  if (visit.javaScriptEnabled) {
    await page.getByRole('button', { name: button, exact: true }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe(thanks);
    return;
  }
  await expect(press(page, button)).resolves.toBe(200);
  await expect(page.locator('h2').textContent()).resolves.toBe('One more step: send your message?');
  await expect(press(page, 'Send my message')).resolves.toBe(200);
  expect(new URL(page.url())).toMatchObject({ origin: visit.at.home, pathname: thankYouPage });
}

/** A field the browser lets through and the server refuses, what the server says, and what the visitor types instead. */
type Refusal = { form: string; field: string; label: string; typed: string; message: string; corrected: string };

/**
 * Sends a form the server refuses and corrects it where the refusal leaves the visitor: without
 * JavaScript the refusal is a page of its own at `<endpoint>?draft=…` (decision 0133), on the
 * address the visitor typed, with what was typed and the message at the field; with it, the
 * message in place on the form's page. Either way the field is then typed again.
 */
async function refuseThenCorrect(visit: Visit, button: string, endpoint: string, refusal: Refusal): Promise<void> {
  const { page, at, javaScriptEnabled } = visit;
  const field = page.getByLabel(refusal.label, { exact: true });
  const error = page.locator(`#${refusal.form}-${refusal.field}-error`);
  const formPage = new URL(page.url()).pathname;
  await field.fill(refusal.typed);
  if (javaScriptEnabled) {
    await page.getByRole('button', { name: button, exact: true }).click();
    await expect.poll(() => error.textContent()).toBe(refusal.message);
    expect(new URL(page.url()).pathname).toBe(formPage);
  } else {
    await expect(press(page, button)).resolves.toBe(400);
    const url = new URL(page.url());
    expect({ origin: url.origin, pathname: url.pathname }).toEqual({ origin: at.home, pathname: endpoint });
    expect(url.search).toMatch(/^\?draft=[\w-]{32}$/);
    await expect(error.textContent()).resolves.toBe(refusal.message);
  }
  await expect(field.inputValue()).resolves.toBe(refusal.typed);
  await expect(field.getAttribute('aria-invalid')).resolves.toBe('true');
  await field.fill(refusal.corrected);
}

/** Signs the owner in through the admin's form. */
async function signIn({ page, at }: Visit): Promise<void> {
  await page.goto(`${at.home}/admin`);
  await page.getByLabel('Password').fill(PASSWORD);
  await expect(press(page, 'Sign in')).resolves.toBe(200);
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

/**
 * The table: a name, the presses, and, for a case whose pages carry no script (the admin's),
 * `{ script: false }`: JavaScript would change nothing there, so it is pressed without it only.
 * The admin's passkeys are the exception: the sign-in and account pages carry the passkey script
 * (decision 0296), so the account page's case runs with JavaScript (adding one in Chromium's
 * virtual authenticator) and without it (no passkey control, the password as before).
 */
const CASES: Array<[string, (visit: Visit) => Promise<void>, { script: false }?]> = [
  [
    'the newsletter with double opt-in: signup, the link from the mail, confirm, then unsubscribe',
    async ({ page, at, javaScriptEnabled, tag }) => {
      const email = `reader-${tag}@example.org`;
      await page.goto(`${at.home}/`);
      await page.getByLabel('Email address', { exact: true }).fill(email);
      if (javaScriptEnabled) {
        await page.locator('#newsletter-form button[type="submit"]').click();
        // The spec's thanks, then what double opt-in asks of the person (issue 28 item 2).
        await page.getByRole('status').getByText('Thanks for subscribing!').waitFor();
        await expect(page.getByRole('status').textContent()).resolves.toContain(
          'Thanks for subscribing! We have sent you an email: follow the link in it to confirm your subscription.',
        );
      } else {
        await expect(loadsPage(page, () => page.locator('#newsletter-form button[type="submit"]').click())).resolves.toBe(200);
        expect(new URL(page.url()).pathname).toBe('/thank-you/confirm-subscription/');
      }
      const links = await confirmationLinks(at.smtp, email);
      expect(subscribers(at.site)).not.toContain(email);

      await page.goto(links.confirm);
      expect(new URL(page.url()).origin).toBe(at.home);
      await expect(press(page, 'Confirm my subscription')).resolves.toBe(200);
      expect(new URL(page.url()).pathname).toBe('/thank-you/newsletter/');
      await expect(page.locator('h1').textContent()).resolves.toBe('Thanks for subscribing!');
      expect(subscribers(at.site)).toContain(email);

      await page.goto(links.unsubscribe);
      await expect(press(page, 'Unsubscribe')).resolves.toBe(200);
      expect(new URL(page.url()).pathname).toBe('/thank-you/unsubscribed/');
      await expect(page.locator('h1').textContent()).resolves.toBe('You are unsubscribed');
      expect(subscribers(at.site)).not.toContain(email);
    },
  ],
  [
    'the contact form (held without JavaScript: its confirmation step)',
    async (visit) => {
      const { page, at, tag } = visit;
      const name = `Ada Contact ${tag}`;
      await page.goto(`${at.home}/contact`);
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page.getByLabel('Email address', { exact: true }).fill('ada@example.org');
      await page.getByLabel('Message', { exact: true }).fill('A question about a table, if I may.');
      await sendHeldWithoutScript(page, 'Send message', visit, "Thanks for your message! We'll get back to you soon.", '/thank-you/contact/');
      const mail = await ownerMailFrom(at.smtp, name);
      expect(parseMail(mail.raw).text).toContain('A question about a table, if I may.');
    },
  ],
  [
    'the quote form, an owner’s own (held without JavaScript: its confirmation step)',
    async (visit) => {
      const { page, at, tag } = visit;
      const name = `Grace Quote ${tag}`;
      await page.goto(`${at.home}/quote`);
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page.getByLabel('Email address', { exact: true }).fill('grace@example.org');
      await page.getByLabel('What is it for?').selectOption('table');
      await page.getByLabel('Budget in euros').fill('1200');
      await page.getByLabel('Details', { exact: true }).fill('An oak table, 2 m long, by March.');
      await page.getByLabel('You may keep my details to prepare the quote.').check();
      await sendHeldWithoutScript(page, 'Ask for a quote', visit, 'Thank you! We will send you a quote within two working days.', '/thank-you/quote/');
      const mail = await ownerMailFrom(at.smtp, name);
      expect(parseMail(mail.raw).text).toContain('Details: An oak table, 2 m long, by March.');
    },
  ],
  [
    'the newsletter refused (an address the server does not take), corrected where the refusal left it, then sent',
    async (visit) => {
      const { page, at, javaScriptEnabled, tag } = visit;
      const email = `corrected-${tag}@example.org`;
      await page.goto(`${at.home}/`);
      await refuseThenCorrect(visit, 'Subscribe', '/api/newsletter', {
        form: 'newsletter',
        field: 'email',
        label: 'Email address',
        typed: `corrected-${tag}@localhost`,
        message: 'Please enter a valid email address',
        corrected: email,
      });
      if (javaScriptEnabled) {
        await page.getByRole('button', { name: 'Subscribe', exact: true }).click();
        await page.getByRole('status').getByText('Thanks for subscribing!').waitFor();
      } else {
        await expect(press(page, 'Subscribe')).resolves.toBe(200);
        expect(new URL(page.url())).toMatchObject({ origin: at.home, pathname: '/thank-you/confirm-subscription/' });
      }
      await confirmationLinks(at.smtp, email);
      expect(at.smtp.received.filter((m) => m.to.some((to) => to.endsWith('@localhost')))).toEqual([]);
    },
  ],
  [
    'the contact form refused (a message too short once trimmed), corrected where the refusal left it, then sent',
    async (visit) => {
      const { page, at, tag } = visit;
      const name = `Ada Corrected ${tag}`;
      await page.goto(`${at.home}/contact`);
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page.getByLabel('Email address', { exact: true }).fill('ada@example.org');
      // Ten characters for the browser's own check, four for the server's once trimmed.
      await refuseThenCorrect(visit, 'Send message', '/api/contact', {
        form: 'contact',
        field: 'message',
        label: 'Message',
        typed: 'Hi!       ',
        message: 'Message must be at least 10 characters',
        corrected: 'Now long enough to be sent, I hope.',
      });
      await expect(page.getByLabel('Name', { exact: true }).inputValue()).resolves.toBe(name);
      await sendHeldWithoutScript(page, 'Send message', visit, "Thanks for your message! We'll get back to you soon.", '/thank-you/contact/');
      const mail = await ownerMailFrom(at.smtp, name);
      expect(parseMail(mail.raw).text).toContain('Now long enough to be sent, I hope.');
    },
  ],
  [
    'the quote form refused (details too short once trimmed), corrected where the refusal left it, then sent',
    async (visit) => {
      const { page, at, tag } = visit;
      const name = `Grace Corrected ${tag}`;
      await page.goto(`${at.home}/quote`);
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page.getByLabel('Email address', { exact: true }).fill('grace@example.org');
      await page.getByLabel('What is it for?').selectOption('shelves');
      await page.getByLabel('You may keep my details to prepare the quote.').check();
      await refuseThenCorrect(visit, 'Ask for a quote', '/api/forms/quote', {
        form: 'quote',
        field: 'details',
        label: 'Details',
        typed: 'Oak.      ',
        message: 'Details must be at least 10 characters',
        corrected: 'Three oak shelves, 90 cm wide.',
      });
      await expect(page.getByLabel('What is it for?').inputValue()).resolves.toBe('shelves');
      await expect(page.getByLabel('You may keep my details to prepare the quote.').isChecked()).resolves.toBe(true);
      await sendHeldWithoutScript(page, 'Ask for a quote', visit, 'Thank you! We will send you a quote within two working days.', '/thank-you/quote/');
      const mail = await ownerMailFrom(at.smtp, name);
      expect(parseMail(mail.raw).text).toContain('Details: Three oak shelves, 90 cm wide.');
    },
  ],
  [
    'the owner: sign in, release, mark as spam, delete, erase a subscriber, export, sign out',
    async ({ page, at, tag }) => {
      // A message a program posted (no proof, so held as spam), and a subscriber who confirmed by mail.
      const held = `Held Poster ${tag}`;
      const fields = { name: held, email: 'held@example.org', message: 'Posted by a program, held as spam.', honeypot: '' };
      expect((await postForm(`${at.site.url}/api/contact`, fields)).status).toBe(200);
      expect(statusOf(at.site, held)).toBe('spam');
      const [reader, kept] = [`erase-${tag}@example.org`, `kept-${tag}@example.org`];
      for (const email of [reader, kept]) await subscribeByMail(at, email);

      await page.goto(`${at.home}/admin`);
      await page.getByLabel('Password').fill(PASSWORD);
      await expect(press(page, 'Sign in')).resolves.toBe(200);
      await page.getByRole('heading', { name: 'Overview' }).waitFor();

      await page.goto(`${at.home}/admin/messages/${idOf(at.site, held)}`);
      await expect(press(page, 'Not spam')).resolves.toBe(200);
      await expect(page.getByRole('status').textContent()).resolves.toBe('The message is released; it will be sent once.');
      await ownerMailFrom(at.smtp, held);
      await eventually('the released message to be sent', () => statusOf(at.site, held) === 'sent');
      await page.reload();
      await expect(press(page, 'Mark as spam')).resolves.toBe(200);
      await expect(page.getByRole('status').textContent()).resolves.toBe('The message is held as spam. It had already been sent before you marked it.');
      expect(statusOf(at.site, held)).toBe('spam');
      await loadsPage(page, () => page.getByRole('link', { name: 'Delete' }).click());
      await expect(press(page, 'Delete for good')).resolves.toBe(200);
      await expect(page.getByRole('status').textContent()).resolves.toBe('Deleted.');
      expect(statusOf(at.site, held)).toBeUndefined();

      await page.goto(`${at.home}/admin/subscribers`);
      await expect(press(page, `Delete ${reader}`)).resolves.toBe(200);
      await expect(page.getByRole('status').textContent()).resolves.toBe('Deleted.');
      expect(subscribers(at.site)).not.toContain(reader);

      const download = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Export CSV', exact: true }).click();
      const file = await download;
      expect(file.suggestedFilename()).toMatch(/^subscribers-\d{4}-\d{2}-\d{2}\.csv$/);
      const csv = readFileSync((await file.path())!, 'utf8');
      expect(csv.split('\r\n')[0]).toBe('Email Address,Created,Consent,Signed Up,Confirmed,Consent Text,Consent Version,Consent Page,Client');
      expect(csv).toContain(`\r\n${kept},`);
      expect(csv).not.toContain(reader);

      await expect(press(page, 'Sign out')).resolves.toBe(200);
      await expect(page.getByRole('status').textContent()).resolves.toBe('You have signed out.');
    },
  ],
  [
    'the account page: add a passkey (JavaScript, a virtual authenticator), rename it, remove it; passkeys off on an IP address',
    async (visit) => {
      const { page, at, javaScriptEnabled, tag } = visit;
      // Passkeys need PUBLIC_URL on a domain: https://localhost through nginx has them, http://127.0.0.1 has not.
      const passkeys = new URL(at.home).hostname === 'localhost';
      let authenticatorId: string | undefined;
      const cdp = javaScriptEnabled && passkeys ? await page.context().newCDPSession(page) : undefined;
      if (cdp) {
        await cdp.send('WebAuthn.enable', { enableUI: false });
        ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
          options: {
            protocol: 'ctap2',
            transport: 'internal',
            hasResidentKey: true,
            hasUserVerification: true,
            isUserVerified: true,
            automaticPresenceSimulation: true,
          },
        }));
      }
      await signIn(visit);
      await loadsPage(page, () => page.getByRole('link', { name: 'Account' }).click());
      await page.getByRole('heading', { name: 'Your account' }).waitFor();
      if (!passkeys) {
        await expect(page.getByText('Passkeys are off on this site').isVisible()).resolves.toBe(true);
      } else if (!javaScriptEnabled) {
        await expect(page.getByRole('button', { name: 'Add a passkey' }).isVisible()).resolves.toBe(false);
        await expect(page.getByText('Adding a passkey needs JavaScript').isVisible()).resolves.toBe(true);
      } else {
        const [name, renamed] = [`Key ${tag}`, `Renamed ${tag}`];
        await page.getByLabel('Name of the new passkey').fill(name);
        await expect(press(page, 'Add a passkey')).resolves.toBe(200);
        await page.getByRole('cell', { name, exact: true }).waitFor();
        // Rename and Remove are plain form posts: the script takes no part in them.
        await page.getByLabel(`New name for ${name}`).fill(renamed);
        await expect(press(page, `Rename ${name}`)).resolves.toBe(200);
        await expect(page.getByRole('status').textContent()).resolves.toBe('The passkey was renamed.');
        await expect(press(page, `Remove ${renamed}`)).resolves.toBe(200);
        await expect(page.getByRole('status').textContent()).resolves.toBe('The passkey was removed: it no longer signs you in.');
        await expect(page.getByRole('cell', { name: renamed, exact: true }).count()).resolves.toBe(0);
        await cdp?.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: authenticatorId! });
      }
      await expect(press(page, 'Sign out')).resolves.toBe(200);
    },
  ],
  [
    'the owner: retry a message whose delivery failed, once the mail server takes it again',
    async (visit) => {
      const { page, at, tag } = visit;
      // A message a program posted (held as spam), released while the mail server refuses it for good.
      const failed = `Failed Poster ${tag}`;
      const fields = { name: failed, email: 'failed@example.org', message: 'Refused by the mail server once.', honeypot: '' };
      expect((await postForm(`${at.site.url}/api/contact`, fields)).status).toBe(200);
      expect(statusOf(at.site, failed)).toBe('spam');
      await signIn(visit);
      await page.goto(`${at.home}/admin/messages/${idOf(at.site, failed)}`);
      at.smtp.answer(() => ({ code: 550, message: 'mailbox unavailable' }));
      try {
        await expect(press(page, 'Not spam')).resolves.toBe(200);
        await eventually('the released message to fail', () => statusOf(at.site, failed) === 'failed');
      } finally {
        at.smtp.answer(() => 'accept');
      }
      expect(at.smtp.received.filter((m) => parseMail(m.raw).header('subject')[0]?.endsWith(` from ${failed}`))).toEqual([]);

      await page.reload();
      await expect(page.getByText('550 mailbox unavailable', { exact: false }).first().isVisible()).resolves.toBe(true);
      await expect(press(page, 'Retry')).resolves.toBe(200);
      await expect(page.getByRole('status').textContent()).resolves.toBe('The message is queued again; it will be sent within a few seconds.');
      const mail = await ownerMailFrom(at.smtp, failed);
      expect(parseMail(mail.raw).text).toContain('Refused by the mail server once.');
      await eventually('the retried message to be sent', () => statusOf(at.site, failed) === 'sent');
      await expect(press(page, 'Sign out')).resolves.toBe(200);
    },
    { script: false },
  ],
];

describe.each([
  ['directly', direct, true],
  ['through nginx with TLS', behindTlsProxy, nginxAvailable],
] as const)('every button, %s', (where, deploy, available) => {
  let at: Deployment;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    if (available) at = await deploy();
  }, 60_000);
  afterAll(() => at?.stop());
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });

  describe.skipIf(!available).each([
    ['with JavaScript', true],
    ['without JavaScript', false],
  ] as const)('%s', (_, javaScriptEnabled) => {
    test.each(CASES.filter(([, , pages]) => !javaScriptEnabled || pages?.script !== false))('%s', async (__, run) => {
      const { context, page } = await openPage(browser, { javaScriptEnabled, ignoreHTTPSErrors: true });
      contexts.push(context);
      // The `Origin` of every post the browser made itself: its own, never `null`.
      const origins: Array<Promise<string | null>> = [];
      context.on('request', (request) => {
        if (request.method() === 'POST') origins.push(request.headerValue('origin'));
      });
      const tag = `${where === 'directly' ? 'direct' : 'tls'}-${javaScriptEnabled ? 'js' : 'nojs'}`;
      await run({ page, at, javaScriptEnabled, tag });
      const sent = await Promise.all(origins);
      expect(sent.length).toBeGreaterThan(0);
      expect(new Set(sent)).toEqual(new Set([at.home]));
    });
  });
});
