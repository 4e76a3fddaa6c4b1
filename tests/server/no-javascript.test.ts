import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Window } from 'happy-dom';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../support/fake-http.ts';
import { type Site, startSite, NAVIGATION } from '../support/site.ts';
import { site as settings } from '../../packages/site-forms/src/lib/site/site.ts';

/**
 * The forms without JavaScript, over HTTP to the built server: a browser's own form post
 * gets pages meant for people, while every other caller keeps the JSON of SPEC.md.
 * (tests/e2e/no-javascript.test.ts does the same in a real browser.)
 */
let site: Site;
let mailchimp: FakeHttpServer;

beforeAll(async () => {
  mailchimp = await startFakeHttpServer(replyJson(200, { status: 'subscribed' }));
  site = await startSite({ MAILCHIMP_API_KEY: 'k-us1', MAILCHIMP_LIST_ID: 'l', MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0`, LOG_CLIENT_LINES: 'all' });
});
afterAll(async () => {
  await site.stop();
  await mailchimp.close();
});
beforeEach(() => {
  mailchimp.reply(replyJson(200, { status: 'subscribed' }));
  mailchimp.requests.length = 0;
});

/** What Chromium sends with the form script's fetch. */
const SCRIPT = { accept: 'application/json', 'sec-fetch-dest': 'empty', 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'same-origin' };

const valid = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.', honeypot: '' };

function navigate(path: string, fields: Record<string, string>, headers: Record<string, string> = NAVIGATION): Promise<Response> {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  return fetch(`${site.url}${path}`, { method: 'POST', body, headers: { ...headers, origin: site.url }, redirect: 'manual' });
}

/** Parses an HTML answer into a document to query. */
async function page(response: Response): Promise<Document> {
  const window = new Window();
  window.document.write(await response.text());
  return window.document as unknown as Document;
}

/**
 * Follows a refused post's `303 See Other` as the browser does (decision 0133): a relative
 * Location to the form's own address with the draft's id, then a GET of it.
 */
async function followDraft(response: Response, endpoint: string, base = site.url): Promise<Response> {
  expect(response.status).toBe(303);
  expect(response.headers.get('cache-control')).toBe('no-store');
  const location = response.headers.get('location') ?? '';
  expect(location).toMatch(new RegExp(`^${endpoint}\\?draft=[\\w-]{32}$`));
  await expect(response.text()).resolves.toBe('');
  return fetch(`${base}${location}`, { headers: NAVIGATION, redirect: 'manual' });
}

function storedNames(): string[] {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    return (db.prepare('SELECT name FROM submissions').all() as Array<{ name: string }>).map((row) => row.name);
  } finally {
    db.close();
  }
}

describe('newsletter without JavaScript', () => {
  test('a valid address: subscribed, then 303 to the thank-you page with a relative Location', async () => {
    const response = await navigate('/api/newsletter', { email: 'reader@example.com' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/thank-you/newsletter/');
    expect(mailchimp.requests).toHaveLength(1);

    const thanks = await fetch(new URL(response.headers.get('location')!, site.url));
    expect(thanks.status).toBe(200);
    const document = await page(thanks);
    expect(document.querySelector('h1')?.textContent).toBe('Thanks for subscribing!');
    expect(document.querySelector('main a[href="/"]')).not.toBeNull();
    // The newsletter's own page: nothing about a message.
    expect(document.querySelector('main')?.textContent).not.toContain('Send another message');
  });

  test('an invalid address: 303 to a page of 400 HTML, the home page again with the message at the field and the address kept', async () => {
    const response = await followDraft(await navigate('/api/newsletter', { email: 'not-an-email' }), '/api/newsletter');
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const document = await page(response);
    expect(document.title).toMatch(/^Error: /);
    const email = document.querySelector<HTMLInputElement>('#newsletter-email')!;
    expect(email.getAttribute('value')).toBe('not-an-email');
    expect(email.getAttribute('aria-invalid')).toBe('true');
    expect(email.getAttribute('aria-describedby')).toBe('newsletter-email-error');
    expect(email.hasAttribute('autofocus')).toBe(true);
    expect(document.querySelector('#newsletter-email-error')?.textContent).toBe('Please enter a valid email address');
    expect(document.querySelector('nav a[aria-current="page"]')?.getAttribute('href')).toBe('/');
    expect(mailchimp.requests).toHaveLength(0);
  });

  test("a busy provider: the spec's 503 as a page, with Retry-After, the error above the button and the address kept", async () => {
    mailchimp.reply(replyJson(503, { title: 'Service Unavailable' }));
    const response = await followDraft(await navigate('/api/newsletter', { email: 'reader@example.com' }), '/api/newsletter');
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('120');
    const document = await page(response);
    expect(document.querySelector('#newsletter-form-error')?.textContent?.trim()).toBe(
      'The newsletter service is busy right now. Please try again in a few minutes.',
    );
    expect(document.querySelector<HTMLInputElement>('#newsletter-email')?.getAttribute('value')).toBe('reader@example.com');
  });
});

describe('contact without JavaScript', () => {
  test('a valid message: stored, then 303 to the thank-you page', async () => {
    const response = await navigate('/api/contact', { ...valid, name: 'No Script Person' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/thank-you/contact/');
    expect(storedNames()).toContain('No Script Person');
    const document = await page(await fetch(new URL('/thank-you/contact/', site.url)));
    expect(document.querySelector('h1')?.textContent).toBe('Thank you for your message!');
    expect(document.querySelector('main a[href="/contact"]')?.textContent).toBe('Send another message');
    // Not headless (no ALLOWED_ORIGINS, decision 0211): the site's own menu and home.
    expect(document.querySelector('main a[href="/"]')?.textContent).toBe('Back to the home page');
    expect([...document.querySelectorAll('nav a')].map((a) => a.getAttribute('href'))).toEqual(expect.arrayContaining(['/', '/contact']));
  });

  test('invalid fields: 303 to a page of 400 HTML, each message at its field, what was typed in place, the first invalid field focused', async () => {
    const typed = { name: 'A', email: 'ada@example.com', message: '<b>short', honeypot: '' };
    const response = await followDraft(await navigate('/api/contact', typed), '/api/contact');
    expect(response.status).toBe(400);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const document = await page(response);
    expect(document.querySelector('#contact-name-error')?.textContent).toBe('Name must be between 2 and 100 characters');
    expect(document.querySelector('#contact-email-error')?.textContent).toBe('');
    expect(document.querySelector('#contact-message-error')?.textContent).toBe('Message must be at least 10 characters');
    expect(document.querySelector('#contact-name')?.getAttribute('value')).toBe('A');
    expect(document.querySelector('#contact-email')?.getAttribute('value')).toBe('ada@example.com');
    // Browsers drop the newline that opens a textarea; happy-dom keeps it (the e2e tests see the real value).
    expect(document.querySelector('#contact-message')?.textContent?.replace(/^\n/, '')).toBe('<b>short');
    expect(document.querySelector('#contact-message')?.getAttribute('aria-describedby')).toBe('contact-message-hint contact-message-error');
    expect(document.querySelector('#contact-email')?.hasAttribute('aria-invalid')).toBe(false);
    expect([...document.querySelectorAll('[autofocus]')].map((element) => element.id)).toEqual(['contact-name']);
    expect(document.querySelector('nav a[aria-current="page"]')?.getAttribute('href')).toBe('/contact');
  });

  test('a filled honeypot: 400, its message with the form’s alert, and the honeypot is never filled again', async () => {
    const response = await followDraft(await navigate('/api/contact', { ...valid, name: 'Honeypot Bot', honeypot: 'I am a bot' }), '/api/contact');
    expect(response.status).toBe(400);
    const html = await response.clone().text();
    expect(html).not.toContain('I am a bot');
    const document = await page(response);
    expect(document.querySelector('[role="alert"]')?.textContent).toBe('This field must be left empty');
    expect(document.querySelector('#contact-honeypot')?.getAttribute('value')).toBeNull();
    expect(storedNames()).not.toContain('Honeypot Bot');
  });

  test('a browser without fetch metadata that prefers HTML is answered as a person too', async () => {
    // node:http, because fetch adds a Sec-Fetch-Mode of its own.
    const encoded = new Response(new URLSearchParams(valid));
    const answer = await new Promise<{ status?: number; location?: string }>((resolve, reject) => {
      const request = httpRequest(
        `${site.url}/api/contact`,
        { method: 'POST', headers: { accept: NAVIGATION.accept, 'content-type': encoded.headers.get('content-type')! } },
        (response) => {
          response.resume();
          resolve({ status: response.statusCode, location: response.headers.location });
        },
      );
      request.on('error', reject);
      void encoded.text().then((body) => request.end(body));
    });
    expect(answer).toEqual({ status: 303, location: '/thank-you/contact/' });
  });

  test('the log line of a form post without JavaScript names its outcome, a refusal its own status', async () => {
    await navigate('/api/contact', valid);
    expect(site.logs.at(-1)).toMatchObject({ event: 'form.request', route: '/api/contact', status: 303, outcome: 'accepted' });
    await navigate('/api/contact', { ...valid, name: 'A' });
    expect(site.logs.at(-1)).toMatchObject({ event: 'form.request', route: '/api/contact', status: 400, outcome: 'invalid' });
  });

  test('reloading the page of a refused post shows the same page and posts nothing', async () => {
    const before = storedNames().length;
    const posts = site.logs.filter((line) => typeof line === 'object' && line.event === 'form.request').length;
    const refused = await navigate('/api/contact', { ...valid, name: 'R', message: 'Reloaded twice, kept each time.' });
    const location = refused.headers.get('location');
    const first = await followDraft(refused, '/api/contact');
    const html = await first.text();
    const reload = await fetch(`${site.url}${location}`, { headers: NAVIGATION, redirect: 'manual' });
    expect(reload.status).toBe(400);
    await expect(reload.text()).resolves.toBe(html);
    expect(html).toContain('Reloaded twice, kept each time.');
    expect(storedNames()).toHaveLength(before);
    expect(site.logs.filter((line) => typeof line === 'object' && line.event === 'form.request')).toHaveLength(posts + 1);
  });

  test('a draft that is unknown or expired: 303 to the empty form on its own page, not an error', async () => {
    const unknown = await fetch(`${site.url}/api/contact?draft=${'A'.repeat(32)}`, { headers: NAVIGATION, redirect: 'manual' });
    expect([unknown.status, unknown.headers.get('location'), unknown.headers.get('cache-control')]).toEqual([303, '/contact', 'no-store']);
    const newsletter = await fetch(`${site.url}/api/newsletter?draft=nothing`, { headers: NAVIGATION, redirect: 'manual' });
    expect([newsletter.status, newsletter.headers.get('location')]).toEqual([303, '/']);
  });

  test('the draft’s address is in no log line', async () => {
    const refused = await navigate('/api/contact', { ...valid, name: 'L' });
    const id = refused.headers.get('location')!.split('=')[1]!;
    await (await followDraft(refused, '/api/contact')).text();
    expect(JSON.stringify(site.logs)).not.toContain(id);
  });
});

describe('everyone else keeps the JSON of SPEC.md', () => {
  test.each<[string, Record<string, string>]>([
    ['the form script', SCRIPT],
    ['curl', { accept: '*/*' }],
    ['a client with no headers', {}],
  ])('%s: JSON for a success and for a refusal, never a redirect', async (_, headers) => {
    const ok = await navigate('/api/contact', valid, headers);
    expect([ok.status, ok.headers.get('content-type'), await ok.json()]).toEqual([200, 'application/json; charset=utf-8', { success: true }]);
    const refused = await navigate('/api/newsletter', { email: 'nope' }, headers);
    expect([refused.status, await refused.json()]).toEqual([400, { success: false, error: 'Please enter a valid email address' }]);
    expect(refused.headers.get('location')).toBeNull();
  });

  test('the form pages have no address of their own: the old /retry pages are 404', async () => {
    for (const path of ['/retry/contact', '/retry/newsletter']) {
      const response = await fetch(`${site.url}${path}`, { redirect: 'manual' });
      expect([response.status, response.headers.get('location')]).toEqual([404, null]);
    }
  });

  test('a GET of an endpoint from the address bar is still 405 JSON', async () => {
    const response = await fetch(`${site.url}/api/contact`, { headers: NAVIGATION });
    expect(response.status).toBe(405);
    await expect(response.json()).resolves.toMatchObject({ success: false });
  });

  test('a script that follows a draft’s address gets the endpoint’s JSON 405, never the page', async () => {
    const location = (await navigate('/api/contact', { ...valid, name: 'S' })).headers.get('location');
    const response = await fetch(`${site.url}${location}`, { headers: SCRIPT });
    expect([response.status, await response.json()]).toEqual([405, { success: false, error: 'Use POST for this address' }]);
  });
});

describe('the confirmation asked of a person without JavaScript', () => {
  test('a forged or expired token: the contact page again, 400, with the error in its alert', async () => {
    const response = await followDraft(await navigate('/api/contact/confirm', { token: `1.9999999999.${'A'.repeat(43)}` }), '/api/contact/confirm');
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const doc = await page(response);
    expect(doc.querySelector('#contact-form-error')?.textContent).toBe('This confirmation has expired. Please send your message again.');
    expect(doc.querySelector('#contact-form')?.getAttribute('action')).toBe('/api/contact');
  });
});

describe("the guard's own refusals, for a person without JavaScript", () => {
  let limited: Site;
  beforeAll(async () => {
    limited = await startSite({ RATE_LIMIT_MAX: '1' });
  });
  afterAll(() => limited.stop());

  const post = (fields: Record<string, string>, origin: string) => {
    const body = new FormData();
    for (const [name, value] of Object.entries(fields)) body.append(name, value);
    return fetch(`${limited.url}/api/contact`, { method: 'POST', body, headers: { ...NAVIGATION, origin }, redirect: 'manual' });
  };

  test('too many attempts: a 429 page in the site’s layout, the form again with the message in its alert, not JSON', async () => {
    expect((await post(valid, limited.url)).status).toBe(303);
    const refused = await followDraft(await post(valid, limited.url), '/api/contact', limited.url);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const doc = await page(refused);
    expect(doc.querySelector('#contact-form-error')?.textContent).toBe('Too many attempts. Please try again in 10 minutes.');
    expect(doc.title).toBe(`Error: Contact us · ${settings.name}`);
    expect(doc.querySelector('header nav a[aria-current="page"]')?.getAttribute('href')).toBe('/contact');
    expect(doc.querySelector('#contact-form')?.getAttribute('action')).toBe('/api/contact');
    // What the person typed is still there, and the message about the whole form takes the focus.
    expect(doc.querySelector<HTMLInputElement>('#contact-name')?.getAttribute('value')).toBe(valid.name);
    expect(doc.querySelector<HTMLInputElement>('#contact-email')?.getAttribute('value')).toBe(valid.email);
    expect(doc.querySelector('#contact-message')?.textContent?.trim()).toBe(valid.message);
    expect(doc.querySelector('#contact-form-error')?.hasAttribute('autofocus')).toBe(true);
    expect(doc.querySelector('[autofocus]:not(#contact-form-error)')).toBeNull();
  });

  test('another website: a 403 page in the site’s layout, and the script still gets JSON', async () => {
    const refused = await followDraft(await post(valid, 'https://evil.example'), '/api/contact', limited.url);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
    const doc = await page(refused);
    expect(doc.querySelector('#contact-form-error')?.textContent).toBe('Forms on this site cannot be posted from another website');
    expect(doc.querySelector('header nav')).not.toBeNull();
    expect(doc.querySelector<HTMLInputElement>('#contact-email')?.getAttribute('value')).toBe(valid.email);
    const script = await fetch(`${limited.url}/api/contact`, {
      method: 'POST',
      body: new URLSearchParams(valid),
      headers: { ...SCRIPT, origin: 'https://evil.example' },
    });
    expect(script.status).toBe(403);
    await expect(script.json()).resolves.toEqual({ success: false, error: expect.any(String) });
  });
});
