import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { mailParts } from '../support/mime.ts';
import { type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, freePort, startSmtpServer } from '../support/smtp.ts';
import { launchChromium, loadsPage, openPage } from './support/browser.ts';

/**
 * Issue 42's "Done when" for the team (design note section 12, step S10b), in Chromium against the
 * built server with the fake SMTP server: the owner signs in with the site's password, invites an
 * editor and a reader of the contact form from the People page; each follows the mailed link in a
 * browser of their own and joins with a name and a password. The reader reads the contact form's
 * messages only (a message of another form exists beside them, as tests/server/admin-roles.test.ts
 * makes one: the suite's forms are the contact form alone), has no button that changes anything,
 * and a post crafted with their own cookie, CSRF token and Origin is refused. The editor marks a
 * message as spam. The owner's audit log names all three.
 */
const PASSWORD = 'correct horse battery staple';
const EDDIE = { email: 'eddie@example.org', name: 'Eddie Editor', password: 'eddie’s own long password' };
const RITA = { email: 'rita@example.org', name: 'Rita Reader', password: 'rita’s own long password' };

let browser: Browser;
let smtp: FakeSmtpServer;
let site: Site;
let db: DatabaseSync;
/** A message of the contact form (the reader's and the editor's) and one of a quote form (neither's). */
let carl: number;
let quinn: number;
const contexts: BrowserContext[] = [];
const pages: Record<'owner' | 'eddie' | 'rita', Page> = {} as never;

beforeAll(async () => {
  browser = await launchChromium();
  smtp = await startSmtpServer();
  // Links are mailed on PUBLIC_URL only (decision 0303): the server's own address.
  const port = await freePort();
  site = await startSite({
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD),
    CONTACT_TO: 'owner@example.org',
    CONTACT_FROM: 'forms@example.com',
    SMTP_URL: smtp.url(),
  });
  // The server may be writing (the first owner, its housekeeping) just after it starts: wait for
  // its lock, as tests/server/admin-roles.test.ts does.
  db = new DatabaseSync(join(site.dataDir, 'forms.db'), { timeout: 5_000 });
  const now = new Date().toISOString();
  const message = db.prepare("INSERT INTO submissions (created_at, name, email, message, status, form) VALUES (?, ?, ?, ?, 'sent', ?) RETURNING id");
  carl = Number((message.get(now, 'Carl Contact', 'carl@example.org', 'About the contact form.', 'contact') as { id: number }).id);
  quinn = Number((message.get(now, 'Quinn Quote', 'quinn@example.org', 'A quote, please.', 'quote') as { id: number }).id);
}, 60_000);
afterAll(async () => {
  for (const context of contexts.splice(0)) await context.close();
  await browser?.close();
  db?.close();
  await site?.stop();
  await smtp?.close();
});

async function fresh(options: { javaScriptEnabled?: boolean } = {}): Promise<Page> {
  const { context, page } = await openPage(browser, options);
  contexts.push(context);
  return page;
}

const statusOf = (id: number) => (db.prepare('SELECT status FROM submissions WHERE id = ?').get(id) as { status: string }).status;
const textOf = async (page: Page) => (await page.locator('main').textContent()) ?? '';

/** The text of the mail to `to` (every part), once it has arrived. */
async function mailTo(to: string): Promise<string> {
  const mail = await eventually(`the mail to ${to}`, () => smtp.received.find((received) => received.to.includes(to)));
  return mailParts(mail.raw)
    .map((part) => part.text)
    .join('\n');
}

/** Invites a person of the contact form from the People page, as the owner presses the buttons. */
async function invite(page: Page, person: { email: string; name: string }, role: 'Editor' | 'Reader'): Promise<void> {
  await loadsPage(page, () => page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'People' }).click());
  await page.getByRole('heading', { name: 'People', level: 1 }).waitFor();
  await page.getByLabel('Email', { exact: true }).fill(person.email);
  await page.getByLabel('Name (optional, for the mail)').fill(person.name);
  await page.getByRole('radio', { name: new RegExp(`^${role}`) }).check();
  await page.getByRole('checkbox', { name: 'Every form, present and future' }).uncheck();
  await page.getByRole('checkbox', { name: 'Contact us', exact: true }).check();
  await loadsPage(page, () => page.getByRole('button', { name: 'Invite', exact: true }).click());
  await expect(page.getByRole('status').textContent()).resolves.toContain('The invitation is on its way.');
}

