import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { parseMail } from '../support/mime.ts';
import { eventually } from '../support/smtp.ts';
import { openPage } from './support/browser.ts';
import { MAIL, type Stack, startStack } from './support/stack.ts';
import { site as settings } from '../../packages/site-forms/src/lib/site/site.ts';

/**
 * The contact form as a visitor meets it, in Chromium with JavaScript: the message goes
 * through the real server to a real SMTP server; refusals land at their fields.
 */
let stack: Stack;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.stop());
beforeEach(async () => {
  ({ context, page } = await openPage(stack.browser));
  await page.goto(`${stack.site.url}/contact`);
});
afterEach(() => context.close());

const field = (label: string) => page.getByLabel(label, { exact: true });
const button = () => page.locator('#contact-form button[type="submit"]');
const formError = () => page.locator('#contact-form-error');
const readButton = (b: Element) => ({ disabled: (b as HTMLButtonElement).disabled, label: b.textContent });

async function fill(values: { name: string; email: string; message: string }): Promise<void> {
  await field('Name').fill(values.name);
  await field('Email address').fill(values.email);
  await field('Message').fill(values.message);
}

const valid = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello! I would like to know more about your work.' };

describe('the contact form in a real browser', () => {
  test('a valid message: Sending... while it is on its way, then the thanks, and the owner receives it by email', async () => {
    const before = stack.smtp.received.length;
    // Hold the request in the browser so the state in between can be seen.
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    await page.route('**/api/contact', async (route) => {
      await held;
      await route.continue();
    });
    await fill(valid);
    await button().click();

    await expect.poll(() => button().evaluate(readButton)).toEqual({ disabled: true, label: 'Sending...' });
    expect(page.url()).toBe(`${stack.site.url}/contact`);
    letGo();

    await page.getByRole('status').getByText("Thanks for your message! We'll get back to you soon.").waitFor();
    await expect(page.locator('#contact-form textarea').count()).resolves.toBe(0);

    const [mail] = await eventually('the message to reach the owner', () => stack.smtp.received.length > before && stack.smtp.received.slice(before));
    expect(mail!.to).toEqual([MAIL.CONTACT_TO]);
    const parsed = parseMail(mail!.raw);
    expect(parsed.header('subject')).toEqual([`[${settings.name}] New message from Ada Lovelace`]);
    expect(parsed.header('reply-to')[0]).toContain('ada@example.org');
    expect(parsed.text).toContain(valid.message);
  });

  test('fields the server refuses: each message at its field, tied to it, the focus on the first; fixing them sends', async () => {
    // What the browser lets through but the server refuses: blanks count for minlength but are trimmed.
    await fill({ name: 'A ', email: 'ada@localhost', message: 'Hi        ' });
    await button().click();

    await page.locator('#contact-name-error').getByText('Name must be between 2 and 100 characters').waitFor();
    for (const [id, message] of [
      ['contact-name', 'Name must be between 2 and 100 characters'],
      ['contact-email', 'Please enter a valid email address'],
      ['contact-message', 'Message must be at least 10 characters'],
    ] as const) {
      await expect(page.locator(`#${id}-error`).textContent()).resolves.toBe(message);
      await expect(page.locator(`#${id}`).getAttribute('aria-invalid')).resolves.toBe('true');
      await expect(page.locator(`#${id}`).getAttribute('aria-describedby')).resolves.toContain(`${id}-error`);
    }
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('contact-name');
    await expect(formError().textContent()).resolves.toBe('');
    expect(await button().evaluate(readButton)).toEqual({ disabled: false, label: 'Send message' });
    // What the visitor typed is still there to correct.
    await expect(field('Message').inputValue()).resolves.toBe('Hi        ');

    await fill(valid);
    await button().click();
    await page.getByText("Thanks for your message! We'll get back to you soon.").waitFor();
  });

  test('one refused field: only that one is marked, the earlier marks are cleared', async () => {
    await fill({ ...valid, email: 'ada@localhost' });
    await button().click();
    await page.locator('#contact-email-error').getByText('Please enter a valid email address').waitFor();
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('contact-email');
    await expect(page.locator('#contact-name').getAttribute('aria-invalid')).resolves.toBeNull();
    await expect(page.locator('#contact-message').getAttribute('aria-describedby')).resolves.toBe('contact-message-hint');
  });

  test('a bot that fills the honeypot is refused, told so in the form’s alert, and nothing is sent', async () => {
    const stored = stack.smtp.attempts();
    await fill(valid);
    // Only a script can reach the trap: it is out of sight and out of the tab order.
    await page.locator('#contact-honeypot').fill('https://spam.example', { force: true });
    await button().click();
    await formError().getByText('This field must be left empty').waitFor();
    expect(stack.smtp.attempts()).toBe(stored);
  });

  test.each<[string, (page: Page) => Promise<unknown>, string]>([
    ['the request is aborted', (p) => p.route('**/api/contact', (route) => route.abort()), 'Something went wrong. Please try again.'],
    [
      'the answer is not JSON',
      (p) => p.route('**/api/contact', (route) => route.fulfill({ status: 200, body: '<html>oops</html>', contentType: 'text/html' })),
      'Something went wrong. Please try again.',
    ],
    [
      'the server fails (500)',
      (p) => p.route('**/api/contact', (route) => route.fulfill({ status: 500, json: { success: false, error: 'Internal server error' } })),
      'Internal server error',
    ],
  ])('%s: the visitor reads why, keeps the message and can send again', async (_, breakIt, message) => {
    await breakIt(page);
    await fill(valid);
    await button().click();
    await formError().getByText(message).waitFor();
    expect(await button().evaluate(readButton)).toEqual({ disabled: false, label: 'Send message' });
    await expect(field('Message').inputValue()).resolves.toBe(valid.message);
  });
});
