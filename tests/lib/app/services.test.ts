import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { hashPassword } from '../../../packages/site-forms/src/lib/admin/password.ts';
import { createServices, type Services } from '../../../packages/site-forms/src/lib/app/services.ts';
import { requireConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';
import { eventually, type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';

/**
 * The services as the server builds them from its configuration (createServices), over a real
 * SQLite file in a temporary folder, the test SMTP server and a fake Mailchimp: which parts each
 * configuration brings, that they are wired to one another, and how they start and close.
 */
const MAIL = { CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'site@example.com' };
const ADA = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more.', honeypot: '' };
const GRACE = { name: 'Grace Hopper', email: 'grace@example.org', message: 'A question about the compiler.', honeypot: '' };
const EVIDENCE = { page: '/newsletter', text: 'I would like the newsletter.', version: 'v1', client: '203.0.113.9' };

let smtp: FakeSmtpServer;
let mailchimp: FakeHttpServer;
let ownerHash: string;
beforeAll(async () => {
  smtp = await startSmtpServer();
  mailchimp = await startFakeHttpServer(replyJson(200, { id: 'member-1', status: 'subscribed' }));
  ownerHash = await hashPassword('correct horse battery staple');
});
afterAll(async () => {
  await Promise.all([smtp.close(), mailchimp.close()]);
});

let dataDir: string;
let services: Services | undefined;
let logs: Array<Record<string, unknown>>;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'site-forms-services-'));
  logs = [];
  smtp.received.splice(0);
  mailchimp.requests.splice(0);
});
afterEach(async () => {
  await services?.close();
  services = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

function build(env: Record<string, string>): Services {
  const logger = createLogger({ level: 'info', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  services = createServices(requireConfig({ DATA_DIR: dataDir, ...env }), logger);
  return services;
}
const mailTo = (address: string) => smtp.received.filter((mail) => mail.to.includes(address));

describe('without mail, webhooks, admin or a provider', () => {
  test('nothing but the store, the local list and the housekeeping; starting runs the housekeeping alone', async () => {
    const s = build({});
    expect(s.submissions).toBe(s.store.submissions);
    expect(s.events).toBe(s.webhooks.events);
    expect(s.provider.name).toBe('local');
    expect([s.worker, s.webhooks.worker, s.signups.worker, s.optIn, s.consents]).toEqual([undefined, undefined, undefined, undefined, undefined]);
    // The admin is built always (issue 42: people may be added without ADMIN_PASSWORD_HASH), and off.
    await expect(s.admin!.isOn()).resolves.toBe(false);
    s.start();
    // Started once by start(): a second start is refused.
    expect(s.housekeeping.start()).toBe(false);
    expect(() => s.signups.poke()).not.toThrow();
    s.onStored(1);
  });

  test('an unsubscribe takes the address off the local list, once', async () => {
    const s = build({});
    await s.store.subscribers.add('ada@example.org', new Date('2026-01-02T00:00:00.000Z'));
    await expect(s.unsubscribeLocal('ada@example.org')).resolves.toBe(true);
    await expect(s.unsubscribeLocal('ada@example.org')).resolves.toBe(false);
    await expect(s.store.subscribers.list()).resolves.toEqual([]);
  });

  test('a signup put in the queue is waiting there', async () => {
    const s = build({});
    const id = await s.signups.enqueue('ada@example.org', 'mailchimp', new Date('2026-01-02T00:00:00.000Z'));
    await expect(s.store.sql.all('SELECT id, email, provider, status, next_attempt_at FROM signup_queue')).resolves.toEqual([
      { id, email: 'ada@example.org', provider: 'mailchimp', status: 'waiting', next_attempt_at: '2026-01-02T00:00:30.000Z' },
    ]);
  });

  test('closing stops the housekeeping and closes the database', async () => {
    const s = build({});
    s.start();
    await s.close();
    services = undefined;
    await expect(s.store.sql.all('SELECT 1')).rejects.toThrow();
  });
});

describe('with a mail server', () => {
  test('a message stored before the start goes out when started; one stored after, when the worker is told', async () => {
    const s = build({ ...MAIL, SMTP_URL: smtp.url() });
    await s.submissions.save(ADA);
    s.start();
    await eventually('the first message', () => mailTo('owner@example.com').length === 1, 5_000);
    const second = await s.submissions.save(GRACE);
    s.onStored(second);
    await eventually('the second message', () => mailTo('owner@example.com').length === 2, 3_500);
    const [first, next] = mailTo('owner@example.com');
    expect(first!.from).toBe('site@example.com');
    expect(first!.raw).toContain('Hello, I would like to know more.');
    expect(next!.raw).toContain('A question about the compiler.');
  });

  test('a certificate left unchecked is warned about once, by the mailer, at the start', () => {
    build({ ...MAIL, SMTP_URL: smtp.url(), SMTP_TLS_REJECT_UNAUTHORIZED: 'false' });
    expect(logs.filter((line) => line.event === 'contact.smtp_tls_unchecked').map((line) => line.level)).toEqual(['warn']);
  });

  test('with the automatic reply, the visitor is answered as well as the owner told', async () => {
    const s = build({ ...MAIL, SMTP_URL: smtp.url(), AUTO_REPLY: 'true', AUTO_REPLY_SUBJECT: 'Thanks, {name}', AUTO_REPLY_TEXT: 'We got your message.' });
    expect(s.webhooks.worker).toBeDefined();
    s.start();
    // A message whose post carried a solved proof: only such a sender is answered (decision 0149).
    s.onStored((await s.submissions.receive({ ...ADA, held: undefined, shownPerson: true })).id);
    await eventually('the automatic reply', () => mailTo('ada@example.org').length === 1, 5_000);
    expect(mailTo('ada@example.org')[0]!.raw).toContain('We got your message.');
    await eventually('the message to the owner', () => mailTo('owner@example.com').length === 1, 5_000);
  });
});

describe('with the admin', () => {
  test('it checks the owner’s password and keeps the retention', async () => {
    const s = build({ ADMIN_PASSWORD_HASH: ownerHash, RETENTION_DAYS: '30' });
    expect(s.admin?.retentionDays).toBe(30);
    await expect(s.admin!.deps.checkPassword('correct horse battery staple')).resolves.toBe(true);
    await expect(s.admin!.deps.checkPassword('wrong')).resolves.toBe(false);
  });

  test('a held message shows its reasons; one never judged shows none', async () => {
    const s = build({ ADMIN_PASSWORD_HASH: ownerHash });
    const held = await s.spam.store.hold(ADA, { reasons: ['too many links', 'a known spam phrase'] });
    const kept = await s.submissions.save(GRACE);
    await expect(s.admin!.message(held)).resolves.toMatchObject({ spamReasons: ['too many links', 'a known spam phrase'] });
    await expect(s.admin!.message(kept)).resolves.toMatchObject({ spamReasons: [] });
  });

  test('the owner’s “spam” holds a message, and “not spam” sends it at once', async () => {
    const s = build({ ...MAIL, SMTP_URL: smtp.url(), ADMIN_PASSWORD_HASH: ownerHash });
    const id = await s.submissions.save(ADA);
    await expect(s.admin!.deps.commands.markSpam(id, new Date())).resolves.toMatchObject({ found: true, changed: true });
    await expect(s.store.outbox.find(id)).resolves.toMatchObject({ status: 'spam' });
    s.start();
    // The daily digest of held spam may go out at the start too: only the message itself counts here.
    const messages = () => mailTo('owner@example.com').filter((mail) => !mail.raw.includes('Held as spam'));
    // A pass by hand joins the first one under way: once it ends, it has found nothing to send, so only
    // the release's poke can send the message before the next poll (5 s).
    await s.worker!.deliverDue();
    expect(messages()).toEqual([]);
    await expect(s.admin!.deps.commands.release(id, new Date())).resolves.toMatchObject({ found: true, changed: true });
    await eventually('the released message', () => messages().length === 1, 3_500);
    expect(messages()[0]!.raw).toContain('Hello, I would like to know more.');
  });

  test('the export holds the stored messages', async () => {
    const s = build({ ADMIN_PASSWORD_HASH: ownerHash });
    await s.submissions.save(ADA);
    let csv = '';
    for await (const chunk of s.admin!.deps.exports.messages('csv', { excel: false })) csv += chunk;
    expect(csv).toContain('ada@example.org');
    expect(csv).toContain('Hello, I would like to know more.');
  });
});

describe('double opt-in', () => {
  test('with Resend the site sends the confirmation itself, and keeps no consents of its own', async () => {
    const s = build({
      ...MAIL,
      SMTP_URL: smtp.url(),
      PUBLIC_URL: 'https://forms.example.org',
      NEWSLETTER_DOUBLE_OPT_IN: 'true',
      NEWSLETTER_PROVIDER: 'resend',
      RESEND_API_KEY: 're_test_key',
      RESEND_SEGMENT_ID: 'seg_1',
    });
    expect(s.consents).toBeUndefined();
    await expect(s.optIn!.ask('grace@example.org', EVIDENCE, new Date())).resolves.toBe('sent');
    expect(mailTo('grace@example.org').map((mail) => mail.raw.includes('https://forms.example.org/'))).toEqual([true]);
  });

  test('with the local list, the site sends it too', () => {
    const s = build({ ...MAIL, SMTP_URL: smtp.url(), PUBLIC_URL: 'https://forms.example.org', NEWSLETTER_DOUBLE_OPT_IN: 'true' });
    expect(s.optIn).toBeDefined();
    expect(s.consents).toBeUndefined();
  });

  test('with Mailchimp, which confirms itself, the site only keeps the consent records', () => {
    const s = build({
      ...MAIL,
      SMTP_URL: smtp.url(),
      PUBLIC_URL: 'https://forms.example.org',
      NEWSLETTER_DOUBLE_OPT_IN: 'true',
      MAILCHIMP_API_KEY: 'key-us21',
      MAILCHIMP_LIST_ID: 'abc123',
      MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0`,
    });
    expect(s.optIn).toBeUndefined();
    expect(s.consents).toBeDefined();
  });
});

describe('with a provider', () => {
  test('a signup waiting in the queue goes to the provider when the services start', async () => {
    const s = build({ MAILCHIMP_API_KEY: 'key-us21', MAILCHIMP_LIST_ID: 'abc123', MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0` });
    // Enqueued an hour ago: its next try is due.
    await s.signups.enqueue('ada@example.org', 'mailchimp', new Date(Date.now() - 3_600_000));
    s.start();
    await eventually('the provider’s request', () => mailchimp.requests.length === 1, 5_000);
    expect(mailchimp.requests[0]).toMatchObject({ method: 'POST', url: '/3.0/lists/abc123/members' });
    await eventually('the signup to be added', async () => {
      const rows = await s.store.sql.all<{ status: string }>('SELECT status FROM signup_queue');
      return rows[0]?.status === 'added';
    });
  });
});
