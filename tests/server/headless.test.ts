import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Window } from 'happy-dom';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { NAVIGATION, postForm, type Site, startSite } from '../support/site.ts';

/**
 * Forms for any static site (issue 29, item 3): this server at forms.example.com (PUBLIC_URL), the
 * owner's site at www.example.org (ALLOWED_ORIGINS). A plain form there posts here with `_next`;
 * a person without JavaScript lands on the owner's page, a refused one on this server's page with
 * what they typed and a link back; a script gets the spec's JSON; /forms.js is served.
 */
const OWNER = 'https://www.example.org';
const THANKS = `${OWNER}/thanks/`;
const TYPED = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'A plain form on my own static site.', honeypot: '' };

let site: Site;

beforeAll(async () => {
  site = await startSite({ PUBLIC_URL: 'https://forms.example.com', ALLOWED_ORIGINS: OWNER });
});

afterAll(async () => {
  await site?.stop();
});

/** Posts as a browser without JavaScript does from a page of the owner's site. */
function navigate(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  return fetch(`${site.url}${path}`, {
    method: 'POST',
    body,
    headers: { ...NAVIGATION, 'sec-fetch-site': 'cross-site', origin: OWNER, referer: `${OWNER}/`, ...headers },
    redirect: 'manual',
  });
}

function stored(): Array<{ name: string; fields: string }> {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    return db.prepare('SELECT name, fields FROM submissions ORDER BY id').all() as Array<{ name: string; fields: string }>;
  } finally {
    db.close();
  }
}

function parse(html: string): Document {
  const window = new Window();
  window.document.write(html);
  return window.document as unknown as Document;
}

describe('`_next` after a success, for a person without JavaScript', () => {
  test('a contact message: stored without `_next`, then 303 to the owner’s thank-you page', async () => {
    const response = await navigate('/api/contact', { ...TYPED, name: 'Next Person', _next: THANKS });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(THANKS);
    expect(response.headers.get('cache-control')).toBe('no-store');
    // The contact form of the suite has no field of its own: nothing beside the columns, `_next` least of all.
    expect(stored().find((row) => row.name === 'Next Person')).toEqual({ name: 'Next Person', fields: null });
  });

  test('a newsletter sign-up: 303 to the owner’s page', async () => {
    const response = await navigate('/api/newsletter', { email: 'reader@example.org', _next: `${OWNER}/subscribed.html?list=news` });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`${OWNER}/subscribed.html?list=news`);
  });

  test.each([
    ['another site', 'https://evil.test/'],
    ['a scheme-relative address', '//evil.test'],
    ['javascript:', 'javascript:alert(document.cookie)'],
    ['this site’s name as the start of another', 'https://forms.example.com.evil.test/'],
    ['userinfo naming the owner', 'https://www.example.org@evil.test/'],
    ['userinfo on the owner’s host', 'https://ada:pw@www.example.org/thanks/'],
  ])('%s is ignored: 303 to this server’s own thank-you page, which is told the page the form was on', async (_, next) => {
    const response = await navigate('/api/contact', { ...TYPED, _next: next });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`/thank-you/contact/?back=${encodeURIComponent(`${OWNER}/`)}`);
  });

  test('a script’s post gets the spec’s JSON with the allowed `_next` as `next`, for /forms.js to follow (decision 0210)', async () => {
    const response = await postForm(`${site.url}/api/contact`, { ...TYPED, _next: THANKS }, { origin: OWNER, accept: 'application/json' });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(OWNER);
    await expect(response.text()).resolves.toBe(`{"success":true,"next":"${THANKS}"}`);
  });

  test('a script’s post with a `_next` that is not allowed gets the spec’s JSON, byte for byte', async () => {
    const response = await postForm(`${site.url}/api/contact`, { ...TYPED, _next: 'https://evil.test/' }, { origin: OWNER, accept: 'application/json' });
    await expect(response.text()).resolves.toBe('{"success":true}');
  });
});

/** Every link of a page of ours, but the skip link to its own content. */
function links(doc: Document): Array<{ href: string | null; text: string | undefined }> {
  return [...doc.querySelectorAll('a[href]')]
    .filter((a) => !a.getAttribute('href')?.startsWith('#'))
    .map((a) => ({ href: a.getAttribute('href'), text: a.textContent?.trim() }));
}

