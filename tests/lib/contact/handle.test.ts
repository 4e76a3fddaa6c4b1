import { afterAll, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { formHandler, handleContact, handleSubmission } from '../../../packages/site-forms/src/lib/contact/contact-handlers.ts';
import type { SubmissionStore } from '../../../packages/site-forms/src/lib/contact/submission-store.ts';
import { defineForm } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import { contactForm } from '../../../packages/site-forms/src/lib/forms/registry.ts';
import { createLogger, silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createSpamService } from '../../../packages/site-forms/src/lib/spam/service.ts';
import { createMemoryUsedChallenges } from '../../../packages/site-forms/src/lib/spam/used-challenges.ts';
import { DEFAULT_WEIGHING } from '../../../packages/site-forms/src/lib/spam/weights.ts';
import { type FakeHttpServer, startFakeHttpServer } from '../../support/fake-http.ts';
import { AKISMET_TEST_KEY, replyAkismet } from '../../support/fake-spam-services.ts';

const valid = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.', honeypot: '' };

function form(fields: Record<string, string>): FormData {
  const body = new FormData();
  for (const [k, v] of Object.entries(fields)) body.append(k, v);
  return body;
}

function post(fields: Record<string, string>): Request {
  const body = form(fields);
  return new Request('http://site.test/api/contact', { method: 'POST', body });
}

/** A store that holds what it is told to hold, as the real one does. */
function holdingStore() {
  const saved: Array<Record<string, unknown>> = [];
  const store: Pick<SubmissionStore, 'receive'> = {
    receive: async (message) => {
      const id = saved.push(message as Record<string, unknown>);
      return message.held ? { id, status: 'spam', reasons: message.held } : { id, status: 'pending', reasons: [] };
    },
  };
  return { store, saved };
}

const BROWSER = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };

function memoryStore() {
  const saved: unknown[] = [];
  const store: Pick<SubmissionStore, 'receive'> = {
    receive: async (message) => ({ id: saved.push(message), status: 'pending', reasons: [] }),
  };
  return { store, saved };
}

