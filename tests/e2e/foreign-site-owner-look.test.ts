import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { type ForeignServer, type ForeignSite, makeForeignSite, SHOP_FONT, SHOP_NAME } from '../support/foreign-site.ts';
import { freePort, startSmtpServer, type FakeSmtpServer } from '../support/smtp.ts';
import { launchChromium, loadsPage, openPage } from './support/browser.ts';

/**
 * The forms on a site that looks like the ones owners have (issue 39, items 2 to 5 and 10): the
 * coffee roaster's shop (tests/support/foreign-site.ts) with Astro's fonts (an inline `<style>`
 * from `<Font />`), a global stylesheet, an article layout that cannot do without `pubDate` (as
 * Astro's blog example has it), the contact form on its about page and no /contact page. Built
 * twice: with its own layout for our pages, and with the article layout (`dist-post`).
 */

const PASSWORD = 'correct horse battery staple';
/** The build whose pages take the article layout, which needs a `pubDate` our pages never pass. */
const POST_BUILD = 'dist-post';

let shop: ForeignSite;
let browser: Browser;
let smtp: FakeSmtpServer;
let server: ForeignServer;
let post: ForeignServer;

beforeAll(async () => {
  shop = makeForeignSite(['standalone'], { [POST_BUILD]: { env: { SHOP_FORMS_LAYOUT: './src/layouts/Post.astro' } } });
  shop.writeDotEnv({ ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD), CONTACT_TO: 'inhaber@lindner.example', CONTACT_FROM: 'website@lindner.example' });
  browser = await launchChromium();
  smtp = await startSmtpServer();
  const env = async () => {
    const port = await freePort();
    return {
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      SMTP_URL: smtp.url(),
      SPAM_FILTER: 'on',
      RATE_LIMIT_MAX: '0',
      NEWSLETTER_PROVIDER: 'local',
    };
  };
  server = await shop.start(await env());
  post = await shop.start(await env(), { outDir: POST_BUILD });
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await post?.stop();
  await smtp?.close();
  shop?.remove();
});

/** Whether any pixel of the element can be seen: shown by its styles, and with a box on the page. */
function canBeSeen(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).evaluate((element) => {
    const box = element.getBoundingClientRect();
    const shown = element.checkVisibility({ opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true });
    const clip = getComputedStyle(element.parentElement!).clipPath;
    const onPage = box.right > 0 && box.bottom > 0 && box.width * box.height > 1;
    return shown && onPage && !clip.startsWith('inset(50%');
  });
}

/** The computed value of a CSS property of the first element `selector` finds. */
function computed(page: Page, selector: string, property: string): Promise<string> {
  return page
    .locator(selector)
    .first()
    .evaluate((element, name) => getComputedStyle(element).getPropertyValue(name), property);
}

/** What the browser reports of Content-Security-Policy refusals while the page loads. */
function cspReports(page: Page): string[] {
  const reports: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) reports.push(message.text());
  });
  return reports;
}

