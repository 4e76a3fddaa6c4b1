import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { buildOwnerSite } from '../support/build-site.ts';
import { type Site, startSite } from '../support/site.ts';
import { launchChromium, openPage } from './support/browser.ts';

/**
 * Forms for any static site (issue 29, item 3), in Chromium: the owner's plain HTML page, served
 * by a node:http server on another port (another origin, listed in ALLOWED_ORIGINS), holds the
 * contact form, the newsletter form and an owner's form (docs/examples/quote) posting to this
 * server, with `_next` and the /forms.js script tag as the README gives them. With JavaScript the
 * proof is solved and the thanks appear in the page; without, the visitor lands on the owner's
 * thank-you page, and a refused post keeps what was typed.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXAMPLE = join(ROOT, 'docs/examples/quote');

let built: ReturnType<typeof buildOwnerSite>;
let site: Site;
let owner: Server;
let ownerUrl: string;
/** A site the forms server does not allow: the owner's page copied to another origin (a forgotten `www.`, say). */
let stranger: Server;
let strangerUrl: string;
let browser: Browser;
/** A page of the owner's whose forms carry a `_next` on no allowed origin. */
const ELSEWHERE = '/elsewhere.html';
const contexts: BrowserContext[] = [];

/**
 * The owner's page: plain markup of their own, nothing of ours but the action, `_next` and the script tag;
 * `thanks` is where `_next` points (the owner's page, or one on no allowed origin).
 */
function ownerPage(forms: string, thanks = `${ownerUrl}/thanks.html`): string {
  const next = (form: string) => `<input type="hidden" name="_next" value="${thanks}?form=${form}">`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Werkstatt</title>
<script src="${forms}/forms.js" defer></script></head>
<body><h1>Our own site</h1>
<form method="post" action="${forms}/api/contact" novalidate>
  <label for="name">Your name</label><input id="name" name="name">
  <label for="email">Your email</label><input id="email" name="email" type="email">
  <label for="message">Your message</label><textarea id="message" name="message"></textarea>
  ${next('contact')}
  <button type="submit">Send message</button>
</form>
<form method="post" action="${forms}/api/newsletter" novalidate>
  <label for="news-email">Newsletter email</label><input id="news-email" name="email" type="email">
  ${next('newsletter')}
  <button type="submit">Subscribe</button>
</form>
<form method="post" action="${forms}/api/forms/quote" novalidate>
  <label for="q-name">Quote name</label><input id="q-name" name="name">
  <label for="q-email">Quote email</label><input id="q-email" name="email" type="email">
  <label for="q-topic">Topic</label><select id="q-topic" name="topic"><option value="table">A table</option></select>
  <label for="q-budget">Budget</label><input id="q-budget" name="budget" type="number">
  <label for="q-details">Details</label><textarea id="q-details" name="details"></textarea>
  <label><input name="consent" type="checkbox" value="yes"> Keep my details</label>
  ${next('quote')}
  <button>Ask for a quote</button>
</form>
</body></html>`;
}

beforeAll(async () => {
  built = buildOwnerSite(`headless-${process.pid}`, {
    'src/forms/quote.form.ts': readFileSync(join(EXAMPLE, 'quote.form.ts'), 'utf8'),
    'src/pages/quote.astro': readFileSync(join(EXAMPLE, 'quote.astro'), 'utf8'),
    'forms.config.ts': readFileSync(join(EXAMPLE, 'forms.config.ts'), 'utf8'),
  });
  // The owner's static site first: its origin is what the forms server allows.
  let formsUrl = '';
  owner = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const html =
      path === '/thanks.html'
        ? '<!doctype html><html lang="en"><title>Thanks</title><h1>Thank you, from our own site</h1></html>'
        : path === ELSEWHERE
          ? ownerPage(formsUrl, 'https://evil.test/thanks.html')
          : ownerPage(formsUrl);
    // The page with a `_next` on no allowed origin sends its whole address as the Referer, so the way back can name it.
    const policy = path === ELSEWHERE ? { 'referrer-policy': 'unsafe-url' } : {};
    res.writeHead(path === '/' || path === '/thanks.html' || path === ELSEWHERE ? 200 : 404, { 'content-type': 'text/html; charset=utf-8', ...policy });
    res.end(html);
  });
  await new Promise<void>((resolve) => owner.listen(0, '127.0.0.1', resolve));
  ownerUrl = `http://127.0.0.1:${(owner.address() as AddressInfo).port}`;
  stranger = createServer((_, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(ownerPage(formsUrl));
  });
  await new Promise<void>((resolve) => stranger.listen(0, '127.0.0.1', resolve));
  strangerUrl = `http://127.0.0.1:${(stranger.address() as AddressInfo).port}`;
  site = await startSite({ SPAM_FILTER: 'on', ALLOWED_ORIGINS: ownerUrl }, { start: built.start });
  formsUrl = site.url;
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await site?.stop();
  await new Promise((resolve) => owner?.close(resolve));
  await new Promise((resolve) => stranger?.close(resolve));
  built?.remove();
});

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

