import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import type { Mailer, SendResult } from '../../../packages/site-forms/src/lib/mail/mailer.ts';
import type { ContactEmail } from '../../../packages/site-forms/src/lib/mail/email.ts';
import type { Outbox } from '../../../packages/site-forms/src/lib/contact/outbox.ts';
import { createDeliveryWorker, type DeliveryWorkerOptions, outboxUpkeep, retryDelay } from '../../../packages/site-forms/src/lib/contact/worker.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { TEST_DATABASE } from '../../support/stores.ts';
import { eventually } from '../../support/smtp.ts';

const input = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more.', honeypot: '' };
const SECOND = 1_000;
const HOUR = 3_600 * SECOND;

/** A mailer that answers from a script, one result per call, and records what it was given. */
function scriptedMailer(...script: SendResult[]) {
  const sent: ContactEmail[] = [];
  const mailer: Mailer = {
    async send(email) {
      sent.push(email);
      return script.shift() ?? { ok: true };
    },
  };
  return { mailer, sent };
}

const transient: SendResult = { ok: false, permanent: false, reason: 'ESOCKET: connect ECONNREFUSED 127.0.0.1:25' };
const permanent: SendResult = { ok: false, permanent: true, reason: 'EENVELOPE 550: 550 5.1.1 <owner@example.com> No such user' };

let dir: string;
let db: Store;
let outbox: Outbox;
let now: number;
let logs: Array<Record<string, unknown>>;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'site-forms-worker-'));
  db = openStore({ ...TEST_DATABASE, url: undefined, dataDir: dir }, createLogger({ level: 'silent' }));
  outbox = db.outbox;
  now = Date.now();
  logs = [];
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Stores a submission as the form does, at the test's clock rather than the wall clock. */
async function store(): Promise<number> {
  const id = await db.submissions.save(input);
  const at = new Date(now).toISOString();
  await db.sql.run('UPDATE submissions SET created_at = ?, next_attempt_at = ? WHERE id = ?', [at, at, id]);
  return id;
}

/** The mail the site's owner would get for a submission, without the site's configuration. */
const composeMail: DeliveryWorkerOptions['compose'] = (s) => ({
  from: { name: 'Site', address: 'site@example.com' },
  to: 'owner@example.com',
  subject: s.name,
  text: s.message,
  messageId: `<contact-${s.id}>`,
  date: new Date(s.createdAt),
  envelope: { from: 'site@example.com', to: ['owner@example.com'] },
});

function worker(mailer: Mailer, options: Partial<DeliveryWorkerOptions> = {}) {
  return createDeliveryWorker({
    outbox,
    mailer,
    compose: composeMail,
    logger: createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
    clock: () => new Date(now),
    random: () => 0,
    ...options,
  });
}

describe('retry delays', () => {
  test.each([
    [1, 30 * SECOND],
    [2, 60 * SECOND],
    [3, 120 * SECOND],
    [7, 1_920 * SECOND],
    [8, HOUR],
    [9, HOUR],
    [40, HOUR],
  ])('after %i failed attempts the next waits %i ms', (attempts, delay) => {
    expect(retryDelay(attempts)).toBe(delay);
  });

  test.each([
    [24 * HOUR - 1, 'pending'],
    [24 * HOUR, 'failed'],
  ])('a transient failure %i ms after the first attempt leaves the message %s: retries last 24 hours', async (after, status) => {
    const id = await store();
    const start = now;
    const { mailer } = scriptedMailer(transient, transient);
    const w = worker(mailer);
    await w.deliverDue();
    now = start + after;
    await db.sql.run('UPDATE submissions SET next_attempt_at = ? WHERE id = ?', [new Date(now).toISOString(), id]);
    await w.deliverDue();
    await expect(outbox.find(id)).resolves.toMatchObject({ status, attempts: 2 });
  });
});

