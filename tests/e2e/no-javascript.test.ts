import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { replyJson } from '../support/fake-http.ts';
import { parseMail } from '../support/mime.ts';
import { eventually } from '../support/smtp.ts';
import { loadsPage, openPage } from './support/browser.ts';
import { type Site, startSite } from '../support/site.ts';
import { type Stack, startStack, SUBSCRIBED } from './support/stack.ts';
import { site as settings } from '../../packages/site-forms/src/lib/site/site.ts';

/**
 * Both forms in Chromium with JavaScript turned off: the browser posts them itself, and
 * the visitor gets pages (a thank-you page, or the form again with the messages), never JSON.
 */
let stack: Stack;
let context: BrowserContext;
let page: Page;
/** Every POST the browser sent since the page was opened: a reload that posted again would add one. */
let posts: string[];

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.stop());
beforeEach(async () => {
  stack.mailchimp.reply(SUBSCRIBED);
  stack.mailchimp.requests.length = 0;
  ({ context, page } = await openPage(stack.browser, { javaScriptEnabled: false }));
  posts = [];
  page.on('request', (request) => {
    if (request.method() === 'POST') posts.push(new URL(request.url()).pathname);
  });
});
afterEach(() => context.close());

const field = (label: string) => page.getByLabel(label, { exact: true });
const focusedId = () => page.evaluate(() => document.activeElement?.id);

/** Submits by clicking the form's button and waits for the page the browser loads. */
function submit(form: string): Promise<number> {
  return loadsPage(page, () => page.locator(`#${form} button[type="submit"]`).click());
}

/** Where the browser is: a refused post leaves it at the form's address with the draft's id (decision 0133). */
function expectDraftAddress(endpoint: string): void {
  const url = new URL(page.url());
  expect(url.pathname).toBe(endpoint);
  expect(url.search).toMatch(/^\?draft=[\w-]{32}$/);
}

