import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { replyJson, startFakeHttpServer, type FakeHttpServer } from '../support/fake-http.ts';
import { parseMail } from '../support/mime.ts';
import { nginxAvailable, startTlsProxy, type TlsProxy } from '../support/nginx.ts';
import { type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, freePort, startSmtpServer } from '../support/smtp.ts';
import { launchChromium, loadsPage, openPage } from './support/browser.ts';
import { MAIL } from './support/stack.ts';

/**
 * The deployment of issue 11, item 1: Debian's nginx terminating HTTPS in front of the built
 * server, configured with deploy/nginx.conf, and Chromium posting both forms at https://…
 * with and without JavaScript. Before PUBLIC_URL/TRUST_PROXY, every one of these was a 403.
 */

const valid = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello over HTTPS, through nginx.' };

describe.skipIf(!nginxAvailable).each([
  ['TRUST_PROXY=1', (_: string) => ({ TRUST_PROXY: '1' })],
  ['PUBLIC_URL and TRUST_PROXY=1', (publicUrl: string) => ({ TRUST_PROXY: '1', PUBLIC_URL: publicUrl })],
])('both forms in Chromium at https:// behind nginx, with %s', (_, settings) => {
  let mailchimp: FakeHttpServer;
  let smtp: FakeSmtpServer;
  let site: Site;
  let proxy: TlsProxy;
  let browser: Browser;
  beforeAll(async () => {
    mailchimp = await startFakeHttpServer(replyJson(200, { id: 'abc', status: 'subscribed' }));
    smtp = await startSmtpServer();
    const httpsPort = await freePort();
    site = await startSite({
      MAILCHIMP_API_KEY: 'k-us1',
      MAILCHIMP_LIST_ID: 'l',
      MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0`,
      SMTP_URL: smtp.url(),
      ...MAIL,
      ...settings(`https://localhost:${httpsPort}`),
    });
    proxy = await startTlsProxy(site.url, { httpsPort });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await proxy?.stop();
    await site?.stop();
    await smtp?.close();
    await mailchimp?.close();
  });

  /** The address the visitor types: the name the certificate and PUBLIC_URL carry. */
  const home = () => proxy.url.replace('127.0.0.1', 'localhost');

  describe.each([
    ['with JavaScript', true],
    ['without JavaScript', false],
  ])('%s', (__, javaScriptEnabled) => {
    test('the newsletter form subscribes the visitor', async () => {
      const { context, page } = await openPage(browser, { javaScriptEnabled, ignoreHTTPSErrors: true });
      try {
        const before = mailchimp.requests.length;
        await page.goto(`${home()}/`);
        expect(new URL(page.url()).protocol).toBe('https:');
        await page.getByLabel('Email address', { exact: true }).fill(`reader-${javaScriptEnabled}@example.com`);
        if (javaScriptEnabled) {
          await page.locator('#newsletter-form button[type="submit"]').click();
          await page.getByRole('status').getByText('Thanks for subscribing!').waitFor();
        } else {
          await expect(loadsPage(page, () => page.locator('#newsletter-form button[type="submit"]').click())).resolves.toBe(200);
          expect(new URL(page.url())).toMatchObject({ protocol: 'https:', pathname: '/thank-you/newsletter/' });
        }
        expect(mailchimp.requests.length).toBe(before + 1);
      } finally {
        await context.close();
      }
    });

    test('the contact form sends the message to the owner', async () => {
      const { context, page } = await openPage(browser, { javaScriptEnabled, ignoreHTTPSErrors: true });
      try {
        const name = `${valid.name} ${javaScriptEnabled ? 'script' : 'page'}`;
        await page.goto(`${home()}/contact/`);
        await page.getByLabel('Name', { exact: true }).fill(name);
        await page.getByLabel('Email address', { exact: true }).fill(valid.email);
        await page.getByLabel('Message', { exact: true }).fill(valid.message);
        if (javaScriptEnabled) {
          await page.locator('#contact-form button[type="submit"]').click();
          await page.getByRole('status').getByText("Thanks for your message! We'll get back to you soon.").waitFor();
        } else {
          await expect(loadsPage(page, () => page.locator('#contact-form button[type="submit"]').click())).resolves.toBe(200);
          expect(new URL(page.url())).toMatchObject({ protocol: 'https:', pathname: '/thank-you/contact/' });
        }
        const mail = await eventually('the message by email', () => smtp.received.find((m) => parseMail(m.raw).header('subject')[0]?.endsWith(name)));
        expect(parseMail(mail.raw).text).toContain(valid.message);
      } finally {
        await context.close();
      }
    });
  });
});