describe('the delivery worker', () => {
  test('sends a pending message once and records it as sent', async () => {
    const id = await store();
    const { mailer, sent } = scriptedMailer();
    await worker(mailer).deliverDue();
    expect(sent.map((e) => e.messageId)).toEqual([`<contact-${id}>`]);
    await expect(outbox.find(id)).resolves.toMatchObject({
      status: 'sent',
      attempts: 1,
      sentAt: new Date(now).toISOString(),
      nextAttemptAt: null,
      lastError: null,
    });
    await expect(outbox.history(id)).resolves.toEqual([{ at: new Date(now).toISOString(), outcome: 'sent', error: null }]);
    await worker(mailer).deliverDue();
    expect(sent).toHaveLength(1);
  });

  test('keeps a message pending while it is being sent, so a crash mid-send loses nothing', async () => {
    const id = await store();
    let statusDuringSend: string | undefined;
    await worker({
      async send() {
        statusDuringSend = (await outbox.find(id))?.status;
        return { ok: true };
      },
    }).deliverDue();
    expect(statusDuringSend).toBe('pending');
  });

  test('after a transient failure waits 30 s, then 60 s, then delivers', async () => {
    const id = await store();
    const { mailer, sent } = scriptedMailer(transient, transient, { ok: true });
    const w = worker(mailer);
    const start = now;
    await w.deliverDue();
    await expect(outbox.find(id)).resolves.toMatchObject({
      status: 'pending',
      attempts: 1,
      lastError: transient.reason,
      nextAttemptAt: new Date(start + 30 * SECOND).toISOString(),
    });

    now = start + 29 * SECOND;
    await w.deliverDue();
    expect(sent).toHaveLength(1);

    now = start + 30 * SECOND;
    await w.deliverDue();
    await expect(outbox.find(id)).resolves.toMatchObject({ status: 'pending', attempts: 2, nextAttemptAt: new Date(now + 60 * SECOND).toISOString() });

    now += 60 * SECOND;
    await w.deliverDue();
    expect(sent).toHaveLength(3);
    await expect(outbox.find(id)).resolves.toMatchObject({ status: 'sent', attempts: 3 });
    expect((await outbox.history(id)).map((e) => e.outcome)).toEqual(['retrying', 'retrying', 'sent']);
    expect(logs.filter((l) => l.event === 'contact.delivery_retry')).toHaveLength(2);
  });

  test('a permanent failure marks the message failed with the reason, logged as an error without the address', async () => {
    const id = await store();
    const { mailer, sent } = scriptedMailer(permanent);
    await worker(mailer).deliverDue();
    await expect(outbox.find(id)).resolves.toMatchObject({ status: 'failed', attempts: 1, lastError: permanent.reason, nextAttemptAt: null });
    await expect(outbox.history(id)).resolves.toEqual([expect.objectContaining({ outcome: 'failed', error: permanent.reason })]);
    const logged = logs.find((l) => l.event === 'contact.delivery_failed');
    expect(logged).toMatchObject({ level: 'error', id, reason: expect.stringContaining('550 5.1.1') });
    expect(JSON.stringify(logged)).not.toContain('owner@example.com');
    await worker(mailer).deliverDue();
    expect(sent).toHaveLength(1);
  });

  test('gives up with "failed" once transient failures have lasted 24 hours', async () => {
    const id = await store();
    const { mailer, sent } = scriptedMailer(...Array.from({ length: 100 }, () => transient));
    const w = worker(mailer);
    const start = now;
    for (let i = 0; i < 100 && (await outbox.find(id))?.status === 'pending'; i++) {
      await w.deliverDue();
      const next = (await outbox.find(id))?.nextAttemptAt;
      if (next) now = Date.parse(next);
    }
    const last = (await outbox.find(id))!;
    expect(last).toMatchObject({ status: 'failed', lastError: expect.stringMatching(/^gave up after \d+ attempts over 24 h; last: ESOCKET/) });
    expect(now - start).toBeGreaterThanOrEqual(24 * HOUR);
    expect(now - start).toBeLessThan(25 * HOUR);
    // 30 s doubling to an hour: about 8 attempts in the first 2 hours, then hourly.
    expect(sent.length).toBeGreaterThan(25);
    expect(sent.length).toBeLessThan(35);
  });

  test('a message stored long before SMTP was set up still gets its 24 hours of retries', async () => {
    const id = await store();
    now += 72 * HOUR;
    const { mailer } = scriptedMailer(transient);
    await worker(mailer).deliverDue();
    await expect(outbox.find(id)).resolves.toMatchObject({ status: 'pending', attempts: 1 });
  });

  test('a requeued message starts a fresh round: 30 s backoff and 24 more hours', async () => {
    const id = await store();
    await worker(scriptedMailer(permanent).mailer).deliverDue();
    now += 48 * HOUR;
    await expect(outbox.requeue(id, new Date(now))).resolves.toMatchObject({ found: true, from: 'failed', submission: { status: 'pending', attempts: 0 } });
    const { mailer } = scriptedMailer(transient, { ok: true });
    const w = worker(mailer);
    await w.deliverDue();
    await expect(outbox.find(id)).resolves.toMatchObject({ status: 'pending', attempts: 1, nextAttemptAt: new Date(now + 30 * SECOND).toISOString() });
    now += 30 * SECOND;
    await w.deliverDue();
    expect((await outbox.find(id))?.status).toBe('sent');
    expect((await outbox.history(id)).map((e) => e.outcome)).toEqual(['failed', 'requeued', 'retrying', 'sent']);
  });

  test('sends every due message, oldest first, and leaves those not yet due', async () => {
    const first = await store();
    const second = await store();
    const later = await store();
    await db.sql.run('UPDATE submissions SET next_attempt_at = ? WHERE id = ?', [new Date(now + HOUR).toISOString(), later]);
    const { mailer, sent } = scriptedMailer();
    await worker(mailer).deliverDue();
    expect(sent.map((e) => e.messageId)).toEqual([`<contact-${first}>`, `<contact-${second}>`]);
    expect((await outbox.find(later))?.status).toBe('pending');
  });

  test('a message another instance is sending is left alone until its lease ends, then sent with the same Message-ID', async () => {
    const id = await store();
    // The other instance claimed it and was killed mid-send: its lease is all that is left.
    await outbox.claim(new Date(now), new Date(now + 120_000));
    const { mailer, sent } = scriptedMailer();
    const w = worker(mailer);
    await w.deliverDue();
    expect(sent).toHaveLength(0);
    now += 120_000;
    await w.deliverDue();
    expect(sent.map((e) => e.messageId)).toEqual([`<contact-${id}>`]);
    // The killed instance's attempt counts: it was counted when it was claimed.
    await expect(outbox.find(id)).resolves.toMatchObject({ status: 'sent', attempts: 2 });
  });

  test("a worker's lease lasts two minutes: another worker takes the message at 120 000 ms, not at 119 999 ms", async () => {
    const id = await store();
    const start = now;
    // The first worker claims the message and hangs in its send.
    let release: (result: SendResult) => void = () => {};
    const hanging: Mailer = { send: () => new Promise<SendResult>((resolve) => (release = resolve)) };
    const first = worker(hanging).deliverDue();
    await eventually('the first worker to claim the message', async () => (await outbox.find(id))?.attempts === 1);
    const { mailer, sent } = scriptedMailer();
    const second = worker(mailer);
    now = start + 119_999;
    await second.deliverDue();
    expect(sent).toHaveLength(0);
    now = start + 120_000;
    await second.deliverDue();
    expect(sent.map((e) => e.messageId)).toEqual([`<contact-${id}>`]);
    release({ ok: true });
    await first;
    await expect(outbox.find(id)).resolves.toMatchObject({ status: 'sent', attempts: 2 });
  });

  test('a mailer that throws is a transient failure, not a lost message', async () => {
    const id = await store();
    await worker({
      send: () => Promise.reject(new TypeError('boom')),
    }).deliverDue();
    await expect(outbox.find(id)).resolves.toMatchObject({ status: 'pending', attempts: 1, lastError: 'unexpected error: TypeError: boom' });
  });
});

