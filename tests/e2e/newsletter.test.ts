import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { replyJson } from '../support/fake-http.ts';
import { openPage } from './support/browser.ts';
import { holdReplies, type Stack, startStack, SUBSCRIBED } from './support/stack.ts';

/**
 * The newsletter form as a visitor meets it, in Chromium with JavaScript: every rule of
 * SPEC.md 4.3 through real typing and clicks, the states in between, and the failures.
 */
let stack: Stack;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.stop());
beforeEach(async () => {
  stack.mailchimp.reply(SUBSCRIBED);
  stack.mailchimp.requests.length = 0;
  ({ context, page } = await openPage(stack.browser));
  await page.goto(`${stack.site.url}/`);
});
afterEach(() => context.close());

const email = () => page.getByLabel('Email address');
const button = () => page.locator('#newsletter-form button[type="submit"]');
const formError = () => page.locator('#newsletter-form-error');
const fieldError = () => page.locator('#newsletter-email-error');

/** What a visitor can tell about a button: whether it takes a click, and what it says. */
const readButton = (b: Element) => ({ disabled: (b as HTMLButtonElement).disabled, label: b.textContent });
const buttonState = () => button().evaluate(readButton);

describe('the newsletter form in a real browser (SPEC.md 4.3)', () => {
  test('rules 1-3 and 6: Subscribing... on a disabled button while the provider is slow, then the thanks in place of the form', async () => {
    const held = holdReplies();
    stack.mailchimp.reply(held.reply);
    await email().fill('reader@example.com');
    const sent = page.waitForRequest('**/api/newsletter');
    const handle = await button().elementHandle();
    await button().click();

    // Rule 2: a POST of the form's data to /api/newsletter, asking for JSON.
    const request = await sent;
    expect(request.method()).toBe('POST');
    expect(request.headers()['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(request.headers().accept).toBe('application/json');
    expect(request.postData()).toContain('reader@example.com');

    // Rule 1, while the provider holds the answer: no page load, the button disabled and relabelled.
    await expect.poll(() => stack.mailchimp.requests.length).toBe(1);
    expect(await buttonState()).toEqual({ disabled: true, label: 'Subscribing...' });
    expect(page.url()).toBe(`${stack.site.url}/`);

    held.release();
    // Rule 3: the form's content is replaced by the thanks, in its live region.
    await page.getByRole('status').getByText('Thanks for subscribing!').waitFor();
    expect(await page.locator('#newsletter-form').evaluate((form) => form.textContent?.trim())).toBe('Thanks for subscribing!');
    await expect(page.locator('#newsletter-form input').count()).resolves.toBe(0);
    // Rule 6: the button, now out of the page, was enabled again and given its label back.
    expect(await handle!.evaluate(readButton)).toEqual({ disabled: false, label: 'Subscribe' });
    expect(JSON.parse(stack.mailchimp.requests[0]!.body)).toEqual({ email_address: 'reader@example.com', status: 'subscribed' });
  });

  test('rule 4: an address the server refuses shows its error at the field, as without JavaScript; the button and the address come back', async () => {
    // The browser accepts a domain without a dot; the server's rule does not.
    await email().fill('reader@localhost');
    await button().click();
    await fieldError().getByText('Please enter a valid email address').waitFor();
    await expect(email().getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(email().getAttribute('aria-describedby')).resolves.toBe('newsletter-email-error');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('newsletter-email');
    await expect(formError().textContent()).resolves.toBe('');
    expect(await buttonState()).toEqual({ disabled: false, label: 'Subscribe' });
    await expect(email().inputValue()).resolves.toBe('reader@localhost');
    expect(stack.mailchimp.requests).toHaveLength(0);

    // Corrected, the mark goes away with the next submit.
    await email().fill('reader@example.com');
    await button().click();
    await page.getByRole('status').getByText('Thanks for subscribing!').waitFor();
  });

  test('rule 4: an address the provider will not add again shows the provider’s reason at the field', async () => {
    stack.mailchimp.reply(replyJson(400, { title: 'Member In Compliance State', status: 400 }));
    await email().fill('gone@example.com');
    await button().click();
    await fieldError()
      .getByText(/unsubscribed earlier/)
      .waitFor();
    await expect(email().getAttribute('aria-invalid')).resolves.toBe('true');
    expect(await buttonState()).toEqual({ disabled: false, label: 'Subscribe' });
  });

  test("a provider that stays busy: the spec's failure, and the visitor is asked to try again in a few minutes with the address kept", async () => {
    stack.mailchimp.reply(replyJson(503, { title: 'Service Unavailable' }));
    await email().fill('reader@example.com');
    await button().click();
    await formError().getByText('The newsletter service is busy right now. Please try again in a few minutes.').waitFor();
    expect(await buttonState()).toEqual({ disabled: false, label: 'Subscribe' });
    await expect(email().inputValue()).resolves.toBe('reader@example.com');
    stack.mailchimp.reply(SUBSCRIBED);
  });

  test('rule 4: a 503 as the contract writes it: the visitor is asked to try again in a few minutes', async () => {
    await page.route('**/api/newsletter', (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        headers: { 'retry-after': '120' },
        body: JSON.stringify({ success: false, error: 'The newsletter service is busy right now. Please try again in a few minutes.' }),
      }),
    );
    await email().fill('reader@example.com');
    await button().click();
    await formError()
      .getByText(/try again in a few minutes/)
      .waitFor();
    expect(await buttonState()).toEqual({ disabled: false, label: 'Subscribe' });
  });

  test.each<[string, (page: Page) => Promise<unknown>]>([
    ['the request is aborted', (p) => p.route('**/api/newsletter', (route) => route.abort())],
    [
      'the answer is not JSON',
      (p) => p.route('**/api/newsletter', (route) => route.fulfill({ status: 200, body: '<html>oops</html>', contentType: 'text/html' })),
    ],
  ])('rule 5: %s: Something went wrong, and the button comes back', async (_, breakIt) => {
    await breakIt(page);
    await email().fill('reader@example.com');
    await button().click();
    await formError().getByText('Something went wrong. Please try again.').waitFor();
    expect(await buttonState()).toEqual({ disabled: false, label: 'Subscribe' });
    expect(page.url()).toBe(`${stack.site.url}/`);
  });

  test('a second try after an error clears the old message and succeeds', async () => {
    await page.route('**/api/newsletter', (route) => route.abort(), { times: 1 });
    await email().fill('reader@example.com');
    await button().click();
    await formError().getByText('Something went wrong. Please try again.').waitFor();

    const held = holdReplies();
    stack.mailchimp.reply(held.reply);
    // Enter in the field submits the form, as the button does.
    await email().press('Enter');
    await expect.poll(() => stack.mailchimp.requests.length).toBe(1);
    await expect(formError().textContent()).resolves.toBe('');
    held.release();
    await page.getByText('Thanks for subscribing!').waitFor();
  });

  test('the browser’s own checks stop an empty or malformed address before any request', async () => {
    let posted = 0;
    page.on('request', (request) => void (request.url().endsWith('/api/newsletter') && posted++));
    for (const value of ['', 'not-an-email']) {
      await email().fill(value);
      await button().click();
      await expect(email().evaluate((input: HTMLInputElement) => input.validity.valid)).resolves.toBe(false);
    }
    expect(posted).toBe(0);
  });
});
