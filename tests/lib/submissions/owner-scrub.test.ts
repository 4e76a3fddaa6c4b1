import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createAutoReply } from '../../../packages/site-forms/src/lib/contact/auto-reply.ts';
import { runInboxCommand } from '../../../packages/site-forms/src/cli/inbox/commands.ts';
import type { Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createSmtpMailer } from '../../../packages/site-forms/src/lib/mail/mailer.ts';
import { createDeliveries } from '../../../packages/site-forms/src/lib/webhooks/deliveries.ts';
import type { Endpoint } from '../../../packages/site-forms/src/lib/webhooks/endpoints.ts';
import { createWebhookWorker, type WebhookWorker } from '../../../packages/site-forms/src/lib/webhooks/worker.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';
import { type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';
import { testEngines } from '../../support/stores.ts';

/**
 * The owner's "spam" and "delete" reach what is queued for a message (issue 28, item 8): its
 * automatic reply and webhook deliveries waiting for a mail server that answers 451 and a
 * receiver that answers 503 are cancelled, and its news (name, address, text) leaves `events`.
 * Real SMTP and HTTP servers on 127.0.0.1, the inbox command as the owner types it, both engines.
 */
const site = { name: 'Test Site', senderName: 'Test Site forms' };
const settings = { subject: 'Thanks', text: 'Hello {name}, thank you.', includeMessage: true, maxPerHour: 100 };
const logger = createLogger({ level: 'silent' });

let smtp: FakeSmtpServer;
let receiver: FakeHttpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
  receiver = await startFakeHttpServer();
});
afterAll(async () => {
  await smtp.close();
  await receiver.close();
});

