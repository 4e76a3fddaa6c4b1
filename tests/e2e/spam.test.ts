import type { BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { runInbox } from '../contact/run-inbox.ts';
import { type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';
import { launchChromium, loadsPage, openPage } from './support/browser.ts';
import { MAIL } from './support/stack.ts';

/**
 * The spam filter as visitors and bots meet it, in Chromium against the built server with
 * SPAM_FILTER on (the other browser tests turn it off) and a real SMTP server.
 */
let site: Site;
let smtp: FakeSmtpServer;
let browser: Awaited<ReturnType<typeof launchChromium>>;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  smtp = await startSmtpServer();
  site = await startSite({ SPAM_FILTER: 'on', SMTP_URL: smtp.url(), ...MAIL, DELIVERY_RETRY_BASE_MS: '200' });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await site?.stop();
  await smtp?.close();
});
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

async function visit(options: { javaScriptEnabled?: boolean } = {}): Promise<Page> {
  const { context, page } = await openPage(browser, options);
  contexts.push(context);
  await page.goto(`${site.url}/contact`);
  return page;
}

/** Types as a person does: a key at a time, about 60 ms apart. */
async function typeLikeAPerson(page: Page, values: { name: string; email: string; message: string }): Promise<void> {
  for (const [label, value] of [
    ['Name', values.name],
    ['Email address', values.email],
    ['Message', values.message],
  ] as const) {
    await page.getByLabel(label, { exact: true }).click();
    await page.getByLabel(label, { exact: true }).pressSequentially(value, { delay: 60 });
  }
}

const inbox = (...args: string[]) => runInbox(args, { DATA_DIR: site.dataDir });

/** Every message as the owner's export shows it. */
async function messages(): Promise<Array<{ id: number; name: string; status: string; spamReasons: string[] }>> {
  const run = await inbox('export', '--format', 'json');
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout);
}

const mailsTo = (name: string) => smtp.received.filter((mail) => mail.raw.includes(name)).length;

/**
 * The statuses of the messages of one sender, oldest first. Whether a message can still be sent is
 * in its status (the worker takes only a pending one), so "not sent" is read there, not waited out.
 */
const statusesOf = async (name: string) =>
  (await messages())
    .filter((m) => m.name === name)
    .map((m) => m.status)
    .reverse();

const thanks = "Thanks for your message! We'll get back to you soon.";
const clickToThanks: number[] = [];