describe("the worker's own limits and leftovers", () => {
  const entries = () => logs.map(({ time: _, ...rest }) => rest);

  test('a worker with fewer attempts gives up after them, well within the 24 hours', async () => {
    const id = await store();
    const w = worker(scriptedMailer(transient, transient).mailer, { maxAttempts: 2 });
    await w.deliverDue();
    await expect(outbox.find(id)).resolves.toMatchObject({ status: 'pending', attempts: 1 });
    now += 60 * SECOND;
    await w.deliverDue();
    await expect(outbox.find(id)).resolves.toMatchObject({
      status: 'failed',
      attempts: 2,
      lastError: 'gave up after 2 attempts; last: ESOCKET: connect ECONNREFUSED 127.0.0.1:25',
    });
  });

  test('a message whose every attempt died with its process is never claimed again, and the upkeep fails it and logs it', async () => {
    const id = await store();
    // A send that never ended: claimed (attempt 1), its process gone, its lease run out.
    await outbox.claim(new Date(now), new Date(now + 1_000));
    now += 10 * 60 * SECOND;
    const { mailer, sent } = scriptedMailer();
    await worker(mailer, { maxAttempts: 1 }).deliverDue();
    expect(sent).toEqual([]);
    await expect(outbox.find(id)).resolves.toMatchObject({ status: 'pending', attempts: 1 });
    // Nothing is due for the worker: no pass every second until the upkeep.
    await expect(outbox.nextDueAt(1)).resolves.toBeUndefined();
    const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
    await outboxUpkeep({ outbox, logger, maxAttempts: 1 })(new Date(now));
    await expect(outbox.find(id)).resolves.toMatchObject({ status: 'failed' });
    expect(entries()).toEqual([
      {
        level: 'error',
        event: 'contact.delivery_failed',
        id,
        attempts: 1,
        reason: 'gave up after 1 attempts that never ended (the server stopped during each send)',
        next: 'fix the cause, then npm run inbox -- retry <id>',
      },
    ]);
  });

  test('an attachment a failed send never read is closed', async () => {
    await store();
    const content = Readable.from(['a file nobody read']);
    await worker(scriptedMailer(transient).mailer, {
      compose: async (s) => ({
        ...(await composeMail(s)),
        attachments: [{ filename: 'cv.txt', contentType: 'text/plain', content }],
      }),
    }).deliverDue();
    expect(content.destroyed).toBe(true);
  });

  test.each([
    ['deleted', (id: number) => outbox.remove(id, new Date(now)), 'deleted by the owner'],
    ['marked as spam', (id: number) => db.spam.markSpam(id), 'held by the owner'],
  ] as const)('a message the owner %s while it was being sent is logged as delivered, then so', async (_, act, afterwards) => {
    const id = await store();
    const mailer: Mailer = {
      async send() {
        await act(id);
        return { ok: true };
      },
    };
    await worker(mailer).deliverDue();
    expect(entries()).toEqual([{ level: 'info', event: 'contact.delivered', id, attempts: 1, afterwards }]);
  });
});

