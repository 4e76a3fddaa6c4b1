import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { siteOptIn } from '../../support/opt-in.ts';
import { createLogger, silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { consentVersion, createConsents } from '../../../packages/site-forms/src/lib/newsletter/consents.ts';
import { createLocalProvider } from '../../../packages/site-forms/src/lib/newsletter/local.ts';
import { createMailchimpProvider } from '../../../packages/site-forms/src/lib/newsletter/mailchimp.ts';
import { handleNewsletter, handleNewsletterConfirmation, handleUnsubscribe } from '../../../packages/site-forms/src/lib/newsletter/newsletter-handlers.ts';
import { createSignups } from '../../../packages/site-forms/src/lib/newsletter/signups.ts';
import { createAbuseLimits } from '../../../packages/site-forms/src/lib/rate-limit.ts';
import { createSpamService } from '../../../packages/site-forms/src/lib/spam/service.ts';
import { DEFAULT_WEIGHING } from '../../../packages/site-forms/src/lib/spam/weights.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';
import { parseMail } from '../../support/mime.ts';
import { type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';
import { testEngines } from '../../support/stores.ts';

// The roads of the newsletter handlers without the site's own confirmation mail: the consent a
// provider-confirmed signup keeps, the news of a subscription, the queue for a busy provider, the
// per-address limit, and the confirm and unsubscribe links' refusals. A real store on both engines,
// a real HTTP server standing in for Mailchimp.
let mailchimp: FakeHttpServer;
let smtp: FakeSmtpServer;
beforeAll(async () => {
  mailchimp = await startFakeHttpServer();
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await mailchimp.close();
  await smtp.close();
});

const CONSENT = 'I would like to receive the newsletter by email. I can unsubscribe at any time.';
const MEMBER = replyJson(200, { id: 'abc', status: 'pending' });
const BUSY = replyJson(503, { title: 'Service Unavailable', status: 503 }, { 'content-type': 'application/problem+json' });
const BUSY_TEXT = 'The newsletter service is busy right now. Please try again in a few minutes.';
const remote = () => createMailchimpProvider({ apiKey: 'key123-us21', listId: 'list42', baseUrl: `${mailchimp.url}/3.0` }, { doubleOptIn: true });

function post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  return new Request(`https://www.example.com${path}`, { method: 'POST', body, headers });
}

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const logged = () => lines.map(({ time: _, ...rest }) => rest);
  return { logger, logged };
}