async function visit(javaScriptEnabled: boolean, path = '/'): Promise<Page> {
  const { context, page } = await openPage(browser, { javaScriptEnabled });
  contexts.push(context);
  await page.goto(`${ownerUrl}${path}`);
  return page;
}

function stored(name: string): Array<{ form: string; status: string; fields: string | null }> {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    return db.prepare('SELECT form, status, fields FROM submissions WHERE name = ? ORDER BY id').all(name) as Array<{
      form: string;
      status: string;
      fields: string | null;
    }>;
  } finally {
    db.close();
  }
}

describe('with JavaScript: /forms.js', () => {
  test('the contact form: the field’s error at the field, then the proof solved and the owner’s thank-you page (`_next`)', async () => {
    const page = await visit(true);
    await page.getByLabel('Your name').fill('Script Visitor');
    await page.getByLabel('Your email').fill('not an address');
    await page.getByLabel('Your message').fill('Written on the owner’s own static site.');
    await page.getByRole('button', { name: 'Send message' }).click();
    const email = page.getByLabel('Your email');
    await expect.poll(() => email.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('[data-error-for="email"]').first().textContent()).toBe('Please enter a valid email address');
    expect(page.url()).toBe(`${ownerUrl}/`);

    await email.fill('script@example.org');
    await page.getByRole('button', { name: 'Send message' }).click();
    // The owner's own thank-you page (and their conversion tracking), as without JavaScript (issue 39 item 9a).
    await page.waitForURL(`${ownerUrl}/thanks.html?form=contact`);
    // Not held: the proof came with it (SPAM_FILTER=on holds a message without one).
    await expect.poll(() => stored('Script Visitor').map((row) => row.status)).toEqual([expect.stringMatching(/^(pending|sent|failed)$/)]);
  });

  test('the newsletter form and the owner’s form: each on to the owner’s thank-you page its `_next` names', async () => {
    let page = await visit(true);
    await page.getByLabel('Newsletter email').fill('reader@example.org');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.waitForURL(`${ownerUrl}/thanks.html?form=newsletter`);

    page = await visit(true);

    await page.getByLabel('Quote name').fill('Quote Script');
    await page.getByLabel('Quote email').fill('quote@example.org');
    await page.getByLabel('Budget', { exact: true }).fill('1200');
    await page.getByLabel('Details', { exact: true }).fill('An oak table, 2 m long, by March.');
    await page.getByLabel('Keep my details').check();
    await page.getByRole('button', { name: 'Ask for a quote' }).click();
    await page.waitForURL(`${ownerUrl}/thanks.html?form=quote`);
    await expect.poll(() => stored('Quote Script').map((row) => [row.form, row.status])).toEqual([['quote', expect.stringMatching(/^(pending|sent|failed)$/)]]);
  });

  test('a `_next` on no allowed origin is not followed: the form’s own thanks in the page', async () => {
    const page = await visit(true, ELSEWHERE);
    await page.getByLabel('Quote name').fill('Quote Elsewhere');
    await page.getByLabel('Quote email').fill('elsewhere@example.org');
    await page.getByLabel('Budget', { exact: true }).fill('300');
    await page.getByLabel('Details', { exact: true }).fill('A stool, nothing more.');
    await page.getByLabel('Keep my details').check();
    await page.getByRole('button', { name: 'Ask for a quote' }).click();
    // The quote form's own thanks (docs/examples/quote), which the build put into /forms.js.
    await page.getByText('Thank you! We will send you a quote within two working days.').waitFor();
    expect(page.url()).toBe(`${ownerUrl}${ELSEWHERE}`);
  });
});