/** How many messages the server stored. */
function storedCount(site: Site): number {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM submissions').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** How many form posts the server answered, by its one log line per post. */
function postsAnswered(site: Site): number {
  return site.logs.filter((line) => typeof line === 'object' && line.event === 'form.request').length;
}

/** Fails the test when the page the visitor sees is JSON rather than HTML. */
async function expectPageForPeople(): Promise<void> {
  await expect(page.locator('body').evaluate((body) => body.textContent?.trim().startsWith('{'))).resolves.toBe(false);
  await expect(page.locator('header nav').count()).resolves.toBe(1);
}

describe('the newsletter form without JavaScript', () => {
  beforeEach(() => page.goto(`${stack.site.url}/`));

  test('a valid address: the thank-you page, with a link back', async () => {
    await field('Email address').fill('reader@example.com');
    await expect(submit('newsletter-form')).resolves.toBe(200);
    expect(new URL(page.url()).pathname).toBe('/thank-you/newsletter/');
    await expectPageForPeople();
    await expect(page.locator('h1').textContent()).resolves.toBe('Thanks for subscribing!');
    await expect(page.getByRole('link', { name: 'Send another message' }).count()).resolves.toBe(0);
    expect(stack.mailchimp.requests).toHaveLength(1);

    await page.getByRole('link', { name: 'Back to the home page' }).click();
    expect(new URL(page.url()).pathname).toBe('/');
  });

  test('an address the server refuses: the form again, the message at the field, the address in place and focused', async () => {
    await field('Email address').fill('reader@localhost');
    await expect(submit('newsletter-form')).resolves.toBe(400);
    expectDraftAddress('/api/newsletter');
    await expectPageForPeople();
    await expect(page.title()).resolves.toMatch(/^Error: /);
    await expect(page.locator('#newsletter-email-error').textContent()).resolves.toBe('Please enter a valid email address');
    await expect(field('Email address').inputValue()).resolves.toBe('reader@localhost');
    await expect.poll(focusedId).toBe('newsletter-email');
    expect(stack.mailchimp.requests).toHaveLength(0);

    // Corrected, the same form posts again, from its page at /api/newsletter.
    await field('Email address').fill('reader@example.com');
    await expect(submit('newsletter-form')).resolves.toBe(200);
    expect(new URL(page.url()).pathname).toBe('/thank-you/newsletter/');
  });

  test("a busy provider: the spec's 503 as the form's page again, the error above the button and the address kept", async () => {
    stack.mailchimp.reply(replyJson(503, { title: 'Service Unavailable' }));
    await field('Email address').fill('reader@example.com');
    await expect(submit('newsletter-form')).resolves.toBe(503);
    await expect(page.locator('#newsletter-form-error').textContent()).resolves.toBe(
      'The newsletter service is busy right now. Please try again in a few minutes.',
    );
    await expect(field('Email address').inputValue()).resolves.toBe('reader@example.com');
    stack.mailchimp.reply(replyJson(200, { id: 'm', status: 'subscribed' }));
  });
});

describe('the contact form without JavaScript', () => {
  beforeEach(() => page.goto(`${stack.site.url}/contact`));

  test('a valid message: the thank-you page, and the owner receives it by email', async () => {
    const before = stack.smtp.received.length;
    await field('Name').fill('Grace Hopper');
    await field('Email address').fill('grace@example.org');
    await field('Message').fill('Sent without any JavaScript at all.');
    await expect(submit('contact-form')).resolves.toBe(200);
    expect(new URL(page.url())).toMatchObject({ pathname: '/thank-you/contact/', search: '' });
    await expectPageForPeople();
    await expect(page.locator('h1').textContent()).resolves.toBe('Thank you for your message!');
    await expect(page.getByRole('link', { name: 'Send another message' }).count()).resolves.toBe(1);

    const [mail] = await eventually('the message to reach the owner', () => stack.smtp.received.length > before && stack.smtp.received.slice(before));
    expect(parseMail(mail!.raw).header('subject')).toEqual([`[${settings.name}] New message from Grace Hopper`]);
  });

  test('fields the server refuses: the form again with each message at its field, what was typed in place, the first invalid field focused', async () => {
    const typed = { name: 'G ', email: 'grace@localhost', message: '<b>Hi</b> ' };
    await field('Name').fill(typed.name);
    await field('Email address').fill(typed.email);
    await field('Message').fill(typed.message);
    await expect(submit('contact-form')).resolves.toBe(400);
    expectDraftAddress('/api/contact');
    await expectPageForPeople();

    for (const [label, id, message, value] of [
      ['Name', 'contact-name', 'Name must be between 2 and 100 characters', typed.name],
      ['Email address', 'contact-email', 'Please enter a valid email address', typed.email],
      ['Message', 'contact-message', 'Message must be at least 10 characters', typed.message],
    ] as const) {
      await expect(page.locator(`#${id}-error`).textContent()).resolves.toBe(message);
      await expect(field(label).getAttribute('aria-describedby')).resolves.toContain(`${id}-error`);
      await expect(field(label).inputValue()).resolves.toBe(value);
    }
    await expect.poll(focusedId).toBe('contact-name');
    await expect(page.locator('#contact-honeypot').inputValue()).resolves.toBe('');

    // Corrected, the form posts again and the visitor is thanked.
    await field('Name').fill('Grace Hopper');
    await field('Email address').fill('grace@example.org');
    await field('Message').fill('Now it is long enough to send.');
    await expect(submit('contact-form')).resolves.toBe(200);
    expect(new URL(page.url()).pathname).toBe('/thank-you/contact/');
  });

  test('a filled honeypot: refused with a page, and the trap is never filled again', async () => {
    await field('Name').fill('Spam Bot');
    await field('Email address').fill('bot@example.org');
    await field('Message').fill('Buy cheap things from my website.');
    await page.locator('#contact-honeypot').fill('https://spam.example', { force: true });
    await expect(submit('contact-form')).resolves.toBe(400);
    await expectPageForPeople();
    await expect(page.locator('#contact-form-error').textContent()).resolves.toBe('This field must be left empty');
    await expect(page.locator('#contact-honeypot').inputValue()).resolves.toBe('');
    await expect(page.content()).resolves.not.toContain('spam.example');
  });
});

describe('reloading a refused form without JavaScript (Post/Redirect/Get)', () => {
  test('the newsletter’s 400: the same page again, focused, and nothing posted again', async () => {
    await page.goto(`${stack.site.url}/`);
    await field('Email address').fill('reload@localhost');
    await expect(submit('newsletter-form')).resolves.toBe(400);
    const address = page.url();
    for (let reload = 1; reload <= 2; reload++) {
      await expect(loadsPage(page, () => page.reload())).resolves.toBe(400);
      expect(page.url()).toBe(address);
      await expectPageForPeople();
      await expect(page.locator('#newsletter-email-error').textContent()).resolves.toBe('Please enter a valid email address');
      await expect(field('Email address').inputValue()).resolves.toBe('reload@localhost');
      await expect.poll(focusedId).toBe('newsletter-email');
    }
    expect(posts).toEqual(['/api/newsletter']);
    expect(stack.mailchimp.requests).toHaveLength(0);
  });

  test('the contact form’s 400: the same page again, and the server receives one post, stores nothing, mails nothing', async () => {
    await page.goto(`${stack.site.url}/contact`);
    const [stored, mailed] = [storedCount(stack.site), stack.smtp.received.length];
    // Two characters for the browser's own check, one for the server's once trimmed.
    await field('Name').fill('R ');
    await field('Email address').fill('reload@example.org');
    await field('Message').fill('Typed once, reloaded twice.');
    await expect(submit('contact-form')).resolves.toBe(400);
    await page.reload();
    await expect(loadsPage(page, () => page.reload())).resolves.toBe(400);
    expectDraftAddress('/api/contact');
    await expect(page.locator('#contact-name-error').textContent()).resolves.toBe('Name must be between 2 and 100 characters');
    await expect(field('Message').inputValue()).resolves.toBe('Typed once, reloaded twice.');
    await expect.poll(focusedId).toBe('contact-name');
    expect(posts).toEqual(['/api/contact']);
    expect(storedCount(stack.site)).toBe(stored);
    expect(stack.smtp.received.length).toBe(mailed);
  });

  test('the 429: a reload shows the refusal again and posts nothing; the server keeps the one message it accepted', async () => {
    // Every post's log line, so that the server's own count of posts can be read.
    const limited = await startSite({ RATE_LIMIT_MAX: '1', LOG_CLIENT_LINES: 'all' });
    try {
      const typed = { name: 'Grace Hopper', email: 'grace@example.org', message: 'A second message, typed with care.' };
      for (const expected of [200, 429]) {
        await page.goto(`${limited.url}/contact`);
        await field('Name').fill(typed.name);
        await field('Email address').fill(typed.email);
        await field('Message').fill(typed.message);
        await expect(submit('contact-form')).resolves.toBe(expected);
      }
      expectDraftAddress('/api/contact');
      expect([storedCount(limited), postsAnswered(limited)]).toEqual([1, 2]);
      for (let reload = 1; reload <= 2; reload++) {
        await expect(loadsPage(page, () => page.reload())).resolves.toBe(429);
        await expect(page.locator('#contact-form-error').textContent()).resolves.toBe('Too many attempts. Please try again in 10 minutes.');
        await expect.poll(focusedId).toBe('contact-form-error');
        await expect(field('Message').inputValue()).resolves.toBe(typed.message);
      }
      expect(posts).toEqual(['/api/contact', '/api/contact']);
      expect([storedCount(limited), postsAnswered(limited)]).toEqual([1, 2]);
    } finally {
      await limited.stop();
    }
  });

  test('an unknown draft (expired, or the address passed on): the empty form on its own page', async () => {
    await expect(loadsPage(page, () => page.goto(`${stack.site.url}/api/contact?draft=${'A'.repeat(32)}`))).resolves.toBe(200);
    expect(new URL(page.url()).pathname).toBe('/contact');
    await expect(page.title()).resolves.not.toMatch(/^Error: /);
    await expect(field('Name').inputValue()).resolves.toBe('');
    expect(posts).toEqual([]);
  });
});

describe('too many attempts without JavaScript', () => {
  test('the 429 page keeps what the person typed and puts the focus on the message', async () => {
    const limited = await startSite({ RATE_LIMIT_MAX: '1' });
    try {
      const typed = { name: 'Grace Hopper', email: 'grace@example.org', message: 'A second message, typed with care.' };
      for (const expected of [200, 429]) {
        await page.goto(`${limited.url}/contact`);
        await field('Name').fill(typed.name);
        await field('Email address').fill(typed.email);
        await field('Message').fill(typed.message);
        await expect(submit('contact-form')).resolves.toBe(expected);
      }
      expectDraftAddress('/api/contact');
      await expectPageForPeople();
      await expect(page.locator('#contact-form-error').textContent()).resolves.toBe('Too many attempts. Please try again in 10 minutes.');
      await expect.poll(focusedId).toBe('contact-form-error');
      await expect(field('Name').inputValue()).resolves.toBe(typed.name);
      await expect(field('Email address').inputValue()).resolves.toBe(typed.email);
      await expect(field('Message').inputValue()).resolves.toBe(typed.message);
    } finally {
      await limited.stop();
    }
  });
});
