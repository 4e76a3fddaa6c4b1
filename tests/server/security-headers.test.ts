import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Site, startSite } from '../support/site.ts';

/** What every answer of the built server carries, whichever part of it answers (issue 11, item 6). */
const EVERY_ANSWER = {
  'x-content-type-options': 'nosniff',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'none'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'strict-origin-when-cross-origin',
};

const NAVIGATION = { accept: 'text/html', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** Every kind of answer: from memory, from Astro, the API, refusals, pages for people without JavaScript. */
const ANSWERS: Array<[string, string, RequestInit, number]> = [
  ['the home page, from memory', '/', {}, 200],
  ['the contact page, from memory', '/contact/', {}, 200],
  ['a revalidated page (304)', '/', { headers: { 'if-none-match': 'ETAG' } }, 304],
  ['a script file', 'SCRIPT', {}, 200],
  ['a page that does not exist (Astro)', '/no-such-page', {}, 404],
  ['health, API JSON', '/api/health', {}, 200],
  ['an unknown API address', '/api/nothing-here', {}, 404],
  ['a wrong method on the API', '/api/contact', { method: 'GET' }, 405],
  ['an invalid contact post', '/api/contact', { method: 'POST', headers: FORM, body: 'name=A' }, 400],
  ['a body too large (413 from the header)', '/api/contact', { method: 'POST', headers: FORM, body: 'x'.repeat(70 * 1024) }, 413],
  ['a post from another website', '/api/contact', { method: 'POST', headers: { ...FORM, origin: 'https://evil.test' }, body: 'name=A' }, 403],
  [
    'a refusal without JavaScript, 303 to its draft',
    '/api/contact',
    { method: 'POST', headers: { ...FORM, ...NAVIGATION, origin: 'https://evil.test' }, body: 'name=A' },
    303,
  ],
  ['an invalid post without JavaScript, 303 to its draft', '/api/contact', { method: 'POST', headers: { ...FORM, ...NAVIGATION }, body: 'name=A' }, 303],
  ['the form again from its draft (Astro page)', 'DRAFT', { headers: NAVIGATION }, 400],
];

describe('the security headers of the built server', () => {
  let site: Site;
  let script: string;
  let etag: string;
  beforeAll(async () => {
    site = await startSite();
    const home = await fetch(`${site.url}/`);
    etag = home.headers.get('etag') ?? '';
    script = /<script type="module" src="([^"]+)"/.exec(await home.text())?.[1] ?? '/missing-script';
  });
  afterAll(() => site?.stop());

  /** The address a refused post without JavaScript is sent to (decision 0133). */
  const draft = async () => {
    const posted = await fetch(`${site.url}/api/contact`, { method: 'POST', headers: { ...FORM, ...NAVIGATION }, body: 'name=A', redirect: 'manual' });
    return posted.headers.get('location') ?? '/missing-draft';
  };

  test.each(ANSWERS)('%s', async (_, path, init, status) => {
    const headers = new Headers(init.headers);
    if (headers.get('if-none-match') === 'ETAG') headers.set('if-none-match', etag);
    const address = path === 'SCRIPT' ? script : path === 'DRAFT' ? await draft() : path;
    const response = await fetch(`${site.url}${address}`, { ...init, headers, redirect: 'manual' });
    await response.arrayBuffer();
    expect(response.status).toBe(status);
    const seen = Object.fromEntries(Object.keys(EVERY_ANSWER).map((name) => [name, response.headers.get(name)]));
    expect(seen).toEqual(EVERY_ANSWER);
    expect(response.headers.get('strict-transport-security')).toBeNull();
  });

  test('the pages load their script and styles as files, never inline', async () => {
    const html = await fetch(`${site.url}/contact/`).then((r) => r.text());
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style\b|\sstyle="/);
    expect(html).toMatch(/<link rel="stylesheet" href="\/_astro\/[^"]+\.css">/);
  });
});

describe('with PUBLIC_URL over https', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite({ PUBLIC_URL: 'https://www.example.com', TRUST_PROXY: '1' });
  });
  afterAll(() => site?.stop());

  test.each([
    ['a page', '/', 'www.example.com', 200],
    ['the API', '/api/health', 'www.example.com', 200],
    ['a refusal under another name (421)', '/', 'evil.test', 421],
  ])('%s carries Strict-Transport-Security for a year', async (_, path, host, status) => {
    const response = await fetch(`${site.url}${path}`, { headers: { 'x-forwarded-host': host, 'x-forwarded-proto': 'https' } });
    await response.arrayBuffer();
    expect({
      status: response.status,
      hsts: response.headers.get('strict-transport-security'),
      nosniff: response.headers.get('x-content-type-options'),
    }).toEqual({
      status,
      hsts: 'max-age=31536000',
      nosniff: 'nosniff',
    });
  });
});

describe('the pages a link in the newsletter’s mail opens (issue 28, item 2)', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite();
  });
  afterAll(() => site?.stop());

  // `same-origin`: the token in the address reaches no other site, and the page's own button
  // posts with its real `Origin` (under `no-referrer` Chromium sends `Origin: null`, refused).
  test.each([
    ['the confirmation page', '/newsletter/confirm/?token=abc'],
    ['the unsubscribe page', '/newsletter/unsubscribe/?token=abc'],
  ])('%s keeps its address to the site', async (_, path) => {
    const response = await fetch(`${site.url}${path}`);
    await response.arrayBuffer();
    expect({ status: response.status, policy: response.headers.get('referrer-policy') }).toEqual({ status: 200, policy: 'same-origin' });
  });
});