describe('without JavaScript: `_next`', () => {
  test('a `_next` on no allowed origin: this server’s thank-you page, whose only link leads back to the page the form was on', async () => {
    const page = await visit(false, ELSEWHERE);
    await page.getByLabel('Newsletter email').fill('elsewhere@example.org');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.waitForURL(new RegExp(`^${site.url}/thank-you/newsletter/`));
    await page.getByRole('heading', { name: 'Thanks for subscribing!' }).waitFor();
    // None of the starter's menu (its home, its contact page): the visitor's site is the owner's (issue 39 item 9d).
    const hrefs = await page.locator('a[href]:not([href^="#"])').evaluateAll((links) => links.map((link) => link.getAttribute('href')));
    expect(hrefs).toEqual([`${ownerUrl}${ELSEWHERE}`]);
    await expect(page.getByRole('navigation').count()).resolves.toBe(0);
    await page.getByRole('link', { name: `Back to ${new URL(ownerUrl).host}` }).click();
    await page.waitForURL(`${ownerUrl}${ELSEWHERE}`);
  });

  test('the newsletter form lands on the owner’s thank-you page', async () => {
    const page = await visit(false);
    await page.getByLabel('Newsletter email').fill('plain@example.org');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.waitForURL(`${ownerUrl}/thanks.html?form=newsletter`);
    await page.getByText('Thank you, from our own site').waitFor();
  });

  test('the contact form: asked to confirm on this server (no proof), then on the owner’s thank-you page', async () => {
    const page = await visit(false);
    await page.getByLabel('Your name').fill('Plain Visitor');
    await page.getByLabel('Your email').fill('plain@example.org');
    await page.getByLabel('Your message').fill('Sent without any JavaScript at all.');
    await page.getByRole('button', { name: 'Send message' }).click();
    await page.waitForURL(/\/api\/contact\?draft=/);
    expect(await page.getByRole('link', { name: 'Write a new message' }).getAttribute('href')).toBe(`${ownerUrl}/`);
    await page.locator('#confirm-form button[type="submit"]').click();
    await page.waitForURL(`${ownerUrl}/thanks.html?form=contact`);
    expect(stored('Plain Visitor').map((row) => row.status)).toEqual([expect.stringMatching(/^(pending|sent|failed)$/)]);
  });

  test('a refused post: this server’s page with what was typed and a link back; corrected, the owner’s page', async () => {
    const page = await visit(false);
    await page.getByLabel('Quote name').fill('Quote Plain');
    await page.getByLabel('Quote email').fill('not an address');
    await page.getByLabel('Budget', { exact: true }).fill('900');
    await page.getByLabel('Details', { exact: true }).fill('Four chairs to go with the table.');
    await page.getByLabel('Keep my details').check();
    await page.getByRole('button', { name: 'Ask for a quote' }).click();
    await page.waitForURL(/\/api\/forms\/quote\?draft=/);
    expect(await page.getByLabel('Details', { exact: true }).inputValue()).toBe('Four chairs to go with the table.');
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Quote Plain');
    const back = page.getByRole('link', { name: `Back to ${new URL(ownerUrl).host}` });
    expect(await back.getAttribute('href')).toBe(`${ownerUrl}/`);

    await page.getByLabel('Email address', { exact: true }).fill('plain-quote@example.org');
    await page.getByLabel('You may keep my details to prepare the quote.').check();
    await page.getByRole('button', { name: 'Ask for a quote' }).click();
    // Held for want of a proof: confirmed with one press, then the owner's page (the CSP's form-action lets the redirect go there).
    await page.locator('#confirm-form button[type="submit"]').click();
    await page.waitForURL(`${ownerUrl}/thanks.html?form=quote`);
  });
});

describe('a page on an origin that is not allowed (issue 39 item 9c)', () => {
  test('with JavaScript and without: refused, and logged once as form.origin_refused with that origin', async () => {
    const refused = () => site.logs.filter((line) => typeof line === 'object' && line.event === 'form.origin_refused');
    expect(refused()).toEqual([]);
    for (const javaScriptEnabled of [true, false]) {
      const { context, page } = await openPage(browser, { javaScriptEnabled });
      contexts.push(context);
      await page.goto(`${strangerUrl}/`);
      await page.getByLabel('Newsletter email').fill('stranger@example.org');
      await page.getByRole('button', { name: 'Subscribe' }).click();
      if (javaScriptEnabled) await page.getByText('Something went wrong. Please try again.').waitFor();
      else await page.getByText('Forms on this site cannot be posted from another website').first().waitFor();
      await expect.poll(() => refused().length).toBe(1);
    }
    // The second refusal of the same client within the minute is counted, not written (LOG_CLIENT_LINES=limited).
    expect(refused()).toEqual([expect.objectContaining({ level: 'warn', route: '/api/newsletter', origin: strangerUrl })]);
  });
});