describe('POST /api/contact handler', () => {
  test('stores a valid submission, then accepts it', async () => {
    const { store, saved } = memoryStore();
    const onStored = vi.fn();
    await expect(handleContact(post(valid), { submissions: store, logger: silentLogger, onStored })).resolves.toEqual({ kind: 'accepted' });
    expect(saved).toEqual([
      {
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        message: 'Hello, I would like to know more.',
        form: 'contact',
        fields: {},
        held: undefined,
        proof: undefined,
        shownPerson: false,
      },
    ]);
    expect(onStored).toHaveBeenCalledWith(1);
  });

  test('refuses every failing field at once, keeps what was typed but the honeypot, and stores nothing', async () => {
    const { store, saved } = memoryStore();
    const outcome = await handleContact(post({ name: 'A', email: 'x', message: 'short', honeypot: 'bot' }), { submissions: store, logger: silentLogger });
    expect(outcome).toEqual({
      kind: 'invalid',
      values: { name: 'A', email: 'x', message: 'short' },
      errors: {
        name: ['Name must be between 2 and 100 characters'],
        email: ['Please enter a valid email address'],
        message: ['Message must be at least 10 characters'],
        honeypot: ['This field must be left empty'],
      },
    });
    expect(saved).toEqual([]);
  });

  // The store logs the cause, once per outage (tests/lib/health.test.ts); a line per post would flood the log.
  test('fails with 500 "Internal server error" and the values when storing fails, adding no log line per post', async () => {
    const errors: unknown[] = [];
    const logger = { ...silentLogger, error: (event: string, fields?: Record<string, unknown>) => errors.push({ event, ...fields }) };
    const store: Pick<SubmissionStore, 'receive'> = {
      receive: () => Promise.reject(new Error('disk full')),
    };
    await expect(handleContact(post(valid), { submissions: store, logger })).resolves.toEqual({
      kind: 'failure',
      status: 500,
      error: 'Internal server error',
      values: { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.' },
    });
    expect(errors).toEqual([]);
  });

  test('a field left out of the post is left out of the values given back', async () => {
    const { store } = memoryStore();
    const outcome = await handleContact(post({ name: 'Ada Lovelace', message: 'short' }), { submissions: store, logger: silentLogger });
    expect(outcome).toStrictEqual({
      kind: 'invalid',
      values: { name: 'Ada Lovelace', message: 'short' },
      errors: { email: ['Please enter a valid email address'], message: ['Message must be at least 10 characters'] },
    });
  });

  test('a message the store holds without a spam filter (a replayed proof) is answered accepted and not queued', async () => {
    const store: Pick<SubmissionStore, 'receive'> = { receive: async () => ({ id: 4, status: 'spam', reasons: ['proof-replayed'] }) };
    const onStored = vi.fn();
    await expect(handleContact(post(valid), { submissions: store, logger: silentLogger, onStored }, { ip: '203.0.113.7', person: true })).resolves.toEqual({
      kind: 'accepted',
    });
    expect(onStored).not.toHaveBeenCalled();
  });

  test('a form it cannot read is refused before any field is looked at', async () => {
    const { store, saved } = memoryStore();
    const request = new Request('http://site.test/api/contact', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    await expect(handleContact(request, { submissions: store, logger: silentLogger })).resolves.toMatchObject({ kind: 'failure', status: 415 });
    expect(saved).toEqual([]);
  });
});

describe('the road every form takes', () => {
  test("a form's handler stores and accepts a valid post as the contact handler does, under the form's name", async () => {
    const { store, saved } = memoryStore();
    const onStored = vi.fn();
    await expect(formHandler(contactForm)(post(valid), { submissions: store, logger: silentLogger, onStored }, { ip: '203.0.113.7' })).resolves.toEqual({
      kind: 'accepted',
    });
    expect(saved).toEqual([
      {
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        message: 'Hello, I would like to know more.',
        form: 'contact',
        fields: {},
        held: undefined,
        proof: undefined,
        shownPerson: false,
      },
    ]);
    expect(onStored).toHaveBeenCalledWith(1);
  });

  test("a person's post is accepted for delivery when no spam filter runs", async () => {
    const { store, saved } = memoryStore();
    await expect(handleContact(post(valid), { submissions: store, logger: silentLogger }, { ip: '203.0.113.7', person: true })).resolves.toEqual({
      kind: 'accepted',
    });
    expect(saved).toEqual([expect.objectContaining({ held: undefined })]);
  });

  describe('with Akismet, which is given the visitor’s address', () => {
    let akismet: FakeHttpServer;
    beforeAll(async () => {
      akismet = await startFakeHttpServer(replyAkismet());
    });
    afterAll(() => akismet.close());
    beforeEach(() => {
      akismet.requests.length = 0;
    });

    const spamService = () =>
      createSpamService(
        {
          enabled: true,
          maxLinks: 2,
          retentionDays: 30,
          turnstile: undefined,
          akismet: { apiKey: AKISMET_TEST_KEY, baseUrl: akismet.url },
          newsletterRequiresProof: false,
          weighing: DEFAULT_WEIGHING,
          digestTime: undefined,
        },
        { secret: 's3cret', used: createMemoryUsedChallenges(), logger: silentLogger, blog: 'https://www.example.com' },
      );

    test('a post handled without a request context has an empty address, not a made-up one', async () => {
      const { store, saved } = memoryStore();
      await handleSubmission(contactForm, post(valid), { submissions: store, logger: silentLogger, spam: { service: spamService() } });
      expect(saved).toEqual([expect.objectContaining({ ip: '', userAgent: undefined })]);
      expect(new URLSearchParams(akismet.requests[0]!.body).get('user_ip')).toBe('');
    });

    test('the contact handler without a request context gives Akismet an empty address too', async () => {
      const { store, saved } = memoryStore();
      await handleContact(post(valid), { submissions: store, logger: silentLogger, spam: { service: spamService() } });
      expect(saved).toEqual([expect.objectContaining({ ip: '', userAgent: undefined })]);
      expect(new URLSearchParams(akismet.requests[0]!.body).get('user_ip')).toBe('');
    });

    test('Akismet is given the page the post came from', async () => {
      const { store } = memoryStore();
      const request = new Request('http://site.test/api/contact', {
        method: 'POST',
        body: form(valid),
        headers: { referer: 'https://www.example.com/contact/' },
      });
      await handleContact(request, { submissions: store, logger: silentLogger, spam: { service: spamService() } }, { ip: '203.0.113.7' });
      expect(new URLSearchParams(akismet.requests[0]!.body).get('referrer')).toBe('https://www.example.com/contact/');
    });

    test("a person's browser that ran no script is held and asked to confirm, with a token for its message", async () => {
      const { store, saved } = holdingStore();
      const lines: Array<Record<string, unknown>> = [];
      const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
      const service = spamService();
      const onStored = vi.fn();
      const request = new Request('http://site.test/api/contact', { method: 'POST', body: form(valid), headers: BROWSER });
      const outcome = await handleContact(request, { submissions: store, logger, onStored, spam: { service } }, { ip: '203.0.113.7', person: true });
      expect(outcome).toMatchObject({
        kind: 'confirm',
        values: { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.' },
      });
      await expect(service.confirmed((outcome as { token: string }).token)).resolves.toBe(1);
      expect(saved).toEqual([expect.objectContaining({ held: ['proof-missing'] })]);
      expect(lines.filter((line) => line.event === 'contact.held_for_confirmation').map(({ id, reasons }) => ({ id, reasons }))).toEqual([
        { id: 1, reasons: ['proof-missing'] },
      ]);
      expect(onStored).not.toHaveBeenCalled();
    });

    test('the same post from a client that is not a person is accepted for delivery, not held', async () => {
      const { store, saved } = holdingStore();
      const onStored = vi.fn();
      const request = new Request('http://site.test/api/contact', { method: 'POST', body: form(valid), headers: BROWSER });
      await expect(
        handleContact(request, { submissions: store, logger: silentLogger, onStored, spam: { service: spamService() } }, { ip: '203.0.113.7' }),
      ).resolves.toEqual({ kind: 'accepted' });
      expect(saved).toEqual([expect.objectContaining({ held: undefined })]);
      expect(onStored).toHaveBeenCalledWith(1);
    });

    test("an owner's form without a message field: its columns stay empty, and Akismet reads every text the visitor typed", async () => {
      const { store, saved } = memoryStore();
      const quote = defineForm({
        name: 'quote',
        title: 'Request a quote',
        fields: [
          { name: 'name', type: 'text', label: 'Name', required: true },
          { name: 'topic', type: 'select', label: 'Topic', choices: [{ value: 'table', label: 'A table' }] },
          { name: 'budget', type: 'number', label: 'Budget' },
          { name: 'details', type: 'textarea', label: 'Details' },
          { name: 'consent', type: 'checkbox', label: 'Consent' },
        ],
      });
      const fields = { name: 'Ada Lovelace', topic: 'table', budget: '2500', details: 'Oak, two metres long.', consent: 'yes', honeypot: '' };
      await expect(
        formHandler(quote)(post(fields), { submissions: store, logger: silentLogger, spam: { service: spamService() } }, { ip: '203.0.113.7' }),
      ).resolves.toEqual({
        kind: 'accepted',
      });
      expect(saved).toEqual([
        expect.objectContaining({
          name: 'Ada Lovelace',
          email: '',
          message: '',
          form: 'quote',
          fields: { topic: 'table', budget: 2500, details: 'Oak, two metres long.', consent: true },
          ip: '203.0.113.7',
        }),
      ]);
      expect(new URLSearchParams(akismet.requests[0]!.body).get('comment_content')).toBe('table\nOak, two metres long.');
    });
  });
});
