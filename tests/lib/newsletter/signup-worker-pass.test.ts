import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createMailchimpProvider } from '../../../packages/site-forms/src/lib/newsletter/mailchimp.ts';
import { createSignupWorker } from '../../../packages/site-forms/src/lib/newsletter/signup-worker.ts';
import { createSignups } from '../../../packages/site-forms/src/lib/newsletter/signups.ts';
import { type FakeHttpServer, type FakeReply, replyInTurn, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';
import { testEngines } from '../../support/stores.ts';

// One worker's passes in this process: what it records and logs for each outcome, the lease it
// holds while the provider answers, and when its scheduler runs a pass. A real store on both
// engines, a real HTTP server standing in for Mailchimp.
let mailchimp: FakeHttpServer;
beforeAll(async () => {
  mailchimp = await startFakeHttpServer();
});
afterAll(() => mailchimp.close());

const T0 = new Date('2026-11-24T12:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const provider = () => createMailchimpProvider({ apiKey: 'key123-us21', listId: 'list42', baseUrl: `${mailchimp.url}/3.0` });
const MEMBER = replyJson(200, { id: 'abc', status: 'subscribed' });
const BUSY = replyJson(503, { title: 'Service Unavailable', status: 503 }, { 'content-type': 'application/problem+json' });
const FAKE = replyJson(
  400,
  { title: 'Invalid Resource', status: 400, detail: 'looks fake', errors: [{ field: 'email_address', message: 'invalid' }] },
  { 'content-type': 'application/problem+json' },
);

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const logged = () => lines.map(({ time: _, ...rest }) => rest);
  return { logger, logged };
}

async function until(condition: () => Promise<boolean>, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.each(testEngines())('a signup worker on $name', (engine) => {
  test.skipIf(!engine.available)(
    'one pass: the added signup is logged and its news recorded, a refused one given up and logged, a busy one left waiting',
    async () => {
      const { store } = await engine.open();
      const signups = createSignups(store.sql, { retryBaseMs: 1_000, random: () => 0 });
      const { logger, logged } = capture();
      const events = { record: vi.fn(async (_type: string, _data: Record<string, unknown>) => {}) };
      await signups.enqueue('ada@example.org', 'mailchimp', T0);
      await signups.enqueue('fake@example.org', 'mailchimp', T0);
      await signups.enqueue('busy@example.org', 'mailchimp', T0);
      mailchimp.requests.length = 0;
      mailchimp.reply(replyInTurn(MEMBER, FAKE, BUSY));

      const worker = createSignupWorker({ signups, provider: provider(), events, logger, now: () => at(1_000) });
      await worker.runPass();

      expect(mailchimp.requests.map((r) => JSON.parse(r.body).email_address)).toEqual(['ada@example.org', 'fake@example.org', 'busy@example.org']);
      expect(logged()).toEqual([
        { level: 'info', event: 'newsletter.signup_added', id: 1, attempts: 1 },
        { level: 'warn', event: 'newsletter.signup_failed', id: 2, reason: 'invalid-address', note: 'the owner can retry it (admin: Subscribers)' },
      ]);
      expect(events.record.mock.calls).toEqual([['newsletter.subscribed', { email: 'ada@example.org', provider: 'mailchimp' }]]);
      await expect(signups.pending(10)).resolves.toEqual([
        expect.objectContaining({
          id: 3,
          status: 'waiting',
          attempts: 1,
          nextAttemptAt: '2026-11-24T12:00:02.000Z',
          lastError: 'unavailable: HTTP 503 Service Unavailable',
        }),
        expect.objectContaining({ id: 2, status: 'failed', attempts: 1 }),
      ]);

      // The busy one, due a second later, is added at its second try; without a recorder, nothing is recorded and nothing fails.
      mailchimp.reply(MEMBER);
      const later = createSignupWorker({ signups, provider: provider(), logger, now: () => at(2_000) });
      await later.runPass();
      expect(logged().slice(2)).toEqual([{ level: 'info', event: 'newsletter.signup_added', id: 3, attempts: 2 }]);
      await expect(signups.pending(10)).resolves.toEqual([expect.objectContaining({ id: 2, status: 'failed' })]);
    },
  );

  test.skipIf(!engine.available)('a signup is held for a minute while the provider answers: no other instance takes it before', async () => {
    const { store } = await engine.open();
    const signups = createSignups(store.sql, { retryBaseMs: 1_000, random: () => 0 });
    const { logger, logged } = capture();
    await signups.enqueue('slow@example.org', 'mailchimp', T0);
    let answer: () => void = () => {};
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const slow: FakeReply = async (request, res, req) => {
      await answered;
      return MEMBER(request, res, req);
    };
    mailchimp.requests.length = 0;
    mailchimp.reply(slow);
    const worker = createSignupWorker({ signups, provider: provider(), logger, now: () => at(1_000) });
    const pass = worker.runPass();
    await until(async () => mailchimp.requests.length === 1);

    await expect(signups.claim(at(60_999), at(120_000))).resolves.toBeUndefined();
    // A minute on, the lease has run out: another instance takes the signup, and this worker's late answer changes nothing.
    await expect(signups.claim(at(61_000), at(121_000))).resolves.toMatchObject({ signup: { id: 1, email: 'slow@example.org' } });
    answer();
    await pass;
    expect(logged()).toEqual([]);
    // Two tries counted as they were taken: the first worker's and the second instance's, still under way.
    await expect(signups.pending(10)).resolves.toEqual([expect.objectContaining({ id: 1, status: 'waiting', attempts: 2 })]);
  });

  test.skipIf(!engine.available)('a pass that fails is logged as a warning to be tried again', async () => {
    const { store } = await engine.open();
    const signups = createSignups(store.sql);
    const { logger, logged } = capture();
    const broken = { ...signups, claim: async () => Promise.reject(new Error('database is locked')) };
    const worker = createSignupWorker({ signups: broken, provider: provider(), logger });
    await worker.runPass();
    expect(logged()).toEqual([{ level: 'warn', event: 'newsletter.signup_worker_failed', error: 'Error: database is locked', note: 'tried again soon' }]);
  });

  test.skipIf(!engine.available)('started, it passes at once, when poked, and when the next signup falls due; stopped, it passes no more', async () => {
    const { store } = await engine.open();
    const signups = createSignups(store.sql, { retryBaseMs: 200, random: () => 0 });
    const { logger } = capture();
    mailchimp.requests.length = 0;
    mailchimp.reply(MEMBER);
    await signups.enqueue('first@example.org', 'mailchimp', new Date(Date.now() - 1_000));
    // Due in 300 ms, long before the 30-second poll: after its first pass the worker wakes for it by itself.
    await signups.enqueue('due@example.org', 'mailchimp', new Date(Date.now() + 100));
    const worker = createSignupWorker({ signups, provider: provider(), logger });
    try {
      worker.start();
      await until(async () => mailchimp.requests.length >= 1, 2_000);
      await until(async () => (await signups.pending(10)).length === 0, 2_000);

      // Due at once and poked, as the handler does after storing one.
      await signups.enqueue('poked@example.org', 'mailchimp', new Date(Date.now() - 1_000));
      worker.poke();
      await until(async () => (await signups.pending(10)).length === 0, 2_000);
      expect(mailchimp.requests.map((r) => JSON.parse(r.body).email_address)).toEqual(['first@example.org', 'due@example.org', 'poked@example.org']);
    } finally {
      await worker.stop();
    }
    // That a poke after stop runs nothing is the scheduler's, proven on a faked clock in scheduler.test.ts.
  });
});