describe.each(testEngines())('the newsletter handlers on $name', (engine) => {
  test.skipIf(!engine.available)(
    'a signup Mailchimp confirms itself keeps the consent as pending, with the page and the truncated address; a refused one keeps none',
    async () => {
      const { store } = await engine.open();
      const consents = createConsents(store.sql);
      const events = { record: vi.fn(async (_type: string, _data: Record<string, unknown>) => {}) };
      mailchimp.reply(MEMBER);
      const before = Date.now();
      await expect(
        handleNewsletter(
          post('/api/newsletter', { email: 'Ada@Example.org' }, { referer: 'https://www.example.com/blog/post/' }),
          { provider: remote(), logger: silentLogger, consents, events },
          { ip: '198.51.100.23' },
        ),
      ).resolves.toEqual({ kind: 'accepted', awaitingConfirmation: true });
      const record = await consents.find('ada@example.org');
      expect(record).toEqual({
        email: 'ada@example.org',
        status: 'pending',
        signedUpAt: expect.any(String),
        confirmedAt: null,
        page: '/blog/post/',
        text: CONSENT,
        version: consentVersion(CONSENT),
        client: '198.51.100.0/24',
      });
      expect(Date.parse(record!.signedUpAt)).toBeGreaterThanOrEqual(before - 1);
      expect(events.record.mock.calls).toEqual([['newsletter.subscribed', { email: 'Ada@Example.org', provider: 'mailchimp' }]]);

      // Without the client's address, the record says so.
      await handleNewsletter(post('/api/newsletter', { email: 'grace@example.org' }), { provider: remote(), logger: silentLogger, consents });
      await expect(consents.find('grace@example.org')).resolves.toMatchObject({ page: '/', client: 'unknown' });

      mailchimp.reply(BUSY);
      await expect(
        handleNewsletter(post('/api/newsletter', { email: 'busy@example.org' }), { provider: remote(), logger: silentLogger, consents, events }),
      ).resolves.toMatchObject({ kind: 'failure', status: 503 });
      await expect(consents.find('busy@example.org')).resolves.toBeUndefined();
      expect(events.record).toHaveBeenCalledTimes(1);
    },
  );

  test.skipIf(!engine.available)('a subscription whose news cannot be recorded is still accepted, and the warning names the event', async () => {
    const { logger, logged } = capture();
    const events = { record: vi.fn(async () => Promise.reject(new Error('database is locked'))) };
    mailchimp.reply(MEMBER);
    await expect(handleNewsletter(post('/api/newsletter', { email: 'ada@example.org' }), { provider: remote(), logger, events })).resolves.toEqual({
      kind: 'accepted',
    });
    expect(logged()).toContainEqual({ level: 'warn', event: 'webhook.event_not_recorded', type: 'newsletter.subscribed', error: 'Error: database is locked' });
  });

  test.skipIf(!engine.available)(
    "a busy provider, by default: the spec's failure, 503 with Retry-After, and nothing queued though a queue is at hand",
    async () => {
      const { store } = await engine.open();
      const queue = createSignups(store.sql);
      const signups = { enqueue: queue.enqueue, poke: vi.fn() };
      const { logger, logged } = capture();
      mailchimp.reply(BUSY);
      await expect(handleNewsletter(post('/api/newsletter', { email: 'ada@example.org' }), { provider: remote(), logger, signups })).resolves.toEqual({
        kind: 'failure',
        status: 503,
        error: BUSY_TEXT,
        headers: { 'retry-after': '120' },
        values: { email: 'ada@example.org' },
        field: undefined,
      });
      await expect(queue.pending(10)).resolves.toEqual([]);
      expect(signups.poke).not.toHaveBeenCalled();
      expect(logged()).toEqual([
        { level: 'warn', event: 'newsletter.subscribe_failed', provider: 'mailchimp', reason: 'unavailable', detail: 'HTTP 503 Service Unavailable' },
      ]);
    },
  );

  test.skipIf(!engine.available)(
    'a busy provider with NEWSLETTER_QUEUE_ON_OUTAGE: the signup is queued and the worker poked, the visitor accepted',
    async () => {
      const { store } = await engine.open();
      const queue = createSignups(store.sql);
      const signups = { enqueue: queue.enqueue, poke: vi.fn() };
      const { logger, logged } = capture();
      mailchimp.reply(BUSY);
      await expect(
        handleNewsletter(post('/api/newsletter', { email: 'ada@example.org' }), { provider: remote(), logger, signups, queueOnOutage: true }),
      ).resolves.toEqual({
        kind: 'accepted',
      });
      expect(signups.poke).toHaveBeenCalledTimes(1);
      await expect(queue.pending(10)).resolves.toEqual([
        expect.objectContaining({ id: 1, email: 'ada@example.org', provider: 'mailchimp', status: 'waiting', attempts: 0 }),
      ]);
      expect(logged()).toEqual([{ level: 'warn', event: 'newsletter.signup_queued', provider: 'mailchimp', id: 1, detail: 'HTTP 503 Service Unavailable' }]);
    },
  );

  test.skipIf(!engine.available)('a queue that cannot store the signup: the visitor is asked to try later, as without a queue', async () => {
    const { store } = await engine.open();
    const queue = createSignups(store.sql);
    await store.close();
    const signups = { enqueue: queue.enqueue, poke: vi.fn() };
    const { logger, logged } = capture();
    mailchimp.reply(BUSY);
    await expect(
      handleNewsletter(post('/api/newsletter', { email: 'ada@example.org' }), { provider: remote(), logger, signups, queueOnOutage: true }),
    ).resolves.toEqual({
      kind: 'failure',
      status: 503,
      error: BUSY_TEXT,
      headers: { 'retry-after': '120' },
      values: { email: 'ada@example.org' },
      field: undefined,
    });
    expect(signups.poke).not.toHaveBeenCalled();
    expect(logged()).toEqual([
      { level: 'warn', event: 'newsletter.subscribe_failed', provider: 'mailchimp', reason: 'unavailable', detail: 'HTTP 503 Service Unavailable' },
    ]);
  });

  test.skipIf(!engine.available)(
    'the local list: a subscription is added and its news, if it cannot be recorded, logged without failing the visitor',
    async () => {
      const { store } = await engine.open();
      const provider = createLocalProvider(store.subscribers);
      const { logger, logged } = capture();
      const events = { record: vi.fn(async () => Promise.reject(new Error('no room'))) };
      await expect(handleNewsletter(post('/api/newsletter', { email: 'Ada@Example.org' }), { provider, logger, events })).resolves.toEqual({
        kind: 'accepted',
      });
      await expect(store.subscribers.list()).resolves.toEqual([{ email: 'ada@example.org', created: expect.any(String) }]);
      // Hint: a field named `event` replaces the line's own event name (log.ts), so only the level and the error are pinned here.
      expect(logged()).toEqual([expect.objectContaining({ level: 'warn', error: 'Error: no room' })]);
    },
  );

  test.skipIf(!engine.available)('an address the provider refuses is answered at once, never queued', async () => {
    const { store } = await engine.open();
    const queue = createSignups(store.sql);
    const signups = { enqueue: queue.enqueue, poke: vi.fn() };
    mailchimp.reply(replyJson(400, { title: 'Forgotten Email Not Subscribed', status: 400 }, { 'content-type': 'application/problem+json' }));
    await expect(
      handleNewsletter(post('/api/newsletter', { email: 'gone@example.org' }), { provider: remote(), logger: silentLogger, signups }),
    ).resolves.toMatchObject({ kind: 'failure', status: 400, field: 'email', values: { email: 'gone@example.org' } });
    await expect(queue.pending(10)).resolves.toEqual([]);
    expect(signups.poke).not.toHaveBeenCalled();
  });

  test.skipIf(!engine.available)('a subscription without the proof the owner requires is refused with the address kept in the form', async () => {
    const { store } = await engine.open();
    const spam = {
      service: createSpamService(
        {
          enabled: true,
          maxLinks: 2,
          retentionDays: 30,
          turnstile: undefined,
          akismet: undefined,
          newsletterRequiresProof: true,
          weighing: DEFAULT_WEIGHING,
          digestTime: undefined,
        },
        { secret: 'handler-roads-secret', used: store.spam.usedChallenges, logger: silentLogger, blog: 'https://www.example.com' },
      ),
    };
    const provider = createLocalProvider(store.subscribers);
    await expect(handleNewsletter(post('/api/newsletter', { email: 'ada@example.org' }), { provider, logger: silentLogger, spam })).resolves.toStrictEqual({
      kind: 'failure',
      status: 400,
      error: 'We could not confirm that this came from our signup form. Please turn on JavaScript for this site, reload the page and try again.',
      values: { email: 'ada@example.org' },
    });
    await expect(store.subscribers.list()).resolves.toEqual([]);
  });

  test.skipIf(!engine.available)('one-click unsubscribe from the local list takes the address off it; a token in the address wins over the form', async () => {
    const { store } = await engine.open();
    const consents = createConsents(store.sql);
    const provider = createLocalProvider(store.subscribers);
    const tokens = await consents.request('ada@example.org', { page: '/', text: CONSENT, version: consentVersion(CONSENT), client: 'unknown' }, new Date());
    await store.subscribers.add('ada@example.org', new Date());
    const optIn = { consents, ask: async () => 'sent' as const };
    const { logger, logged } = capture();
    const unsubscribeLocal = (email: string) => store.subscribers.remove(email);

    await expect(
      handleUnsubscribe(post(`/api/newsletter/unsubscribe?token=${tokens!.unsubscribe}`, { token: 'forged' }), { provider, logger, optIn, unsubscribeLocal }),
    ).resolves.toEqual({ kind: 'accepted', thanks: '/thank-you/unsubscribed/' });
    await expect(store.subscribers.list()).resolves.toEqual([]);
    await expect(consents.find('ada@example.org')).resolves.toMatchObject({ status: 'unsubscribed' });
    expect(logged()).toEqual([]);

    // A form a mail program posts as JSON still carries the token in the address.
    const again = await consents.request('grace@example.org', { page: '/', text: CONSENT, version: consentVersion(CONSENT), client: 'unknown' }, new Date());
    const json = new Request(`https://www.example.com/api/newsletter/unsubscribe?token=${again!.unsubscribe}`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    // No unsubscribeLocal given: the local list is left as it is, and the link still works.
    await expect(handleUnsubscribe(json, { provider, logger, optIn })).resolves.toEqual({ kind: 'accepted', thanks: '/thank-you/unsubscribed/' });
    await expect(consents.find('grace@example.org')).resolves.toMatchObject({ status: 'unsubscribed' });
  });
});

describe.each(testEngines())("the site's double opt-in through the handlers, logged, on $name", (engine) => {
  const open = async () => {
    const { store } = await engine.open();
    return { store, ...siteOptIn(store.sql, smtp.url()) };
  };
  const confirmToken = () => /\/newsletter\/confirm\/\?token=([\w-]+)/.exec(parseMail(smtp.received.at(-1)!.raw).text)![1]!;

  test.skipIf(!engine.available)('a signup logs whether its mail went; a second one within minutes is thanked the same, and sends none', async () => {
    const { optIn } = await open();
    const { logger, logged } = capture();
    const provider = createLocalProvider({ add: async () => {}, list: async () => [], remove: async () => false });
    const thanks = { kind: 'accepted', thanks: '/thank-you/confirm-subscription/', awaitingConfirmation: true };
    const before = smtp.received.length;
    await expect(handleNewsletter(post('/api/newsletter', { email: 'ada@example.org' }), { provider, logger, optIn })).resolves.toEqual(thanks);
    await expect(handleNewsletter(post('/api/newsletter', { email: 'ada@example.org' }), { provider, logger, optIn })).resolves.toEqual(thanks);
    expect(smtp.received.length).toBe(before + 1);
    expect(logged()).toEqual([
      { level: 'info', event: 'newsletter.confirmation_asked', sent: true },
      { level: 'info', event: 'newsletter.confirmation_asked', sent: false },
    ]);
  });

  test.skipIf(!engine.available)('spellings of one mailbox share its limit of confirmation mails: a fourth is refused with 429 and sends none', async () => {
    const { optIn } = await open();
    const provider = createLocalProvider({ add: async () => {}, list: async () => [], remove: async () => false });
    const limits = createAbuseLimits({ rateLimit: { max: 100, windowSeconds: 600 } }, silentLogger);
    const sentTo = () => smtp.received.filter((mail) => /@(gmail|googlemail)\.com$/.test(mail.to[0] ?? '')).map((mail) => mail.to[0]);
    const before = sentTo().length;
    const statuses = [];
    for (const email of ['bomb@gmail.com', 'bomb+1@gmail.com', 'b.o.m.b@googlemail.com', 'B.omb+2@Gmail.com']) {
      const outcome = await handleNewsletter(post('/api/newsletter', { email }), { provider, logger: silentLogger, optIn, limits });
      statuses.push(outcome.kind === 'failure' ? outcome.status : outcome.kind);
    }
    expect(statuses).toEqual(['accepted', 'accepted', 'accepted', 429]);
    expect(sentTo().slice(before)).toEqual(['bomb@gmail.com', 'bomb+1@gmail.com', 'b.o.m.b@googlemail.com']);
  });

  test.skipIf(!engine.available)('the confirming button logs the confirmation; news that cannot be recorded is a warning and does not undo it', async () => {
    const { store, optIn } = await open();
    const provider = createLocalProvider(store.subscribers);
    await handleNewsletter(post('/api/newsletter', { email: 'ada@example.org' }), { provider, logger: silentLogger, optIn });
    const { logger, logged } = capture();
    const events = { record: vi.fn(async () => Promise.reject(new Error('no room'))) };
    await expect(
      handleNewsletterConfirmation(post('/api/newsletter/confirm', { token: confirmToken() }), { provider, logger, optIn, events }),
    ).resolves.toEqual({ kind: 'accepted' });
    expect(logged()).toEqual([
      { level: 'info', event: 'newsletter.confirmed', provider: 'local' },
      { level: 'warn', event: 'webhook.event_not_recorded', type: 'newsletter.confirmed', error: 'Error: no room' },
    ]);
    expect((await store.subscribers.list()).map((s) => s.email)).toEqual(['ada@example.org']);
  });

  test.skipIf(!engine.available)('with a queue at hand, a confirmation the provider takes, or refuses, queues nothing', async () => {
    const { store, optIn } = await open();
    const queue = createSignups(store.sql);
    const signups = { enqueue: queue.enqueue, poke: vi.fn() };
    await handleNewsletter(post('/api/newsletter', { email: 'taken@example.org' }), { provider: remote(), logger: silentLogger, optIn });
    mailchimp.reply(MEMBER);
    await expect(
      handleNewsletterConfirmation(post('/api/newsletter/confirm', { token: confirmToken() }), { provider: remote(), logger: silentLogger, optIn, signups }),
    ).resolves.toEqual({ kind: 'accepted' });
    await handleNewsletter(post('/api/newsletter', { email: 'refused@example.org' }), { provider: remote(), logger: silentLogger, optIn });
    mailchimp.reply(replyJson(400, { title: 'Member In Compliance State', status: 400 }, { 'content-type': 'application/problem+json' }));
    await expect(
      handleNewsletterConfirmation(post('/api/newsletter/confirm', { token: confirmToken() }), { provider: remote(), logger: silentLogger, optIn, signups }),
    ).resolves.toMatchObject({ kind: 'failure', status: 400 });
    await expect(queue.pending(10)).resolves.toEqual([]);
    expect(signups.poke).not.toHaveBeenCalled();
  });

  test.skipIf(!engine.available)('a provider busy at the confirmation, with no queue, asks the person to try later', async () => {
    const { consents, optIn } = await open();
    await handleNewsletter(post('/api/newsletter', { email: 'busy@example.org' }), { provider: remote(), logger: silentLogger, optIn });
    mailchimp.reply(BUSY);
    const { logger, logged } = capture();
    await expect(
      handleNewsletterConfirmation(post('/api/newsletter/confirm', { token: confirmToken() }), { provider: remote(), logger, optIn }),
    ).resolves.toEqual({ kind: 'failure', status: 503, error: BUSY_TEXT, headers: { 'retry-after': '120' } });
    expect(logged()).toEqual([
      { level: 'warn', event: 'newsletter.confirmed_not_added', provider: 'mailchimp', reason: 'unavailable', detail: 'HTTP 503 Service Unavailable' },
    ]);
    // The consent is confirmed all the same: the link has been used.
    await expect(consents.find('busy@example.org')).resolves.toMatchObject({ status: 'confirmed' });
  });
});

describe('the newsletter handlers without a store', () => {
  const provider = { name: 'local' as const, subscribe: vi.fn(async (_email: string) => ({ ok: true }) as const) };
  const consents = createConsents({} as never);
  const optIn = { consents, ask: async () => 'sent' as const };

  test('a fourth subscription of one address in a day is refused with 429 and when to try again', async () => {
    const limits = createAbuseLimits({ rateLimit: { max: 5, windowSeconds: 600 } }, silentLogger);
    for (let n = 0; n < 3; n++) {
      await expect(handleNewsletter(post('/api/newsletter', { email: 'ada@example.org' }), { provider, logger: silentLogger, limits })).resolves.toEqual({
        kind: 'accepted',
      });
    }
    provider.subscribe.mockClear();
    const refused = await handleNewsletter(post('/api/newsletter', { email: 'ADA@example.org' }), { provider, logger: silentLogger, limits });
    expect(refused).toEqual({
      kind: 'failure',
      status: 429,
      error: expect.stringMatching(/^Too many attempts\. Please try again in 14\d\d minutes\.$/),
      headers: { 'retry-after': expect.stringMatching(/^8\d{4}$/) },
      values: { email: 'ADA@example.org' },
    });
    expect(provider.subscribe).not.toHaveBeenCalled();
  });

  test.each([
    ['no double opt-in', { token: 'abc' }, false],
    ['no token', {}, true],
  ])('confirming with %s is the expired-link answer, and adds nobody', async (_, fields, withOptIn) => {
    provider.subscribe.mockClear();
    await expect(
      handleNewsletterConfirmation(post('/api/newsletter/confirm', fields), { provider, logger: silentLogger, optIn: withOptIn ? optIn : undefined }),
    ).resolves.toEqual({ kind: 'failure', status: 400, error: 'This confirmation link has expired or was already used. Please subscribe again.' });
    expect(provider.subscribe).not.toHaveBeenCalled();
  });

  test('confirming with a body that is not a form is refused as such', async () => {
    const request = new Request('https://www.example.com/api/newsletter/confirm', {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    await expect(handleNewsletterConfirmation(request, { provider, logger: silentLogger, optIn })).resolves.toEqual({
      kind: 'failure',
      status: 415,
      error: 'Send the form as multipart/form-data or application/x-www-form-urlencoded',
    });
  });

  test('a form without an address keeps no value for it', async () => {
    await expect(handleNewsletter(post('/api/newsletter', { name: 'Ada' }), { provider, logger: silentLogger })).resolves.toStrictEqual({
      kind: 'failure',
      status: 400,
      error: 'Please enter a valid email address',
      field: 'email',
      values: {},
    });
  });

  test('a token sent as a file is no token', async () => {
    const body = new FormData();
    body.append('token', new Blob(['abc']), 'token.txt');
    const request = new Request('https://www.example.com/api/newsletter/unsubscribe', { method: 'POST', body });
    await expect(handleUnsubscribe(request, { provider, logger: silentLogger, optIn })).resolves.toEqual({
      kind: 'failure',
      status: 400,
      error: 'This unsubscribe link is not valid any more: you may already be unsubscribed.',
    });
  });

  test.each([
    ['no double opt-in', '/api/newsletter/unsubscribe?token=abc', {}, false],
    ['no token', '/api/newsletter/unsubscribe', {}, true],
    ['an empty token', '/api/newsletter/unsubscribe?token=', { token: 'abc' }, true],
  ])('unsubscribing with %s is the invalid-link answer', async (_, path, fields, withOptIn) => {
    const unsubscribeLocal = vi.fn(async () => true);
    await expect(
      handleUnsubscribe(post(path, fields), { provider, logger: silentLogger, optIn: withOptIn ? optIn : undefined, unsubscribeLocal }),
    ).resolves.toEqual({ kind: 'failure', status: 400, error: 'This unsubscribe link is not valid any more: you may already be unsubscribed.' });
    expect(unsubscribeLocal).not.toHaveBeenCalled();
  });
});
