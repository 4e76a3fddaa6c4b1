import { createServer } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Window } from 'happy-dom';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type FakeHttpServer, type FakeReply, replyJson, startFakeHttpServer } from '../support/fake-http.ts';
import { type Site, startSite, NAVIGATION } from '../support/site.ts';
import { holdWriteLock } from '../support/sqlite-lock.ts';

/**
 * Every refusal a person without JavaScript can reach, over HTTP to the built server (decision
 * 0133): the post is answered `303 See Other` to the form's address with a draft's id; the GET
 * shows the form again with the refusal's status, what was typed (or, for 413, nothing), the
 * message and the focus on it; a second GET (a reload) shows the same page and posts nothing.
 */

const TYPED = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Typed with care, and not to be typed twice.', honeypot: '' };

function navigate(site: Site, path: string, fields: Record<string, string>, origin = site.url): Promise<Response> {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  return fetch(`${site.url}${path}`, { method: 'POST', body, headers: { ...NAVIGATION, origin }, redirect: 'manual' });
}

function parse(html: string): Document {
  const window = new Window();
  window.document.write(html);
  return window.document as unknown as Document;
}

const postsAnswered = (site: Site) => site.logs.filter((line) => typeof line === 'object' && line.event === 'form.request').length;

/** What a refusal's page must show. */
type Expected = {
  status: number;
  /** The form's alert, or the field's message when the refusal is about a field. */
  message: [selector: string, text: string];
  /** Each field's id and the value it must show again. */
  values: Record<string, string>;
  focused: string;
  retryAfter?: boolean;
};

/**
 * Follows a refused post's 303, reads the page, reloads it, and checks both against `expected`;
 * answers the page's document.
 */
async function expectDraftPage(site: Site, posted: Response, endpoint: string, expected: Expected): Promise<Document> {
  expect(posted.status).toBe(303);
  expect(posted.headers.get('cache-control')).toBe('no-store');
  const location = posted.headers.get('location') ?? '';
  expect(location).toMatch(new RegExp(`^${endpoint}\\?draft=[\\w-]{32}$`));
  await posted.arrayBuffer();
  const answered = postsAnswered(site);

  const shown = await fetch(`${site.url}${location}`, { headers: NAVIGATION, redirect: 'manual' });
  expect(shown.status).toBe(expected.status);
  expect(shown.headers.get('content-type')).toMatch(/^text\/html/);
  expect(shown.headers.get('cache-control')).toBe('no-store');
  if (expected.retryAfter) expect(Number(shown.headers.get('retry-after'))).toBeGreaterThan(0);
  else expect(shown.headers.get('retry-after')).toBeNull();
  const html = await shown.text();
  const doc = parse(html);
  expect(doc.title).toMatch(/^Error: /);
  expect(doc.querySelector(expected.message[0])?.textContent).toBe(expected.message[1]);
  for (const [id, value] of Object.entries(expected.values)) {
    const element = doc.getElementById(id);
    const shownValue = element?.tagName === 'TEXTAREA' ? element.textContent?.replace(/^\n/, '') : element?.getAttribute('value');
    expect(shownValue ?? '', id).toBe(value);
  }
  expect([...doc.querySelectorAll('[autofocus]')].map((element) => element.id)).toEqual([expected.focused]);

  const reload = await fetch(`${site.url}${location}`, { headers: NAVIGATION, redirect: 'manual' });
  expect(reload.status).toBe(expected.status);
  await expect(reload.text()).resolves.toBe(html);
  expect(postsAnswered(site)).toBe(answered);
  return doc;
}

const CONTACT_VALUES = { 'contact-name': TYPED.name, 'contact-email': TYPED.email, 'contact-message': TYPED.message };
const NO_CONTACT_VALUES = { 'contact-name': '', 'contact-email': '', 'contact-message': '' };

describe('the refusals of the contact form and the guard', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite({ RATE_LIMIT_MAX: '1', LOG_CLIENT_LINES: 'all' });
  });
  afterAll(() => site.stop());

  test('400: each message at its field, what was typed kept, the first invalid field focused', async () => {
    const posted = await navigate(site, '/api/contact', { ...TYPED, name: 'A', email: 'ada@localhost' });
    await expectDraftPage(site, posted, '/api/contact', {
      status: 400,
      message: ['#contact-name-error', 'Name must be between 2 and 100 characters'],
      values: { ...CONTACT_VALUES, 'contact-name': 'A', 'contact-email': 'ada@localhost' },
      focused: 'contact-name',
    });
  });

  test('403: a post from another website, the values kept and the message focused', async () => {
    const posted = await navigate(site, '/api/contact', TYPED, 'https://evil.example');
    await expectDraftPage(site, posted, '/api/contact', {
      status: 403,
      message: ['#contact-form-error', 'Forms on this site cannot be posted from another website'],
      values: CONTACT_VALUES,
      focused: 'contact-form-error',
    });
  });

  test('413: refused from its Content-Length, nothing read so nothing kept, the limit explained and focused', async () => {
    const posted = await navigate(site, '/api/contact', { ...TYPED, message: 'x'.repeat(70 * 1024) });
    await expectDraftPage(site, posted, '/api/contact', {
      status: 413,
      message: ['#contact-form-error', 'The form is too large; the limit is 64 KB'],
      values: NO_CONTACT_VALUES,
      focused: 'contact-form-error',
    });
  });

  test('429: past the limit, with Retry-After, the values kept and the message focused', async () => {
    expect((await navigate(site, '/api/contact', TYPED)).status).toBe(303);
    const posted = await navigate(site, '/api/contact', TYPED);
    await expectDraftPage(site, posted, '/api/contact', {
      status: 429,
      message: ['#contact-form-error', 'Too many attempts. Please try again in 10 minutes.'],
      values: CONTACT_VALUES,
      focused: 'contact-form-error',
      retryAfter: true,
    });
  });
});