describe.each(testEngines())('the owner’s spam and delete on $name', (engine) => {
  let worker: WebhookWorker | undefined;
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
  });

  /** A store, a webhook endpoint and the automatic reply, both failing for now, with a clock the test moves. */
  async function setUp() {
    const { store } = await engine.open();
    smtp.received.length = 0;
    const attemptsBefore = smtp.attempts();
    smtp.answer(() => ({ code: 451, message: '4.3.0 Try again later' }));
    receiver.requests.length = 0;
    receiver.reply(replyJson(503, {}));
    // Real time: the messages are stored at the time of day, and the retries fall due an hour on.
    const clock = { now: new Date() };
    const mail = { url: smtp.url(), to: 'owner@example.com', from: 'forms@example.com' };
    const endpoints: Endpoint[] = [
      { name: 'hook', kind: 'standard', url: `${receiver.url}/hook`, events: ['contact.received', 'contact.held'] },
      { name: 'auto-reply', kind: 'auto-reply', url: '', events: ['contact.received'] },
    ];
    worker = createWebhookWorker({
      deliveries: createDeliveries(store.sql),
      endpoints,
      siteName: site.name,
      allowPrivate: true,
      logger,
      now: () => clock.now,
      autoReply: createAutoReply({ settings, smtp: mail, mailer: createSmtpMailer(mail), site, sql: store.sql }),
    });
    return { store, clock, worker, attempts: () => smtp.attempts() - attemptsBefore };
  }

  const receive = (store: Store, name: string, email: string) =>
    store.submissions.receive({ name, email, message: `A note from ${name}.`, held: undefined, shownPerson: true });

  async function recordedNames(store: Store) {
    const rows = await store.sql.all<{ data: string }>('SELECT data FROM events ORDER BY id');
    // Sorted by name: an event's id begins with its millisecond, so two of one millisecond have no order.
    return rows.map((row) => (JSON.parse(row.data) as { name: string }).name).sort();
  }

  test.runIf(engine.available)(
    '`inbox spam` and `inbox delete` cancel the reply and the deliveries a 451 and a 503 left waiting, and take the message out of events',
    async () => {
      const { store, clock, worker, attempts } = await setUp();
      const ada = await receive(store, 'Ada Spammer', 'ada@example.org');
      const bea = await receive(store, 'Bea Deleted', 'bea@example.org');
      await receive(store, 'Cara Kept', 'cara@example.org');
      await worker.runPass();
      // Every reply met the 451 and every delivery the 503: all six wait for their retry.
      expect(attempts()).toBe(3);
      expect(receiver.requests).toHaveLength(3);
      await expect(recordedNames(store)).resolves.toEqual(['Ada Spammer', 'Bea Deleted', 'Cara Kept']);

      const out: string[] = [];
      const io = {
        outbox: store.outbox,
        spam: store.spam,
        out: (text: string) => void out.push(text),
        err: (text: string) => void out.push(text),
      };
      await expect(runInboxCommand({ name: 'spam', id: ada.id }, io)).resolves.toBe(0);
      await expect(runInboxCommand({ name: 'delete', id: bea.id }, io)).resolves.toBe(0);
      expect(out.join('')).toContain(`Message #${bea.id} is deleted`);
      await expect(recordedNames(store)).resolves.toEqual(['Cara Kept']);

      // The servers are back and the retries are due: only the message the owner kept is answered and posted.
      smtp.answer(() => 'accept');
      receiver.reply(replyJson(200, {}));
      clock.now = new Date(clock.now.getTime() + 3_600_000);
      await worker.runPass();
      expect(smtp.received.map((mail) => mail.to)).toEqual([['cara@example.org']]);
      expect(receiver.requests.slice(3).map((request) => (JSON.parse(request.body) as { data: { name: string } }).data.name)).toEqual(['Cara Kept']);
      await expect(createDeliveries(store.sql).nextDueAt()).resolves.toBeUndefined();
      const left = await store.sql.all<{ data: string }>('SELECT data FROM events');
      expect(left.map((row) => row.data).join('\n')).not.toMatch(/ada@example\.org|bea@example\.org|Spammer|Deleted/);
      // Ada's message is held, not gone; Bea's is gone.
      expect((await store.outbox.find(ada.id))?.status).toBe('spam');
      await expect(store.outbox.find(bea.id)).resolves.toBeUndefined();
    },
  );

  test.runIf(engine.available)('spam asked while the message is being sent: its news goes when that send ends, before any reply is sent', async () => {
    const { store, clock, worker, attempts } = await setUp();
    const ada = await receive(store, 'Ada Spammer', 'ada@example.org');
    await worker.runPass();
    expect(attempts()).toBe(1);
    // The mail worker takes it now (after it was stored), as the running server would.
    const at = new Date();
    const claimed = await store.outbox.claim(at, new Date(at.getTime() + 60_000));
    expect(claimed?.id).toBe(ada.id);
    const change = await store.spam.markSpam(ada.id);
    expect(change).toMatchObject({ changed: true, deferred: true });
    // The send under way ends on the 451: the owner's request is applied then, with its news.
    await expect(store.outbox.markRetry(ada.id, at, new Date(at.getTime() + 60_000), '451', claimed!.lease)).resolves.toBe('spam');
    await expect(recordedNames(store)).resolves.toEqual([]);
    smtp.answer(() => 'accept');
    receiver.reply(replyJson(200, {}));
    clock.now = new Date(clock.now.getTime() + 3_600_000);
    await worker.runPass();
    expect(smtp.received).toEqual([]);
    expect(receiver.requests).toHaveLength(1);
    await expect(createDeliveries(store.sql).nextDueAt()).resolves.toBeUndefined();
  });

  test.runIf(engine.available)('`inbox delete` while the message is being sent: its news goes with it when that send ends', async () => {
    const { store, clock, worker } = await setUp();
    const bea = await receive(store, 'Bea Deleted', 'bea@example.org');
    await worker.runPass();
    const at = new Date();
    const claimed = await store.outbox.claim(at, new Date(at.getTime() + 60_000));
    expect(claimed?.id).toBe(bea.id);
    const out: string[] = [];
    const io = { outbox: store.outbox, out: (text: string) => void out.push(text), err: (text: string) => void out.push(text) };
    await expect(runInboxCommand({ name: 'delete', id: bea.id }, io)).resolves.toBe(0);
    expect(out).toEqual([`Message #${bea.id} is being sent right now: it is deleted with its history once that send ends.\n`]);
    await expect(store.outbox.markSent(bea.id, at, claimed!.lease)).resolves.toBe('deleted');
    await expect(recordedNames(store)).resolves.toEqual([]);
    smtp.answer(() => 'accept');
    receiver.reply(replyJson(200, {}));
    clock.now = new Date(clock.now.getTime() + 3_600_000);
    await worker.runPass();
    expect(smtp.received).toEqual([]);
    await expect(createDeliveries(store.sql).nextDueAt()).resolves.toBeUndefined();
  });

  test.runIf(engine.available)('a delivery of the message being posted while the owner deletes it records nothing afterwards', async () => {
    const { store, clock } = await setUp();
    const ada = await receive(store, 'Ada Deleted', 'ada@example.org');
    const deliveries = createDeliveries(store.sql);
    await deliveries.fanOut([{ name: 'hook', kind: 'standard', url: `${receiver.url}/hook`, events: ['contact.received'] }], clock.now);
    const claimed = await deliveries.claim(clock.now, new Date(clock.now.getTime() + 60_000));
    expect(claimed?.event.data).toMatchObject({ name: 'Ada Deleted' });
    await expect(store.outbox.remove(ada.id, clock.now)).resolves.toMatchObject({ changed: true, to: 'deleted' });
    await expect(
      deliveries.finish(claimed!.delivery.id, claimed!.lease, { kind: 'retry', status: 503, error: 'HTTP 503' }, clock.now),
    ).resolves.toBeUndefined();
    await expect(deliveries.list(10)).resolves.toEqual([]);
    await expect(store.sql.all('SELECT id FROM webhook_attempts')).resolves.toEqual([]);
  });
});
