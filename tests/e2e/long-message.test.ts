import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { parseMail } from '../support/mime.ts';
import { eventually } from '../support/smtp.ts';
import { loadsPage, openPage } from './support/browser.ts';
import { type Stack, startStack } from './support/stack.ts';

/**
 * A message that fills the textarea (maxlength 5000) with line breaks, in Chromium: the
 * browser counts each line break as one character and sends it as CR LF, and the server
 * must count it the same way, with JavaScript and without.
 */
let stack: Stack;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.stop());
afterEach(() => context?.close());

/** `count` characters in lines of 100: 99 letters and a line break. */
const lines = (count: number) => `${'a'.repeat(99)}\n`.repeat(49) + 'a'.repeat(count - 4900);

async function open(javaScriptEnabled: boolean): Promise<void> {
  ({ context, page } = await openPage(stack.browser, { javaScriptEnabled }));
  await page.goto(`${stack.site.url}/contact`);
  await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
  await page.getByLabel('Email address', { exact: true }).fill('ada@example.org');
}

/** Puts `text` in the textarea as a script would, past its maxlength if it is longer. */
const setMessage = (text: string) => page.locator('#contact-message').evaluate((area, value) => ((area as HTMLTextAreaElement).value = value), text);
const button = () => page.locator('#contact-form button[type="submit"]');

describe.each([
  ['with JavaScript', true],
  ['without JavaScript', false],
])('a full textarea of line breaks, %s', (_, javaScriptEnabled) => {
  test('the browser counts 5,000 with 49 line breaks as full: typing one more character adds nothing', async () => {
    await open(javaScriptEnabled);
    await page.locator('#contact-message').fill(lines(5000));
    await page.locator('#contact-message').press('End');
    await page.keyboard.type('b');
    await expect(page.locator('#contact-message').evaluate((area) => (area as HTMLTextAreaElement).value.length)).resolves.toBe(5000);
  });

  test('5,000 characters with 49 line breaks are accepted, and the owner gets every line', async () => {
    await open(javaScriptEnabled);
    const before = stack.smtp.received.length;
    await page.locator('#contact-message').fill(lines(5000));
    if (javaScriptEnabled) {
      await button().click();
      await page.getByRole('status').getByText("Thanks for your message! We'll get back to you soon.").waitFor();
    } else {
      await expect(loadsPage(page, () => button().click())).resolves.toBe(200);
      expect(new URL(page.url()).pathname).toBe('/thank-you/contact/');
    }
    const [mail] = await eventually('the message to reach the owner', () => stack.smtp.received.length > before && stack.smtp.received.slice(before));
    expect(parseMail(mail!.raw).text).toContain(lines(5000));
  });

  test('5,001 characters with 49 line breaks are refused at the message field', async () => {
    await open(javaScriptEnabled);
    await setMessage(lines(5001));
    if (javaScriptEnabled) await button().click();
    else await expect(loadsPage(page, () => button().click())).resolves.toBe(400);
    await page.locator('#contact-message-error').getByText('Message must be at most 5000 characters').waitFor();
    await expect(page.locator('#contact-message').getAttribute('aria-invalid')).resolves.toBe('true');
  });
});
