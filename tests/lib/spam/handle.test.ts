import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import type { SpamConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { handleContact } from '../../../packages/site-forms/src/lib/contact/contact-handlers.ts';
import { createLogger, silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { handleNewsletter } from '../../../packages/site-forms/src/lib/newsletter/newsletter-handlers.ts';
import { renderJson } from '../../../packages/site-forms/src/lib/http/outcome.ts';
import { issueChallenge } from '../../../packages/site-forms/src/lib/spam/proof.ts';
import { createSpamService, NEWSLETTER_PROOF_ERROR } from '../../../packages/site-forms/src/lib/spam/service.ts';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { type FakeHttpServer, startFakeHttpServer } from '../../support/fake-http.ts';
import { AKISMET_TEST_KEY, replyAkismet, replyTurnstile, SPAM_ON, TURNSTILE_DUMMY_TOKEN, TURNSTILE_TEST_SECRETS } from '../../support/fake-spam-services.ts';
import { TEST_DATABASE } from '../../support/stores.ts';

const ON = SPAM_ON;
const SECRET = 'handler-test-secret';
const person = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.', honeypot: '' };

/** A post as the page's script sends it: a browser's fetch metadata. */
const BROWSER = { 'user-agent': 'TestBrowser/1', 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': 'empty' };
/** A post as curl sends it: no fetch metadata. */
const PROGRAM = { 'user-agent': 'curl/8.5.0' };

function post(path: string, fields: Record<string, string>, headers: Record<string, string> = BROWSER): Request {
  const body = new FormData();
  for (const [k, v] of Object.entries(fields)) body.append(k, v);
  return new Request(`http://site.test${path}`, { method: 'POST', body, headers });
}

async function proofIssued(msAgo: number): Promise<string> {
  const challenge = await issueChallenge({ secret: SECRET, now: () => Date.now() - msAgo });
  const solution = await solveChallenge({ challenge, deriveKey });
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
}

let dir: string;
let db: Store;
const lines: string[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'site-forms-spam-handle-'));
  db = openStore({ ...TEST_DATABASE, url: undefined, dataDir: dir }, silentLogger);
  lines.length = 0;
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

function deps(config: Partial<SpamConfig['spam']> = {}) {
  const store = db.spam;
  const service = createSpamService(
    { ...ON, ...config },
    { secret: SECRET, used: store.usedChallenges, logger: silentLogger, blog: 'https://www.example.com' },
  );
  return { submissions: db.submissions, logger: createLogger({ level: 'info', write: (l) => lines.push(l) }), onStored: vi.fn(), spam: { service, store } };
}

describe('the contact handler with the spam filter', () => {
  test('a person’s message with a proof solved 10 s ago is stored for delivery', async () => {
    const d = deps();
    const altcha = await proofIssued(10_000);
    await expect(handleContact(post('/api/contact', { ...person, altcha }), d, { ip: '203.0.113.7' })).resolves.toEqual({ kind: 'accepted' });
    const [stored] = await db.outbox.list();
    expect(stored).toMatchObject({ status: 'pending', spamReasons: [] });
    expect(d.onStored).toHaveBeenCalledWith(stored!.id);
  });

  test.each([
    ['with a solved proof', async () => ({ headers: BROWSER, altcha: await proofIssued(10_000) }), 1],
    ['from a browser without a proof (accepted on one weak sign)', async () => ({ headers: BROWSER }), 0],
    ['from a script with the three Sec-Fetch-* headers and no proof', async () => ({ headers: { ...BROWSER, accept: 'application/json' } }), 0],
  ])('a message %s is stored as showing a person: %s (only then is its sender answered)', async (_, make, shown) => {
    const { headers, altcha } = (await make()) as { headers: Record<string, string>; altcha?: string };
    const fields = altcha ? { ...person, altcha } : person;
    await expect(handleContact(post('/api/contact', fields, headers), deps(), { ip: '203.0.113.7' })).resolves.toEqual({ kind: 'accepted' });
    const rows = await db.sql.all<{ shown_person: number | string }>('SELECT shown_person FROM submissions');
    expect(rows.map((row) => Number(row.shown_person))).toEqual([shown]);
  });

  test('a program’s message without a proof (two weak signs) is held with its reasons, answered exactly as accepted, and not handed to delivery', async () => {
    const d = deps();
    const outcome = await handleContact(post('/api/contact', person, PROGRAM), d, { ip: '203.0.113.7' });
    expect(renderJson(outcome)).toEqual(renderJson({ kind: 'accepted' }));
    const [held] = await db.outbox.list();
    expect(held).toMatchObject({ status: 'spam', spamReasons: ['proof-missing', 'no-browser'], name: 'Ada Lovelace' });
    expect(d.onStored).not.toHaveBeenCalled();
    expect(JSON.parse(lines[0]!)).toMatchObject({ event: 'contact.held_as_spam', id: held!.id, reasons: ['proof-missing', 'no-browser'] });
    // Without Akismet, where the message came from is not kept.
    await expect(d.spam.store.details(held!.id)).resolves.toEqual({ reasons: ['proof-missing', 'no-browser'], ip: null, userAgent: null });
  });

  test('a browser’s message without a proof (one weak sign) is delivered', async () => {
    const d = deps();
    await expect(handleContact(post('/api/contact', person), d, { ip: '203.0.113.7' })).resolves.toEqual({ kind: 'accepted' });
    const [stored] = await db.outbox.list();
    expect(stored).toMatchObject({ status: 'pending', spamReasons: [] });
    expect(d.onStored).toHaveBeenCalledWith(stored!.id);
  });

  test('a form the browser filled in and sent at once (a proof solved a second ago) is delivered', async () => {
    const altcha = await proofIssued(1_000);
    await handleContact(post('/api/contact', { ...person, altcha }), deps(), { ip: '1.2.3.4' });
    expect((await db.outbox.list())[0]).toMatchObject({ status: 'pending', spamReasons: [] });
  });

  test('a proof solved a second ago, with many links, is held with both reasons', async () => {
    const altcha = await proofIssued(1_000);
    await handleContact(post('/api/contact', { ...person, message: 'https://a.test https://b.test https://c.test', altcha }), deps(), { ip: '1.2.3.4' });
    expect((await db.outbox.list())[0]?.spamReasons).toEqual(['too-fast', 'too-many-links']);
  });

  test('the same body twice: the second is held as replayed', async () => {
    const d = deps();
    const altcha = await proofIssued(10_000);
    await handleContact(post('/api/contact', { ...person, altcha }), d, { ip: '1.2.3.4' });
    await handleContact(post('/api/contact', { ...person, altcha }), d, { ip: '1.2.3.4' });
    expect((await db.outbox.list()).map((m) => [m.status, m.spamReasons])).toEqual([
      ['spam', ['proof-replayed']],
      ['pending', []],
    ]);
  });

  test('with Akismet configured, a held message keeps the visitor’s address and browser for corrections', async () => {
    const d = deps({ akismet: { apiKey: 'k', baseUrl: 'http://127.0.0.1:9' } });
    await handleContact(post('/api/contact', person, PROGRAM), d, { ip: '203.0.113.7' });
    const [held] = await db.outbox.list();
    await expect(d.spam.store.details(held!.id)).resolves.toEqual({ reasons: ['proof-missing', 'no-browser'], ip: '203.0.113.7', userAgent: 'curl/8.5.0' });
  });

  test('with SPAM_FILTER=off a message without a proof is delivered; the honeypot still refuses', async () => {
    const d = deps({ enabled: false });
    await expect(handleContact(post('/api/contact', person), d, { ip: '1.2.3.4' })).resolves.toEqual({ kind: 'accepted' });
    expect((await db.outbox.list())[0]?.status).toBe('pending');
    await expect(handleContact(post('/api/contact', { ...person, honeypot: 'bot' }), d, { ip: '1.2.3.4' })).resolves.toMatchObject({
      kind: 'invalid',
      errors: { honeypot: ['This field must be left empty'] },
    });
  });

  test('an invalid message is refused before it is judged, so its proof is not used up', async () => {
    const d = deps();
    const altcha = await proofIssued(10_000);
    await handleContact(post('/api/contact', { ...person, message: 'short', altcha }), d, { ip: '1.2.3.4' });
    await handleContact(post('/api/contact', { ...person, altcha }), d, { ip: '1.2.3.4' });
    expect((await db.outbox.list()).map((m) => m.status)).toEqual(['pending']);
  });
});

describe('the newsletter handler with NEWSLETTER_REQUIRE_PROOF', () => {
  const provider = { name: 'local' as const, subscribe: vi.fn(async () => ({ ok: true as const })) };

  test('without a proof: 400 JSON with the error, and nobody is subscribed', async () => {
    provider.subscribe.mockClear();
    const outcome = await handleNewsletter(post('/api/newsletter', { email: 'victim@example.com' }), {
      provider,
      logger: silentLogger,
      spam: deps({ newsletterRequiresProof: true }).spam,
    });
    expect(renderJson(outcome)).toMatchObject({ status: 400, body: JSON.stringify({ success: false, error: NEWSLETTER_PROOF_ERROR }) });
    expect(provider.subscribe).not.toHaveBeenCalled();
  });

  test('with a proof solved at once: subscribed (no time to submit for one field)', async () => {
    provider.subscribe.mockClear();
    const altcha = await proofIssued(0);
    const outcome = await handleNewsletter(post('/api/newsletter', { email: 'ada@example.com', altcha }), {
      provider,
      logger: silentLogger,
      spam: deps({ newsletterRequiresProof: true }).spam,
    });
    expect(outcome).toEqual({ kind: 'accepted' });
    expect(provider.subscribe).toHaveBeenCalledWith('ada@example.com');
  });

  test('an invalid address is the spec’s answer, whatever the proof', async () => {
    const outcome = await handleNewsletter(post('/api/newsletter', { email: 'nope' }), {
      provider,
      logger: silentLogger,
      spam: deps({ newsletterRequiresProof: true }).spam,
    });
    expect(outcome).toMatchObject({ kind: 'failure', status: 400, error: 'Please enter a valid email address' });
  });

  test('by default a subscription needs no proof (SPEC.md 4.1)', async () => {
    const outcome = await handleNewsletter(post('/api/newsletter', { email: 'ada@example.com' }), { provider, logger: silentLogger, spam: deps().spam });
    expect(outcome).toEqual({ kind: 'accepted' });
  });
});

describe('the contact handler with the outside checks, faked at the network edge', () => {
  let edge: FakeHttpServer;
  beforeAll(async () => {
    edge = await startFakeHttpServer((request, res, req) => (request.url.startsWith('/turnstile/') ? replyTurnstile() : replyAkismet())(request, res, req));
  });
  afterAll(() => edge.close());

  const withOutside = (secretKey: string) =>
    deps({
      turnstile: { siteKey: '1x00000000000000000000AA', secretKey, baseUrl: edge.url },
      akismet: { apiKey: AKISMET_TEST_KEY, baseUrl: edge.url },
    });

  test.each([
    ['Turnstile’s always-passes key, a person', TURNSTILE_TEST_SECRETS.passes, 'Ada Lovelace', 'pending', []],
    ['Turnstile’s always-fails key', TURNSTILE_TEST_SECRETS.fails, 'Ada Lovelace', 'spam', ['turnstile-failed']],
    ['Turnstile’s token-already-spent key', TURNSTILE_TEST_SECRETS.spent, 'Ada Lovelace', 'spam', ['turnstile-failed']],
    ['Akismet’s guaranteed-spam author', TURNSTILE_TEST_SECRETS.passes, 'akismet-guaranteed-spam', 'spam', ['akismet-spam']],
  ])('%s', async (_, secretKey, name, status, reasons) => {
    const altcha = await proofIssued(10_000);
    await handleContact(post('/api/contact', { ...person, name, altcha, 'cf-turnstile-response': TURNSTILE_DUMMY_TOKEN }), withOutside(secretKey), {
      ip: '203.0.113.7',
    });
    expect((await db.outbox.list()).map((m) => [m.status, m.spamReasons])).toEqual([[status, reasons]]);
  });

  test('Cloudflare and Akismet both down: the message is judged without them and delivered', async () => {
    const d = deps({
      turnstile: { siteKey: 's', secretKey: TURNSTILE_TEST_SECRETS.passes, baseUrl: 'http://127.0.0.1:9' },
      akismet: { apiKey: AKISMET_TEST_KEY, baseUrl: 'http://127.0.0.1:9' },
    });
    const altcha = await proofIssued(10_000);
    await handleContact(post('/api/contact', { ...person, altcha, 'cf-turnstile-response': TURNSTILE_DUMMY_TOKEN }), d, { ip: '203.0.113.7' });
    expect((await db.outbox.list()).map((m) => m.status)).toEqual(['pending']);
  });
});