describe('the spam filter in a real browser', () => {
  test('a person typing at human speed is delivered, and the click-to-thanks time is recorded', async () => {
    const page = await visit();
    await typeLikeAPerson(page, { name: 'Ada Human', email: 'ada@example.org', message: 'Hello! A question about your opening hours, please.' });
    const clicked = Date.now();
    await page.locator('#contact-form button[type="submit"]').click();
    await page.getByRole('status').getByText(thanks).waitFor();
    clickToThanks.push(Date.now() - clicked);
    console.info(`click to thanks: ${clickToThanks.at(-1)} ms`);

    await eventually('the message to reach the owner', () => mailsTo('Ada Human') === 1);
    const mine = (await messages()).find((m) => m.name === 'Ada Human')!;
    expect(mine).toMatchObject({ status: 'sent', spamReasons: [] });
  });

  test('a program (curl) posting the whole valid form without the page’s script is held, not emailed, and told it worked', async () => {
    const body = new FormData();
    for (const [name, value] of Object.entries({ name: 'Bot Poster', email: 'bot@example.org', message: 'Totally legitimate message here.', honeypot: '' })) {
      body.append(name, value);
    }
    const response = await fetch(`${site.url}/api/contact`, { method: 'POST', body, headers: { Accept: 'application/json' } });
    expect(response.status).toBe(200);
    await expect(response.json()).resolves.toEqual({ success: true });
    expect(mailsTo('Bot Poster')).toBe(0);
    expect((await messages()).find((m) => m.name === 'Bot Poster')).toMatchObject({ status: 'spam', spamReasons: ['proof-missing', 'no-browser'] });
  });

  test('a person’s request replayed is not delivered a second time', async () => {
    const page = await visit();
    let posted: Request | undefined;
    page.on('request', (request) => {
      if (request.url().endsWith('/api/contact')) posted = request;
    });
    await typeLikeAPerson(page, { name: 'Grace Replayed', email: 'grace@example.org', message: 'A message that someone will replay.' });
    await page.locator('#contact-form button[type="submit"]').click();
    await page.getByRole('status').getByText(thanks).waitFor();
    await eventually('the first copy to reach the owner', () => mailsTo('Grace Replayed') === 1);

    const replay = await fetch(`${site.url}/api/contact`, {
      method: 'POST',
      body: new Uint8Array(posted!.postDataBuffer()!),
      headers: { 'content-type': (await posted!.allHeaders())['content-type']!, Accept: 'application/json' },
    });
    await expect(replay.json()).resolves.toEqual({ success: true });
    // The first copy is recorded as sent just after the mail server took it; the replay is held.
    await eventually('the first copy recorded as sent', async () => (await statusesOf('Grace Replayed')).join() === 'sent,spam');
    expect(mailsTo('Grace Replayed')).toBe(1);
    const copies = (await messages()).filter((m) => m.name === 'Grace Replayed');
    expect(copies.map((m) => [m.status, m.spamReasons])).toEqual([
      ['spam', ['proof-replayed']],
      ['sent', []],
    ]);
  });

  test('a message with many links is held; released, it is delivered once', async () => {
    const page = await visit();
    await typeLikeAPerson(page, { name: 'Linky Person', email: 'linky@example.org', message: 'See https://a.test https://b.test https://c.test' });
    await page.locator('#contact-form button[type="submit"]').click();
    await page.getByRole('status').getByText(thanks).waitFor();
    expect(mailsTo('Linky Person')).toBe(0);
    const held = (await messages()).find((m) => m.name === 'Linky Person')!;
    expect(held).toMatchObject({ status: 'spam', spamReasons: ['too-many-links'] });

    const first = await inbox('release', String(held.id));
    expect(first.code).toBe(0);
    await eventually('the released message to reach the owner', () => mailsTo('Linky Person') === 1);
    await eventually('the released message recorded as sent', async () => (await statusesOf('Linky Person')).join() === 'sent');
    const again = await inbox('release', String(held.id));
    expect(again.code).toBe(1);
    await expect(statusesOf('Linky Person')).resolves.toEqual(['sent']);
    expect(mailsTo('Linky Person')).toBe(1);
  });

  test('a person without JavaScript confirms with one click, and the message reaches the owner once', async () => {
    const page = await visit({ javaScriptEnabled: false });
    await page.getByLabel('Name', { exact: true }).fill('Noscript Person');
    await page.getByLabel('Email address', { exact: true }).fill('noscript@example.org');
    await page.getByLabel('Message', { exact: true }).fill('I browse without JavaScript, hello.\nSecond line.');
    await expect(loadsPage(page, () => page.locator('#contact-form button[type="submit"]').click())).resolves.toBe(200);
    // Asked to confirm: what they sent is on the page, the focus on the question.
    await expect(page.locator('h2').textContent()).resolves.toBe('One more step: send your message?');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('confirm-title');
    await expect(page.locator('.confirm-message').textContent()).resolves.toBe('I browse without JavaScript, hello.\nSecond line.');
    expect(mailsTo('Noscript Person')).toBe(0);
    expect((await messages()).find((m) => m.name === 'Noscript Person')).toMatchObject({ status: 'spam', spamReasons: ['proof-missing'] });

    const token = (await page.locator('#confirm-form input[name="token"]').getAttribute('value'))!;
    await expect(loadsPage(page, () => page.getByRole('button', { name: 'Send my message' }).click())).resolves.toBe(200);
    expect(new URL(page.url()).pathname).toBe('/thank-you/contact/');
    await eventually('the confirmed message to reach the owner', () => mailsTo('Noscript Person') === 1);
    await eventually('the confirmed message recorded as sent', async () => (await statusesOf('Noscript Person')).join() === 'sent');

    // The button pressed again (its post replayed): the message is already on its way, and not sent twice.
    const again = await fetch(`${site.url}/api/contact/confirm`, {
      method: 'POST',
      body: new URLSearchParams({ token }),
      headers: { Accept: 'application/json' },
    });
    await expect(again.json()).resolves.toEqual({ success: true });
    await expect(statusesOf('Noscript Person')).resolves.toEqual(['sent']);
    expect(mailsTo('Noscript Person')).toBe(1);
  });

  test('a form the browser fills in, sent at once, reaches the owner', async () => {
    const page = await visit();
    // Autofill puts every value in place without a key press, and the person sends at once.
    await page.getByLabel('Name', { exact: true }).fill('Autofill Person');
    await page.getByLabel('Email address', { exact: true }).fill('autofill@example.org');
    await page.getByLabel('Message', { exact: true }).fill('Filled by the browser and sent straight away.');
    await page.locator('#contact-form button[type="submit"]').click();
    await page.getByRole('status').getByText(thanks).waitFor();
    await eventually('the message to reach the owner', () => mailsTo('Autofill Person') === 1);
    expect((await messages()).find((m) => m.name === 'Autofill Person')).toMatchObject({ status: 'sent' });
  });
});

describe('the newsletter with NEWSLETTER_REQUIRE_PROOF=true', () => {
  let guarded: Site;
  beforeAll(async () => {
    guarded = await startSite({ SPAM_FILTER: 'on', NEWSLETTER_REQUIRE_PROOF: 'true' });
  });
  afterAll(() => guarded?.stop());

  const PROOF_ERROR = 'We could not confirm that this came from our signup form. Please turn on JavaScript for this site, reload the page and try again.';

  test('a person with JavaScript subscribes without noticing', async () => {
    const { context, page } = await openPage(browser);
    contexts.push(context);
    await page.goto(`${guarded.url}/`);
    await page.getByLabel('Email address', { exact: true }).pressSequentially('ada@example.org', { delay: 30 });
    await page.locator('#newsletter-form button[type="submit"]').click();
    await page.getByRole('status').getByText('Thanks for subscribing!').waitFor();
  });

  test('a program without the proof gets 400 JSON with the error', async () => {
    const body = new FormData();
    body.append('email', 'victim@example.org');
    const response = await fetch(`${guarded.url}/api/newsletter`, { method: 'POST', body, headers: { Accept: 'application/json' } });
    expect(response.status).toBe(400);
    await expect(response.json()).resolves.toEqual({ success: false, error: PROOF_ERROR });
  });

  test('a person without JavaScript is told on the page what to do', async () => {
    const { context, page } = await openPage(browser, { javaScriptEnabled: false });
    contexts.push(context);
    await page.goto(`${guarded.url}/`);
    await page.getByLabel('Email address', { exact: true }).fill('noscript@example.org');
    const status = await loadsPage(page, () => page.locator('#newsletter-form button[type="submit"]').click());
    expect(status).toBe(400);
    await expect(page.locator('#newsletter-form').textContent()).resolves.toContain(PROOF_ERROR);
  });
});
