import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type FakeHttpServer, startFakeHttpServer } from '../support/fake-http.ts';
import { loadsPage, openPage } from './support/browser.ts';
import { type Stack, startStack, SUBSCRIBED } from './support/stack.ts';

/**
 * The site's Content-Security-Policy as Chromium enforces it (issue 11, item 6): no page
 * reports a violation, the forms' script and the styles still work, and no other site can
 * frame a page.
 */
let stack: Stack;
let context: BrowserContext;
let page: Page;
/** Every violation Chromium reported, from the page's event and from its console. */
let violations: string[];

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.stop());

async function open(javaScriptEnabled: boolean): Promise<void> {
  ({ context, page } = await openPage(stack.browser, { javaScriptEnabled }));
  violations = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  if (javaScriptEnabled) {
    await context.exposeFunction('reportViolation', (text: string) => violations.push(text));
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        (window as unknown as { reportViolation(text: string): void }).reportViolation(`${event.violatedDirective} ${event.blockedURI}`);
      });
    });
  }
}
afterEach(() => context?.close());

/** Whether the site's stylesheet applied: the skip link waits above the page until focused. */
const stylesApplied = () => page.locator('.skip-link').evaluate((link) => getComputedStyle(link).position === 'absolute');

describe('with JavaScript', () => {
  beforeEach(async () => {
    stack.mailchimp.reply(SUBSCRIBED);
    await open(true);
  });

  test.each(['/', '/contact/', '/thank-you/', '/thank-you/contact/', '/thank-you/newsletter/', '/no-such-page'])(
    '%s loads with its styles and no violation',
    async (path) => {
      await page.goto(`${stack.site.url}${path}`);
      await page.waitForLoadState('load');
      await expect(stylesApplied()).resolves.toBe(true);
      expect(violations).toEqual([]);
    },
  );

  test("the newsletter form's script runs: the thanks replace the form in place", async () => {
    await page.goto(`${stack.site.url}/`);
    await page.getByLabel('Email address', { exact: true }).fill('csp@example.com');
    await page.locator('#newsletter-form button[type="submit"]').click();
    await page.getByRole('status').getByText('Thanks for subscribing!').waitFor();
    expect(new URL(page.url()).pathname).toBe('/');
    expect(violations).toEqual([]);
  });

  test("the contact form's script runs: the thanks in place, no page load", async () => {
    await page.goto(`${stack.site.url}/contact/`);
    await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
    await page.getByLabel('Email address', { exact: true }).fill('ada@example.com');
    await page.getByLabel('Message', { exact: true }).fill('Checking the content security policy.');
    await page.locator('#contact-form button[type="submit"]').click();
    await page.getByRole('status').getByText("Thanks for your message! We'll get back to you soon.").waitFor();
    expect(new URL(page.url()).pathname).toBe('/contact/');
    expect(violations).toEqual([]);
  });

  test('an inline script injected into a page is refused (the policy is in force)', async () => {
    await page.goto(`${stack.site.url}/`);
    const ran = await page.evaluate(async () => {
      // The refusal is an event of its own; an inline script allowed would have run within append.
      const refused = new Promise((resolve) => document.addEventListener('securitypolicyviolation', resolve, { once: true }));
      const script = document.createElement('script');
      script.textContent = 'window.injected = true;';
      document.body.append(script);
      await refused;
      return (window as unknown as { injected?: boolean }).injected === true;
    });
    expect(ran).toBe(false);
    await expect.poll(() => violations.some((v) => v.startsWith('script-src'))).toBe(true);
  });
});

describe('without JavaScript', () => {
  beforeEach(() => open(false));

  test('the page that shows the form again after a refused post has its styles and no violation', async () => {
    await page.goto(`${stack.site.url}/contact/`);
    // What the browser lets through and the server refuses: a name of one letter and a space.
    await page.getByLabel('Name', { exact: true }).fill('G ');
    await page.getByLabel('Email address', { exact: true }).fill('ada@example.com');
    await page.getByLabel('Message', { exact: true }).fill('Long enough to pass the browser.');
    await expect(loadsPage(page, () => page.locator('#contact-form button[type="submit"]').click())).resolves.toBe(400);
    await expect(stylesApplied()).resolves.toBe(true);
    expect(violations).toEqual([]);
  });
});

describe('framing', () => {
  let framer: FakeHttpServer;
  beforeAll(async () => {
    framer = await startFakeHttpServer((_, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>framer</title><iframe name="site" src="${stack.site.url}/contact/"></iframe>`);
    });
  });
  afterAll(() => framer?.close());
  beforeEach(() => open(true));

  test('another website cannot show a page of the site in a frame', async () => {
    const answered = page.waitForResponse((response) => response.url().startsWith(stack.site.url));
    await page.goto(framer.url);
    await answered;
    const frame = page.frame({ name: 'site' });
    // Chromium replaces a refused frame by its own error page: the form never shows.
    await expect.poll(async () => frame?.locator('#contact-form').count()).toBe(0);
    await expect.poll(() => violations.some((v) => /frame-ancestors/.test(v))).toBe(true);
  });
});