describe.each([
  ['with JavaScript', true],
  ['without JavaScript', false],
])('the forms in the shop’s look (item 2), %s', (_, javaScript) => {
  test('the spam trap is hidden on the about page and in the footer, and out of the accessibility tree', async () => {
    const { context, page } = await openPage(browser, { javaScriptEnabled: javaScript });
    try {
      // The contact form on the about page, the owner's own form on its page (the newsletter form has no trap).
      for (const [path, form] of [
        ['/ueber-uns', 'contact'],
        ['/callback', 'callback'],
      ] as const) {
        await page.goto(`${server.url}${path}`);
        await expect(page.locator(`#${form}-honeypot`).count()).resolves.toBe(1);
        await expect(canBeSeen(page, `#${form}-honeypot`)).resolves.toBe(false);
        await expect(canBeSeen(page, `label[for="${form}-honeypot"]`)).resolves.toBe(false);
        await expect(page.locator(`#${form}-form`).ariaSnapshot()).resolves.not.toContain('Dieses Feld leer lassen');
      }
    } finally {
      await context.close();
    }
  });

  test('the forms’ own stylesheet is applied: fields in the shop’s font, errors set apart from the text', async () => {
    const { context, page } = await openPage(browser, { javaScriptEnabled: javaScript });
    try {
      const reports = cspReports(page);
      await page.goto(`${server.url}/ueber-uns`);
      const bodyFont = await computed(page, 'body', 'font-family');
      expect(bodyFont).toContain(SHOP_FONT);
      // Browsers give fields their own font: only the forms' stylesheet makes them take the page's.
      for (const field of ['#contact-name', '#contact-message', '#newsletter-email', '#contact-form button[type="submit"]'])
        await expect(computed(page, field, 'font-family')).resolves.toBe(bodyFont);
      const form = page.locator('#contact-form');
      await form.getByLabel('Name', { exact: true }).fill('Greta Fehler');
      await form.getByLabel('E-Mail-Adresse', { exact: true }).fill('greta@example.org');
      // Ten characters for the browser's own check, six for the server's once trimmed.
      await form.getByLabel('Nachricht', { exact: true }).fill('Hallo!    ');
      if (javaScript) {
        await form.getByRole('button', { name: 'Nachricht senden', exact: true }).click();
        await expect.poll(() => page.locator('#contact-message-error').textContent(), { timeout: 20_000 }).not.toBe('');
      } else {
        await expect(loadsPage(page, () => form.getByRole('button', { name: 'Nachricht senden', exact: true }).click())).resolves.toBe(400);
        // Our page now (the refused post's, at /api/contact?draft=…): the shop's font, under our CSP.
        expect(new URL(page.url()).pathname).toBe('/api/contact');
        await expect(computed(page, 'body', 'font-family')).resolves.toContain(SHOP_FONT);
        await expect(computed(page, '#contact-message', 'font-family')).resolves.toContain(SHOP_FONT);
      }
      const text = await computed(page, 'main p', 'color');
      await expect(computed(page, '#contact-message-error', 'color')).resolves.not.toBe(text);
      await expect(computed(page, '#contact-message-error', 'color')).resolves.not.toBe(await computed(page, 'body', 'color'));
      // The guide's picture (docs/guide.md, "The forms' look"): the about page, the error at its field.
      if (javaScript && process.env.DOCS_SCREENSHOT === '1') {
        await page.locator('#contact-form').scrollIntoViewIfNeeded();
        await page.screenshot({ path: fileURLToPath(new URL('../../docs/screenshots/forms-in-owner-layout.png', import.meta.url)), fullPage: true });
      }
      expect(reports).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe.each([
  ['with JavaScript', true],
  ['without JavaScript', false],
])('our pages in the shop’s layout with Astro’s fonts (item 5), %s', (_, javaScript) => {
  test('the thank-you page is set in the shop’s font, and the browser refuses nothing', async () => {
    const { context, page } = await openPage(browser, { javaScriptEnabled: javaScript });
    try {
      const reports = cspReports(page);
      await page.goto(`${server.url}/thank-you/contact/`);
      await expect(page.locator('h1').textContent()).resolves.toBe('Danke für Ihre Nachricht!');
      await expect(computed(page, 'body', 'font-family')).resolves.toContain(SHOP_FONT);
      await expect(computed(page, 'h1', 'font-family')).resolves.toContain(SHOP_FONT);
      expect(reports).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

/** Every link of the page open in `page`, on the shop's own origin, as absolute addresses. */
async function linksOf(page: Page, origin: string): Promise<string[]> {
  const hrefs = await page.locator('a[href]').evaluateAll((anchors) => anchors.map((anchor) => (anchor as HTMLAnchorElement).href));
  return [...new Set(hrefs.filter((href) => new URL(href).origin === origin).map((href) => href.split('#')[0]!))];
}

describe('every link on the pages we render leads to a page that exists (item 4)', () => {
  test('thank-you, newsletter, refusal and confirmation pages, and the admin: no link answers 404', async () => {
    const { context, page } = await openPage(browser, { javaScriptEnabled: false });
    try {
      const broken: string[] = [];
      const crawl = async (where: string) => {
        for (const link of await linksOf(page, server.url)) {
          if (link.includes('/admin/actions/')) continue;
          const answer = await context.request.get(link, { maxRedirects: 5 });
          if (answer.status() === 404) broken.push(`${where} → ${new URL(link).pathname}`);
        }
      };
      for (const path of [
        '/thank-you/',
        '/thank-you/contact/',
        '/thank-you/newsletter/',
        '/thank-you/confirm-subscription/',
        '/thank-you/unsubscribed/',
        '/thank-you/callback/',
        '/newsletter/confirm?token=unbekannt',
        '/newsletter/unsubscribe?token=unbekannt',
      ]) {
        await page.goto(`${server.url}${path}`);
        await crawl(path);
      }
      // A refused post's page and the confirmation asked without JavaScript, from the about page.
      await page.goto(`${server.url}/ueber-uns`);
      const form = page.locator('#contact-form');
      await form.getByLabel('Name', { exact: true }).fill('Greta Links');
      await form.getByLabel('E-Mail-Adresse', { exact: true }).fill('greta@example.org');
      await form.getByLabel('Nachricht', { exact: true }).fill('Hallo!    ');
      await expect(loadsPage(page, () => form.getByRole('button', { name: 'Nachricht senden', exact: true }).click())).resolves.toBe(400);
      await crawl('the refused contact post');
      await page.goto(`${server.url}/ueber-uns`);
      await form.getByLabel('Name', { exact: true }).fill('Greta Links');
      await form.getByLabel('E-Mail-Adresse', { exact: true }).fill('greta@example.org');
      await form.getByLabel('Nachricht', { exact: true }).fill('Eine Frage zu den Bohnen, lang genug.');
      await expect(loadsPage(page, () => form.getByRole('button', { name: 'Nachricht senden', exact: true }).click())).resolves.toBe(200);
      await expect(page.locator('main h2').first().textContent()).resolves.toBe('Noch ein Schritt: Nachricht senden?');
      // "Write a new message" leads back to the page the form was on.
      await expect(page.getByRole('link', { name: 'Eine neue Nachricht schreiben' }).getAttribute('href')).resolves.toBe('/ueber-uns');
      await crawl('the confirmation');
      await page.goto(`${server.url}/admin`);
      await page.getByLabel('Password').fill(PASSWORD);
      await expect(loadsPage(page, () => page.getByRole('button', { name: 'Sign in' }).click())).resolves.toBe(200);
      for (const path of ['/admin', '/admin/messages', '/admin/subscribers', '/admin/webhooks', '/admin/audit']) {
        await page.goto(`${server.url}${path}`);
        await crawl(path);
      }
      expect(broken).toEqual([]);
    } finally {
      await context.close();
    }
  });

  test('“Send another message” leads back to the page the form was on', async () => {
    const { context, page } = await openPage(browser, { javaScriptEnabled: false });
    try {
      await page.goto(`${server.url}/thank-you/contact/`, { referer: `${server.url}/ueber-uns` });
      await expect(page.getByRole('link', { name: 'Eine weitere Nachricht senden' }).getAttribute('href')).resolves.toBe('/ueber-uns');
    } finally {
      await context.close();
    }
  });
});

describe('an owner’s layout that cannot render our pages (item 3): the article layout that needs pubDate', () => {
  test('the build says in advance that the layout needs a prop our pages do not pass', () => {
    expect(shop.buildLogs[POST_BUILD]).toMatch(/src\/layouts\/Post\.astro.*pubDate/);
    expect(shop.buildLogs.dist).not.toMatch(/src\/layouts\/Shop\.astro/);
  });

  test.each([
    ['with JavaScript', true],
    ['without JavaScript', false],
  ])('our thank-you and confirm pages answer whole, in a plain layout, %s', async (_, javaScript) => {
    const { context, page } = await openPage(browser, { javaScriptEnabled: javaScript });
    try {
      for (const [path, heading] of [
        ['/thank-you/contact/', 'Danke für Ihre Nachricht!'],
        ['/thank-you/callback/', 'Danke! Wir rufen Sie zurück.'],
      ] as const) {
        const answer = await page.goto(`${post.url}${path}`);
        expect(answer?.status()).toBe(200);
        await expect(page.locator('h1').textContent()).resolves.toBe(heading);
        await expect(page.locator('body').textContent()).resolves.not.toContain('Internal server error');
        await expect(page.title()).resolves.toContain(SHOP_NAME);
      }
      const confirm = await page.goto(`${post.url}/newsletter/confirm?token=unbekannt`);
      expect(confirm?.status()).toBeLessThan(500);
      await expect(page.locator('h1').count()).resolves.toBe(1);
    } finally {
      await context.close();
    }
  });

  test('under astro dev too: the thank-you page answers whole in Chromium, not blank', async () => {
    const dev = await shop.dev({ SHOP_FORMS_LAYOUT: './src/layouts/Post.astro' });
    const { context, page } = await openPage(browser, { javaScriptEnabled: false });
    try {
      const answer = await page.goto(`${dev.url}/thank-you/contact/`);
      expect(answer?.status()).toBe(200);
      await expect(page.locator('h1').textContent()).resolves.toBe('Danke für Ihre Nachricht!');
      expect(dev.output()).toMatch(/layout\.failed.*Post\.astro/);
    } finally {
      await context.close();
      await dev.stop();
    }
  });

  test('the server warns once, naming the layout and its error', async () => {
    for (let i = 0; i < 3; i++) expect((await fetch(`${post.url}/thank-you/unsubscribed/`)).status).toBe(200);
    const warnings = post
      .output()
      .split('\n')
      .filter((line) => line.includes('Post.astro'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/layout\.failed/);
    expect(warnings[0]).toMatch(/toLocaleDateString/);
    expect(warnings[0]).not.toMatch(/\n\s+at /);
  });
});

describe('the build (item 10)', () => {
  test('warns of no getStaticPaths() ignored in our thank-you page', () => {
    expect(shop.buildLogs.dist).toContain('Complete!');
    expect(shop.buildLogs.dist).not.toContain('getStaticPaths() ignored');
    expect(shop.buildLogs.dist).not.toContain('thank-you/[form]');
  });
});