/**
 * Follows the link of the invitation mailed to `person` in a browser of its own: name, password,
 * signed in. `javaScriptEnabled: false`: the welcome page's form is a plain post, and works so.
 */
async function accept(person: { email: string; name: string; password: string }, options: { javaScriptEnabled?: boolean } = {}): Promise<Page> {
  const link = new RegExp(`${site.url}/admin/welcome/sfl_[A-Za-z0-9_-]{43}`).exec(await mailTo(person.email))?.[0];
  expect(link, `the link in the mail to ${person.email}`).toBeDefined();
  const page = await fresh(options);
  await page.goto(link!);
  await page.getByRole('heading', { name: 'Welcome' }).waitFor();
  await page.getByLabel('Your name').fill(person.name);
  await page.getByLabel('Password').fill(person.password);
  await loadsPage(page, () => page.getByRole('button', { name: 'Join' }).click());
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  return page;
}

describe('the owner’s team in Chromium (issue 42, "Done when")', () => {
  test('the owner invites an editor and a reader by mail; each follows the link and is signed in (the reader without JavaScript)', async () => {
    const owner = await fresh();
    await owner.goto(`${site.url}/admin`);
    await owner.getByLabel('Password').fill(PASSWORD);
    await loadsPage(owner, () => owner.getByRole('button', { name: 'Sign in', exact: true }).click());
    await owner.getByRole('heading', { name: 'Overview' }).waitFor();
    pages.owner = owner;

    await invite(owner, EDDIE, 'Editor');
    await invite(owner, RITA, 'Reader');
    const invitations = () => smtp.received.filter((mail) => mail.to.includes(EDDIE.email) || mail.to.includes(RITA.email));
    await eventually('both invitations', () => invitations().length === 2);
    const links = owner.getByRole('table', { name: 'Invitations and sign-in links not yet used' });
    await expect(links.getByRole('row').count()).resolves.toBe(3);

    pages.eddie = await accept(EDDIE);
    // The reader's browser runs no script: joining, signing in and reading need none.
    pages.rita = await accept(RITA, { javaScriptEnabled: false });
    // The reader signs out and in again with their own address and password: the log's "Signed in".
    const rita = pages.rita;
    await loadsPage(rita, () => rita.getByRole('button', { name: 'Sign out' }).click());
    await rita.getByLabel('Email (optional)').fill(RITA.email);
    await rita.getByLabel('Password').fill(RITA.password);
    await loadsPage(rita, () => rita.getByRole('button', { name: 'Sign in', exact: true }).click());
    await rita.getByRole('heading', { name: 'Overview' }).waitFor();
    // Both are on the People page now, with their role and their one form.
    await owner.reload();
    const team = owner.getByRole('table', { name: 'Everyone who signs in to this inbox' });
    await expect(team.getByRole('row', { name: /Eddie Editor/ }).textContent()).resolves.toMatch(/editor\s*contact/);
    await expect(team.getByRole('row', { name: /Rita Reader/ }).textContent()).resolves.toMatch(/reader\s*contact/);
  }, 60_000);

  test('the reader sees their form’s messages only, has no button that changes anything, and a crafted post is 403', async () => {
    const rita = pages.rita;
    await loadsPage(rita, () => rita.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Messages' }).click());
    const list = await textOf(rita);
    expect(list).toContain('Carl Contact');
    expect(list).not.toContain('Quinn Quote');
    const other = await rita.goto(`${site.url}/admin/messages/${quinn}`);
    expect(other?.status()).toBe(404);
    expect(await textOf(rita)).not.toContain('Quinn Quote');

    const own = await rita.goto(`${site.url}/admin/messages/${carl}`);
    expect(own?.status()).toBe(200);
    expect(await textOf(rita)).toContain('About the contact form.');
    const buttons = await rita.getByRole('button').allTextContents();
    expect(buttons.map((name) => name.trim())).toEqual(['Sign out']);
    expect(await rita.getByRole('link', { name: /delete/i }).count()).toBe(0);

    // A post crafted with everything a browser of theirs has: their cookie, their page's token, the right Origin.
    const csrf = await rita.locator('input[name="csrf"]').first().inputValue();
    expect(csrf).not.toBe('');
    const crafted = await rita.request.post(`${site.url}/admin/actions/spam`, {
      form: { csrf, id: String(carl) },
      headers: { origin: site.url },
      maxRedirects: 0,
    });
    expect(crafted.status()).toBe(403);
    expect(await crafted.text()).toContain('Your role cannot do this.');
    expect(statusOf(carl)).toBe('sent');
    // The same token and cookie still work for what a reader may do: the refusal is the role's.
    expect((await rita.request.get(`${site.url}/admin/messages/${carl}`)).status()).toBe(200);
  });

  test('the editor presses "Mark as spam" on a message of their form: it is spam', async () => {
    const eddie = pages.eddie;
    await eddie.goto(`${site.url}/admin/messages/${carl}`);
    await loadsPage(eddie, () => eddie.getByRole('button', { name: 'Mark as spam' }).click());
    expect(statusOf(carl)).toBe('spam');
    expect(new URL(eddie.url()).pathname).toBe(`/admin/messages/${carl}`);
    // Another form's message is, for the editor too, as if it did not exist.
    const csrf = await eddie.locator('input[name="csrf"]').first().inputValue();
    const crafted = await eddie.request.post(`${site.url}/admin/actions/spam`, {
      form: { csrf, id: String(quinn) },
      headers: { origin: site.url },
      maxRedirects: 0,
    });
    expect(crafted.status()).toBe(404);
    expect(statusOf(quinn)).toBe('sent');
  });

  test('the owner’s audit log names the editor’s mark, the reader’s sign-in and the owner’s invitations', async () => {
    const owner = pages.owner;
    await loadsPage(owner, () => owner.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Audit log' }).click());
    // Each entry as "what — who (client) — when", from its three parts.
    const entries = await owner
      .getByRole('list', { name: 'Audit log, newest first' })
      .getByRole('listitem')
      .evaluateAll((items) => items.map((item) => [...item.children].map((part) => part.textContent?.replace(/\s+/g, ' ').trim()).join(' — ')));
    const find = (what: RegExp, who: string) => entries.find((entry) => what.test(entry) && entry.includes(who));
    expect(find(new RegExp(`^Marked as spam: #${carl} — `), `${EDDIE.name} <${EDDIE.email}>`), entries.join('\n')).toBeDefined();
    expect(find(/^Refused \(the role cannot do this\): mark-spam — /, `${RITA.name} <${RITA.email}>`), entries.join('\n')).toBeDefined();
    expect(find(/^Signed in — /, `${RITA.name} <${RITA.email}>`), entries.join('\n')).toBeDefined();
    expect(find(new RegExp(`^Invited: ${EDDIE.email} as editor \\(contact\\) — Owner`), 'Owner'), entries.join('\n')).toBeDefined();
    expect(find(new RegExp(`^Invited: ${RITA.email} as reader \\(contact\\) — Owner`), 'Owner'), entries.join('\n')).toBeDefined();
    expect(find(/^Followed a link: joined as editor — /, EDDIE.name), entries.join('\n')).toBeDefined();
    expect(find(/^Followed a link: joined as reader — /, RITA.name), entries.join('\n')).toBeDefined();
  });

  test('the People page with its three people and an open invitation: no axe violation, and it fits 375 px', async () => {
    const owner = pages.owner;
    await loadsPage(owner, () => owner.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'People' }).click());
    await owner.getByLabel('Email').fill('a.rather.long.address.of.somebody@a-long-domain.example.org');
    await loadsPage(owner, () => owner.getByRole('button', { name: 'Invite', exact: true }).click());
    const people = owner.getByRole('table').first();
    for (const name of ['Owner', EDDIE.name, RITA.name]) await expect(people.textContent()).resolves.toContain(name);
    await expect(owner.getByRole('table').nth(1).textContent()).resolves.toContain('a.rather.long.address.of.somebody@a-long-domain.example.org');
    const { violations } = await new AxeBuilder({ page: owner }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']).analyze();
    expect(violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
    await owner.setViewportSize({ width: 375, height: 800 });
    expect(await owner.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
  });
});