describe('this server’s pages a visitor from the owner’s site sees (issue 39 item 9b, 9d): only links back to that site', () => {
  test('after an ignored `_next`, the thank-you page leads back to the page the form was on, with none of the starter’s menu', async () => {
    const response = await navigate('/api/contact', { ...TYPED, _next: 'https://evil.test/' }, { referer: `${OWNER}/contact/` });
    const page = await fetch(`${site.url}${response.headers.get('location')}`, { headers: NAVIGATION });
    expect(page.status).toBe(200);
    const doc = parse(await page.text());
    expect(links(doc)).toEqual([{ href: `${OWNER}/contact/`, text: 'Back to www.example.org' }]);
    expect(doc.querySelector('nav')).toBeNull();
  });

  test('the Origin, when the browser sent no Referer; and the newsletter’s thank-you page alike', async () => {
    const response = await navigate('/api/newsletter', { email: 'origin-only@example.org' }, { referer: '' });
    expect(response.headers.get('location')).toBe(`/thank-you/newsletter/?back=${encodeURIComponent(`${OWNER}/`)}`);
    const doc = parse(await (await fetch(`${site.url}${response.headers.get('location')}`, { headers: NAVIGATION })).text());
    expect(links(doc)).toEqual([{ href: `${OWNER}/`, text: 'Back to www.example.org' }]);
  });

  test.each(['/thank-you/contact/', '/thank-you/unsubscribed/', '/thank-you/confirm-subscription/', '/thank-you/'])(
    '%s opened on its own (a mail’s link, a bookmark): back to the owner’s site, the first of ALLOWED_ORIGINS',
    async (path) => {
      const doc = parse(await (await fetch(`${site.url}${path}`, { headers: NAVIGATION })).text());
      expect(links(doc)).toEqual([{ href: `${OWNER}/`, text: 'Back to www.example.org' }]);
      expect(doc.querySelector('nav')).toBeNull();
    },
  );

  test('rendered on demand now, an unknown form’s thank-you page is still the 404', async () => {
    const response = await fetch(`${site.url}/thank-you/no-such-form/`, { headers: NAVIGATION });
    expect(response.status).toBe(404);
    const doc = parse(await response.text());
    expect(doc.querySelector('h1')?.textContent).toBe('Page not found');
    expect(links(doc)).toEqual([{ href: `${OWNER}/`, text: 'Back to www.example.org' }]);
  });

  test('a `back` on no allowed origin is not linked', async () => {
    const doc = parse(await (await fetch(`${site.url}/thank-you/contact/?back=${encodeURIComponent('https://evil.test/')}`, { headers: NAVIGATION })).text());
    expect(JSON.stringify(links(doc))).not.toContain('evil.test');
    expect(links(doc)).toEqual([{ href: `${OWNER}/`, text: 'Back to www.example.org' }]);
  });

  test('a refused newsletter post’s page: the link back, and neither the menu nor the starter’s contact page', async () => {
    const refused = await navigate('/api/newsletter', { email: 'nope' }, { referer: `${OWNER}/news/` });
    const doc = parse(await (await fetch(`${site.url}${refused.headers.get('location')}`, { headers: NAVIGATION })).text());
    expect(links(doc)).toEqual([{ href: `${OWNER}/news/`, text: 'Back to www.example.org' }]);
    expect(doc.querySelector('nav')).toBeNull();
  });
});

describe('a refused post from the owner’s page', () => {
  test('this server’s page: what was typed, the messages, `_next` carried on and a link back to the owner’s page', async () => {
    const response = await navigate('/api/contact', { ...TYPED, email: 'not an address', _next: THANKS }, { referer: `${OWNER}/contact/` });
    expect(response.status).toBe(303);
    const location = response.headers.get('location') ?? '';
    expect(location).toMatch(/^\/api\/contact\?draft=[\w-]{32}$/);

    const shown = await fetch(`${site.url}${location}`, { headers: NAVIGATION, redirect: 'manual' });
    expect(shown.status).toBe(400);
    // The corrected post is answered with a redirect to the owner's site, which the page's CSP must let the form follow.
    expect(shown.headers.get('content-security-policy')).toContain(`form-action 'self' ${OWNER}`);
    const doc = parse(await shown.text());
    expect(doc.getElementById('contact-name')?.getAttribute('value')).toBe('Ada Lovelace');
    expect(doc.getElementById('contact-email')?.getAttribute('value')).toBe('not an address');
    const form = doc.querySelector<HTMLFormElement>('form#contact-form');
    expect(form?.getAttribute('action')).toBe('/api/contact');
    expect(form?.querySelector('input[type="hidden"][name="_next"]')?.getAttribute('value')).toBe(THANKS);
    const back = doc.querySelector('a[data-back]');
    expect(back?.getAttribute('href')).toBe(`${OWNER}/contact/`);
    expect(back?.textContent?.trim()).toBe('Back to www.example.org');
  });

  test('without a Referer the link goes to the home of `_next`’s site; a refused `_next` is not carried', async () => {
    const withNext = await navigate('/api/newsletter', { email: 'nope', _next: THANKS }, { referer: '' });
    const doc = parse(await (await fetch(`${site.url}${withNext.headers.get('location')}`, { headers: NAVIGATION })).text());
    expect(doc.querySelector('a[data-back]')?.getAttribute('href')).toBe(`${OWNER}/`);
    expect(doc.querySelector('form#newsletter-form input[name="_next"]')?.getAttribute('value')).toBe(THANKS);

    const evil = await navigate('/api/newsletter', { email: 'nope', _next: 'https://evil.test/' }, { referer: '' });
    const page = await (await fetch(`${site.url}${evil.headers.get('location')}`, { headers: NAVIGATION })).text();
    expect(page).not.toContain('evil.test');
    // The post's Origin is the owner's: the link goes to its home (issue 39 item 9b).
    expect(parse(page).querySelector('a[data-back]')?.getAttribute('href')).toBe(`${OWNER}/`);
  });

  test('a post from this server’s own page shows no link back', async () => {
    const response = await navigate(
      '/api/contact',
      { ...TYPED, email: 'not an address' },
      { origin: 'https://forms.example.com', referer: 'https://forms.example.com/contact' },
    );
    const doc = parse(await (await fetch(`${site.url}${response.headers.get('location')}`, { headers: NAVIGATION })).text());
    expect(doc.querySelector('a[data-back]')).toBeNull();
    expect(doc.querySelector('input[name="_next"]')).toBeNull();
  });
});

describe('/forms.js', () => {
  test('is served as JavaScript with a short cache, for a script tag on any site', async () => {
    const response = await fetch(`${site.url}/forms.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('public, max-age=600');
    // A script tag needs no CORS; a resource policy of same-origin would block it.
    expect(response.headers.get('cross-origin-resource-policy')).toBeNull();
    const body = await response.text();
    expect(body).toContain('/api/challenge');
    expect(body.length).toBeGreaterThan(1000);
  });

  test('the challenge it asks for answers the owner’s origin with CORS', async () => {
    const response = await fetch(`${site.url}/api/challenge`, { headers: { origin: OWNER, accept: 'application/json' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(OWNER);
  });
});