describe('the 24-hour limit on retries', () => {
  test.each([
    [
      'one millisecond before 24 hours, tries again later',
      24 * HOUR - 1,
      { status: 'pending', attempts: 2, lastError: 'ESOCKET: connect ECONNREFUSED 127.0.0.1:25' },
    ],
    [
      'at exactly 24 hours, gives up',
      24 * HOUR,
      { status: 'failed', attempts: 2, lastError: 'gave up after 2 attempts over 24 h; last: ESOCKET: connect ECONNREFUSED 127.0.0.1:25' },
    ],
  ])('a transient failure %s', async (_, after, expected) => {
    const id = await store();
    const { mailer } = scriptedMailer(transient, transient);
    const w = worker(mailer);
    const start = now;
    await w.deliverDue();
    now = start + after;
    await w.deliverDue();
    await expect(outbox.find(id)).resolves.toMatchObject(expected);
  });
});

describe('what the delivery worker logs', () => {
  const withAddress = (permanent: boolean, reason: string): SendResult => ({ ok: false, permanent, reason });
  const entries = () => logs.map(({ time: _, ...rest }) => rest);

  test('a delivery, with the attempt it took', async () => {
    const id = await store();
    await worker(scriptedMailer().mailer).deliverDue();
    expect(entries()).toEqual([{ level: 'info', event: 'contact.delivered', id, attempts: 1 }]);
  });

  test('a retry, with when and why, the address cut to its domain', async () => {
    const id = await store();
    await worker(scriptedMailer(withAddress(false, 'EENVELOPE 450: 450 4.2.0 <owner@example.com>: Recipient address rejected')).mailer).deliverDue();
    expect(entries()).toEqual([
      {
        level: 'warn',
        event: 'contact.delivery_retry',
        id,
        attempts: 1,
        nextAttemptAt: new Date(now + 30 * SECOND).toISOString(),
        reason: 'EENVELOPE 450: 450 4.2.0 <…@example.com>: Recipient address rejected',
      },
    ]);
  });

  test('a permanent failure, with what to do next, the address cut to its domain', async () => {
    const id = await store();
    await worker(scriptedMailer(permanent).mailer).deliverDue();
    expect(entries()).toEqual([
      {
        level: 'error',
        event: 'contact.delivery_failed',
        id,
        attempts: 1,
        reason: 'EENVELOPE 550: 550 5.1.1 <…@example.com> No such user',
        next: 'fix the cause, then npm run inbox -- retry <id>',
      },
    ]);
  });

  test('giving up after 24 hours, the address cut to its domain', async () => {
    const id = await store();
    const { mailer } = scriptedMailer(transient, withAddress(false, 'EENVELOPE 452: mailbox of owner@example.com is full'));
    const w = worker(mailer);
    await w.deliverDue();
    now += 24 * HOUR;
    logs = [];
    await w.deliverDue();
    expect(entries()).toEqual([
      {
        level: 'error',
        event: 'contact.delivery_failed',
        id,
        attempts: 2,
        reason: 'gave up after 2 attempts over 24 h; last: EENVELOPE 452: mailbox of …@example.com is full',
        next: 'fix the cause, then npm run inbox -- retry <id>',
      },
    ]);
    // The owner reads the whole reason in the inbox; only the log is redacted.
    expect((await outbox.find(id))?.lastError).toBe('gave up after 2 attempts over 24 h; last: EENVELOPE 452: mailbox of owner@example.com is full');
  });

  test.each([
    ['a bare address', 'RCPT TO rejected: a.b+c@example.com', 'RCPT TO rejected: …@example.com'],
    ['two addresses in brackets', '<x@one.test>, <y@two.test> refused', '<…@one.test>, <…@two.test> refused'],
    ['an address after a colon', 'mailto:bob@example.org bounced', 'mailto:…@example.org bounced'],
    ['an at sign with no domain after it', 'quota @ 100% for user@', 'quota @ 100% for user@'],
    ['no address at all', 'ETIMEDOUT: connection timed out', 'ETIMEDOUT: connection timed out'],
  ])('a reason with %s is logged with each address cut to its domain', async (_, reason, logged) => {
    await store();
    await worker(scriptedMailer(withAddress(true, reason)).mailer).deliverDue();
    expect(logs[0]?.reason).toBe(logged);
  });

  // The store logs the cause as an error once per outage (tests/lib/health.test.ts); a line per poll would repeat it.
  test('an outbox that fails is noted at debug level only, with the error', async () => {
    const broken: Outbox = {
      ...outbox,
      claim: () => Promise.reject(new Error('database disk image is malformed')),
    };
    await worker(scriptedMailer().mailer, { outbox: broken }).deliverDue();
    expect(entries()).toEqual([{ level: 'debug', event: 'contact.outbox_error', error: 'Error: database disk image is malformed' }]);
  });
});