describe('the newsletter provider refuses', () => {
  let site: Site;
  let mailchimp: FakeHttpServer;
  beforeAll(async () => {
    mailchimp = await startFakeHttpServer(replyJson(200, { status: 'subscribed' }));
    site = await startSite({ MAILCHIMP_API_KEY: 'k-us1', MAILCHIMP_LIST_ID: 'l', MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0` });
  });
  afterAll(async () => {
    await site.stop();
    await mailchimp.close();
  });

  test('502: a provider set up wrongly (it redirects), the address kept and the message focused; one call to the provider', async () => {
    const redirect: FakeReply = (_, res) => {
      res.writeHead(302, { location: 'https://elsewhere.example/', 'content-type': 'application/json' });
      res.end('{}');
    };
    mailchimp.reply(redirect);
    mailchimp.requests.length = 0;
    const posted = await navigate(site, '/api/newsletter', { email: 'reader@example.com' });
    await expectDraftPage(site, posted, '/api/newsletter', {
      status: 502,
      message: ['#newsletter-form-error', 'We could not subscribe you right now. Please try again later.'],
      values: { 'newsletter-email': 'reader@example.com' },
      focused: 'newsletter-form-error',
    });
    expect(mailchimp.requests).toHaveLength(1);
  });
});

describe('the confirmation email cannot be sent (double opt-in)', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite({
      SMTP_URL: `smtp://127.0.0.1:${await closedPort()}`,
      CONTACT_TO: 'owner@example.com',
      CONTACT_FROM: 'forms@example.com',
      PUBLIC_URL: 'https://news.example',
      NEWSLETTER_DOUBLE_OPT_IN: 'true',
    });
  });
  afterAll(() => site.stop());

  test('503 with Retry-After, the address kept and the message focused', async () => {
    // The site's origin is PUBLIC_URL's.
    const posted = await navigate(site, '/api/newsletter', { email: 'reader@example.com' }, 'https://news.example');
    await expectDraftPage(site, posted, '/api/newsletter', {
      status: 503,
      message: ['#newsletter-form-error', 'We could not send the confirmation email right now. Please try again in a few minutes.'],
      values: { 'newsletter-email': 'reader@example.com' },
      focused: 'newsletter-form-error',
      retryAfter: true,
    });
  });
});

describe('the database fails to store a message', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite({ DATABASE_STATEMENT_TIMEOUT_MS: '3000' });
  });
  afterAll(() => site.stop());

  test('500: the message could not be stored, the draft is, and the values are shown again with the message focused', async () => {
    // A write that fails for the messages only, as a full or damaged table would.
    // Waits out the server's own writes at start (housekeeping) rather than failing on "database is locked".
    const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { timeout: 5_000 });
    db.exec("CREATE TRIGGER refuse_messages BEFORE INSERT ON submissions BEGIN SELECT RAISE(ABORT, 'refused by the test'); END");
    try {
      const posted = await navigate(site, '/api/contact', TYPED);
      await expectDraftPage(site, posted, '/api/contact', {
        status: 500,
        message: ['#contact-form-error', 'Internal server error'],
        values: CONTACT_VALUES,
        focused: 'contact-form-error',
      });
    } finally {
      db.exec('DROP TRIGGER refuse_messages');
      db.close();
    }
  });

  test('500 while another process holds the lock: no draft either, so at once the page answers the post, the values kept', async () => {
    const holder = await holdWriteLock(join(site.dataDir, 'forms.db'));
    try {
      const started = performance.now();
      const posted = await navigate(site, '/api/contact', TYPED);
      // The message waited 3 s for the lock; the draft did not wait as long again.
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(posted.status).toBe(500);
      expect(posted.headers.get('location')).toBeNull();
      expect(posted.headers.get('cache-control')).toBe('no-store');
      const doc = parse(await posted.text());
      expect(doc.querySelector('#contact-form-error')?.textContent).toBe('Internal server error');
      expect(doc.querySelector('#contact-name')?.getAttribute('value')).toBe(TYPED.name);
      expect(doc.querySelector('#contact-message')?.textContent?.replace(/^\n/, '')).toBe(TYPED.message);
      expect([...doc.querySelectorAll('[autofocus]')].map((element) => element.id)).toEqual(['contact-form-error']);
    } finally {
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
    }
    expect(site.logs).toContainEqual(expect.objectContaining({ event: 'form.draft_not_kept', route: '/api/contact', level: 'warn' }));
  });
});

/** A port nothing listens on: an SMTP server there refuses every connection. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
