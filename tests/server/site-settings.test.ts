import { existsSync, readFileSync } from 'node:fs';
import { Window } from 'happy-dom';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildOtherSite } from '../support/build-site.ts';
import { parseMail } from '../support/mime.ts';
import { type Site, startSite } from '../support/site.ts';
import { type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';

// The whole site built again with another owner's settings (tests/fixtures/atelier-nord.site.config.ts),
// as `SITE_CONFIG=… npm run build` builds it: every page, the theme and the owner's mail follow.
let built: ReturnType<typeof buildOtherSite>;
let site: Site;
let smtp: FakeSmtpServer;

beforeAll(async () => {
  built = buildOtherSite(`atelier-nord-${process.pid}`, 'tests/fixtures/atelier-nord.site.config.ts');
  smtp = await startSmtpServer();
  site = await startSite(
    { SMTP_URL: smtp.url(), CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'forms@example.com', PUBLIC_URL: 'https://atelier.example' },
    { start: built.start },
  );
}, 240_000);

afterAll(async () => {
  await site?.stop();
  await smtp?.close();
  built?.remove();
});

async function page(path: string) {
  const window = new Window();
  window.document.write(await (await fetch(`${site.url}${path}`)).text());
  return window.document;
}

describe('a site built with another name, description and colours', () => {
  test('every page carries its name in the header, the footer and the tab title', async () => {
    for (const [path, title] of [
      ['/', 'Subscribe to the newsletter · Atelier Nord'],
      ['/contact/', 'Contact us · Atelier Nord'],
      ['/thank-you/', 'Thank you · Atelier Nord'],
    ] as const) {
      const doc = await page(path);
      expect(doc.title).toBe(title);
      expect(doc.querySelector('.site-name')?.textContent).toBe('Atelier Nord');
      expect(doc.querySelector('.site-footer')?.textContent).toContain('Atelier Nord');
      expect(doc.documentElement.getAttribute('lang')).toBe('en');
    }
    expect((await page('/')).querySelector('meta[name="description"]')?.getAttribute('content')).toBe('Furniture from the north, made to order.');
  });

  test('its colours are a stylesheet of its own, linked from every page', async () => {
    const doc = await page('/contact/');
    expect(doc.querySelector('link[rel="stylesheet"][href="/theme.css"]')).not.toBeNull();
    const css = await fetch(`${site.url}/theme.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await css.text()).toBe(
      ':root:root {\n  --accent: #7a1fa2;\n  --accent-strong: #5e1780;\n}\n@media (prefers-color-scheme: dark) {\n  :root:root {\n    --accent: #e1b3f5;\n  }\n}\n',
    );
  });

  test("the owner's mail names the site in its subject and From, and links to the message in the admin", async () => {
    const body = new FormData();
    for (const [name, value] of Object.entries({ name: 'Ada Lovelace', email: 'ada@example.org', message: 'A table of oak, please.', honeypot: '' })) {
      body.append(name, value);
    }
    const response = await fetch(`${site.url}/api/contact`, { method: 'POST', body, headers: { origin: 'https://atelier.example' } });
    expect(response.status).toBe(200);
    await expect.poll(() => smtp.received.length, { timeout: 10_000 }).toBe(1);
    const mail = parseMail(smtp.received[0]!.raw);
    expect(mail.header('subject')).toEqual(['[Atelier Nord] New message from Ada Lovelace']);
    expect(mail.header('from')).toEqual(['Atelier Nord website <forms@example.com>']);
    // No admin (ADMIN_PASSWORD_HASH unset): no link to one.
    expect(mail.text).not.toContain('/admin/');
  });
});

describe('the default build', () => {
  test('links no theme when the owner keeps the default colours', async () => {
    const html = readFileSync(new URL('../../dist/client/index.html', import.meta.url), 'utf8');
    expect(html).not.toContain('/theme.css');
    expect(existsSync(new URL('../../dist/client/theme.css', import.meta.url))).toBe(true);
  });
});