describe('the delivery worker running in the background', () => {
  test('on start, delivers messages left pending by an earlier process', async () => {
    const id = await store();
    const { mailer, sent } = scriptedMailer();
    const w = worker(mailer, { clock: undefined });
    w.start();
    try {
      await eventually('the pending message to be sent', async () => (await outbox.find(id))?.status === 'sent');
      expect(sent).toHaveLength(1);
      expect(logs).toContainEqual(expect.objectContaining({ event: 'contact.delivery_started', pending: 1 }));
    } finally {
      await w.stop();
    }
  });

  test('a start while the database cannot be read still says it started, without a count', async () => {
    await db.close();
    const w = worker(scriptedMailer().mailer, { clock: undefined });
    w.start();
    try {
      await eventually('the start to be logged', () => logs.find((l) => l.event === 'contact.delivery_started'));
      expect(logs.filter((l) => l.event === 'contact.delivery_started')).toEqual([expect.objectContaining({ level: 'info', pending: null })]);
    } finally {
      await w.stop();
    }
  });

  test('a second start is ignored: one start logged, one message sent once', async () => {
    const id = await store();
    const { mailer, sent } = scriptedMailer();
    const w = worker(mailer, { clock: undefined });
    w.start();
    w.start();
    try {
      await eventually('the pending message to be sent', async () => (await outbox.find(id))?.status === 'sent');
      expect(sent).toHaveLength(1);
      expect(logs.filter((l) => l.event === 'contact.delivery_started')).toHaveLength(1);
    } finally {
      await w.stop();
    }
  });

  test('poke sends a new message at once, without waiting for the poll', async () => {
    const { mailer } = scriptedMailer();
    const w = worker(mailer, { clock: undefined, pollIntervalMs: 60 * SECOND });
    w.start();
    try {
      // Let the first pass end and the worker settle into its 60 s wait.
      await w.deliverDue();
      await new Promise((resolve) => setTimeout(resolve, 20));
      const id = await store();
      w.poke();
      await eventually('the poked message to be sent', async () => (await outbox.find(id))?.status === 'sent', 2_000);
    } finally {
      await w.stop();
    }
  });

  test('retries on its own when the wait is over', async () => {
    const id = await store();
    const { mailer, sent } = scriptedMailer(transient, transient);
    const w = worker(mailer, { clock: undefined, retryBaseMs: 20, pollIntervalMs: 60 * SECOND });
    w.start();
    try {
      await eventually('delivery after two retries', async () => (await outbox.find(id))?.status === 'sent', 5_000);
      expect(sent).toHaveLength(3);
    } finally {
      await w.stop();
    }
  });

  test('wakes for a retry at its time, neither before nor at the next poll', async () => {
    vi.useFakeTimers({ now, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const id = await store();
    const { mailer, sent } = scriptedMailer(transient);
    // The faked time passed as the worker's clock: the queue reads it rather than the database's (decision 0270).
    const w = worker(mailer, { clock: () => new Date(), pollIntervalMs: 60 * SECOND });
    try {
      w.start();
      await vi.advanceTimersByTimeAsync(30 * SECOND - 1);
      expect(sent).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(sent).toHaveLength(2);
      expect((await outbox.find(id))?.status).toBe('sent');
    } finally {
      await w.stop();
      vi.useRealTimers();
    }
  });

  test('stop waits for the message being sent, records it, and sends no other', async () => {
    const a = await store();
    const b = await store();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const sent: string[] = [];
    const order: string[] = [];
    const w = worker(
      {
        async send(email) {
          sent.push(email.messageId);
          await gate;
          order.push('send answered');
          return { ok: true };
        },
      },
      { clock: undefined },
    );
    w.start();
    await eventually('the first send to begin', () => sent.length === 1);
    const stopping = w.stop().then(() => order.push('stopped'));
    // The send is held until stop has been asked; whenever stop ends, it must be after the answer.
    release();
    await stopping;
    expect(order).toEqual(['send answered', 'stopped']);
    expect(sent).toEqual([`<contact-${a}>`]);
    expect((await outbox.find(a))?.status).toBe('sent');
    expect((await outbox.find(b))?.status).toBe('pending');
  });
});
