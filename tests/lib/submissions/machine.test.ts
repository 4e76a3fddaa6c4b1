/**
 * One state machine for a message: the table of moves, each move on both engines, and the
 * races between the worker, the owner and a second instance, with a real SMTP server that
 * holds DATA while the race happens.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { requireConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { createSmtpMailer } from '../../../packages/site-forms/src/lib/mail/mailer.ts';
import { composeContactEmail } from '../../../packages/site-forms/src/lib/contact/message.ts';
import { createDeliveryWorker } from '../../../packages/site-forms/src/lib/contact/worker.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createSubmissionMachine, requireMove, type State } from '../../../packages/site-forms/src/lib/submissions/machine.ts';
import { eventually, type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';
import { TEST_DATABASE, testEngines } from '../../support/stores.ts';

const input = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more.', held: undefined };

describe('the table of moves', () => {
  test.each<[State, State]>([
    ['pending', 'sending'],
    ['pending', 'spam'],
    ['sending', 'sent'],
    ['sending', 'pending'],
    ['sending', 'failed'],
    ['sending', 'spam'],
    ['sending', 'deleted'],
    ['failed', 'pending'],
    ['spam', 'pending'],
    ['spam', 'sent'],
    ['sent', 'spam'],
    ['sent', 'deleted'],
  ])('%s → %s is allowed', (from, to) => {
    expect(() => requireMove(from, to)).not.toThrow();
  });

  test.each<[State, State]>([
    ['pending', 'sent'],
    ['sent', 'pending'],
    ['failed', 'sent'],
    ['spam', 'failed'],
    ['deleted', 'pending'],
    ['pending', 'failed'],
  ])('%s → %s is a bug and throws', (from, to) => {
    expect(() => requireMove(from, to)).toThrow(`no move ${from} → ${to}`);
  });

  const STATES = ['pending', 'sending', 'sent', 'failed', 'spam', 'deleted'] as const;

  test.each(STATES)('nothing leaves deleted: deleted → %s throws', (to) => {
    expect(() => requireMove('deleted', to)).toThrow(`no move deleted → ${to}`);
  });

  test('only a send (sending) or the owner (spam) reaches sent', () => {
    const intoSent = STATES.filter((from) => {
      try {
        requireMove(from, 'sent');
        return true;
      } catch {
        return false;
      }
    });
    expect(intoSent).toEqual(['sending', 'spam']);
  });
});

const SECOND = 1_000;

describe.each(testEngines())('each move on $name', (engine) => {
  const open = async () => {
    const opened = await engine.open();
    return { ...opened, machine: createSubmissionMachine(opened.store.sql) };
  };

  test.skipIf(!engine.available)('received: pending and due, or held with its reasons', async () => {
    const { store, machine } = await open();
    const kept = await machine.receive(input);
    const held = await machine.receive({ ...input, held: ['too-fast'] });
    expect(kept).toEqual({ id: expect.any(Number), status: 'pending', reasons: [] });
    expect(held).toEqual({ id: expect.any(Number), status: 'spam', reasons: ['too-fast'] });
    await expect(store.outbox.find(held.id)).resolves.toMatchObject({ status: 'spam', spamReasons: ['too-fast'], nextAttemptAt: null });
  });

  test.skipIf(!engine.available)('with nothing to read them (events off) no news is recorded; on, one per message and per release', async () => {
    const { store } = await engine.open();
    const types = async () => (await store.sql.all<{ type: string }>('SELECT type FROM events')).map((event) => event.type).sort();
    const quiet = createSubmissionMachine(store.sql, { events: false });
    const heldQuietly = await quiet.receive({ ...input, held: ['too-fast'] });
    await quiet.receive(input);
    await expect(quiet.release(heldQuietly.id, new Date())).resolves.toMatchObject({ changed: true, to: 'pending' });
    await expect(types()).resolves.toEqual([]);
    const told = createSubmissionMachine(store.sql);
    const held = await told.receive({ ...input, held: ['too-fast'] });
    await told.receive(input);
    await expect(told.release(held.id, new Date())).resolves.toMatchObject({ changed: true, to: 'pending' });
    await expect(types()).resolves.toEqual(['contact.held', 'contact.received', 'contact.received']);
  });

  test.skipIf(!engine.available)(
    'a message released, marked spam and released again is news under one id: the owner\'s "Spam" forgets it, each release records it again under the same id',
    async () => {
      const { store, machine } = await open();
      const events = async () =>
        (await store.sql.all<{ id: string; type: string; data: string }>('SELECT id, type, data FROM events ORDER BY type, data')).map((event) => ({
          type: event.type,
          message: (JSON.parse(event.data) as { id: number }).id,
          id: event.id,
        }));
      const held = await machine.receive({ ...input, held: ['too-fast'] });
      const receivedIds = new Set<string>();
      for (let round = 0; round < 3; round++) {
        await expect(machine.release(held.id, new Date())).resolves.toMatchObject({ changed: true, to: 'pending' });
        const recorded = (await events()).filter((event) => event.type === 'contact.received');
        expect(recorded).toHaveLength(1);
        receivedIds.add(recorded[0]!.id);
        await expect(machine.hold(held.id, new Date())).resolves.toMatchObject({ changed: true, to: 'spam' });
        await expect(events()).resolves.toEqual([]);
      }
      expect(receivedIds.size).toBe(1);
      // A second release of a message whose event is still there records nothing new.
      await machine.release(held.id, new Date());
      await machine.release(held.id, new Date());
      await expect(events()).resolves.toEqual([{ type: 'contact.received', message: held.id, id: [...receivedIds][0] }]);
    },
  );

  test.skipIf(!engine.available)('a proof is consumed with the message: its second use is held as replayed', async () => {
    const { machine } = await open();
    const proof = { id: 'nonce-a', expiresAtMs: Date.now() + 60 * SECOND };
    await expect(machine.receive({ ...input, proof })).resolves.toMatchObject({ status: 'pending', reasons: [] });
    await expect(machine.receive({ ...input, proof })).resolves.toMatchObject({ status: 'spam', reasons: ['proof-replayed'] });
  });

  test.skipIf(!engine.available)('a save that fails leaves its proof usable: the next try is stored, not held as replayed', async () => {
    const { store, machine } = await open();
    const proof = { id: 'nonce-b', expiresAtMs: Date.now() + 60 * SECOND };
    // A message the database refuses (NOT NULL): the transaction rolls back, proof and all.
    await expect(machine.receive({ ...input, name: null as unknown as string, proof })).rejects.toThrow();
    await expect(store.sql.get('SELECT id FROM used_challenges WHERE id = ?', ['nonce-b'])).resolves.toBeUndefined();
    await expect(machine.receive({ ...input, proof })).resolves.toMatchObject({ status: 'pending', reasons: [] });
  });

  test.skipIf(!engine.available)('failed → pending once; sent and held messages are not retried', async () => {
    const { store, machine } = await open();
    const { id } = await machine.receive(input);
    const now = new Date();
    const claimed = await machine.claim(now, new Date(now.getTime() + 60 * SECOND));
    await expect(machine.finish(id, claimed!.lease, { kind: 'failed', at: now, error: '550 no such user' })).resolves.toBe('failed');
    await expect(machine.requeue(id, now)).resolves.toEqual({ found: true, from: 'failed', changed: true, to: 'pending' });
    await expect(machine.requeue(id, now)).resolves.toEqual({ found: true, from: 'pending', changed: false });
    await expect(machine.requeue(424242, now)).resolves.toEqual({ found: false });
    await expect(store.outbox.history(id)).resolves.toEqual([
      { at: now.toISOString(), outcome: 'failed', error: '550 no such user' },
      { at: now.toISOString(), outcome: 'requeued', error: null },
    ]);
  });

  test.skipIf(!engine.available)('the sender’s confirmation queues a message held for its missing proof alone, once; never one the owner marked', async () => {
    const { store, machine } = await open();
    const now = new Date();
    const waiting = (await machine.receive({ ...input, held: ['proof-missing'] })).id;
    const stuffed = (await machine.receive({ ...input, held: ['too-many-links'] })).id;
    const marked = (await machine.receive({ ...input, held: ['proof-missing'] })).id;
    // The owner let it go, then judged it spam after all: their word stands.
    await machine.release(marked, now);
    await machine.hold(marked, now);
    await expect(machine.confirmBySender(waiting, now)).resolves.toEqual({ found: true, from: 'spam', changed: true, to: 'pending' });
    await expect(machine.confirmBySender(waiting, now)).resolves.toEqual({ found: true, from: 'pending', changed: false });
    await expect(machine.confirmBySender(stuffed, now)).resolves.toEqual({ found: true, from: 'spam', changed: false });
    await expect(machine.confirmBySender(marked, now)).resolves.toEqual({ found: true, from: 'spam', changed: false });
    await expect(machine.confirmBySender(424242, now)).resolves.toEqual({ found: false });
    await expect(store.outbox.history(waiting)).resolves.toEqual([{ at: now.toISOString(), outcome: 'requeued', error: 'confirmed by the sender' }]);
  });

  test.skipIf(!engine.available)('of two confirmations at once, one queues the message', async () => {
    const { store, machine } = await open();
    const { id } = await machine.receive({ ...input, held: ['proof-missing'] });
    const other = createSubmissionMachine(store.sql);
    const now = new Date();
    const answers = await Promise.all([machine.confirmBySender(id, now), other.confirmBySender(id, now)]);
    expect(answers.filter((answer) => answer.found && answer.changed)).toHaveLength(1);
    await expect(store.outbox.history(id)).resolves.toHaveLength(1);
  });

  test.skipIf(!engine.available)('retention deletes old messages with their history, but not one being sent; held-only deletes only held ones', async () => {
    const { store, machine } = await open();
    const ids = [];
    for (const held of [undefined, undefined, ['too-fast']]) ids.push((await machine.receive({ ...input, held })).id);
    await store.sql.run("UPDATE submissions SET created_at = '2020-01-01T00:00:00.000Z', next_attempt_at = '2020-01-01T00:00:00.000Z'");
    const now = new Date();
    const claimed = await machine.claim(now, new Date(now.getTime() + 60 * SECOND));
    await expect(machine.removeReceivedBefore(new Date('2021-01-01T00:00:00.000Z'), now, { heldOnly: true })).resolves.toBe(1);
    await expect(machine.removeReceivedBefore(new Date('2021-01-01T00:00:00.000Z'), now)).resolves.toBe(1);
    // The one being sent stays until its send ends.
    expect((await store.outbox.list()).map((m) => m.id)).toEqual([claimed!.id]);
    expect(ids).toContain(claimed!.id);
  });

  test.skipIf(!engine.available)('a sender that died with the owner’s request pending: the request is applied, the message never sent', async () => {
    const { store, machine } = await open();
    const held = (await machine.receive(input)).id;
    const deleted = (await machine.receive(input)).id;
    const start = new Date();
    const lease = new Date(start.getTime() + 60 * SECOND);
    await machine.claim(start, lease);
    await machine.claim(start, lease);
    await expect(machine.hold(held, start)).resolves.toMatchObject({ from: 'sending', deferred: true });
    await expect(machine.remove(deleted, start)).resolves.toMatchObject({ from: 'sending', deferred: true });
    // The lease runs out with no outcome: the sender is gone.
    const later = new Date(lease.getTime() + SECOND);
    await expect(machine.claim(later, new Date(later.getTime() + 60 * SECOND))).resolves.toBeUndefined();
    // The upkeep applies what the owner asked.
    await expect(machine.upkeep(later)).resolves.toMatchObject({ gaveUp: [] });
    await expect(store.outbox.find(held)).resolves.toMatchObject({ status: 'spam', sentAt: null });
    await expect(store.outbox.find(deleted)).resolves.toBeUndefined();
  });
});

describe.each(testEngines())('races on $name, with a mail server that holds DATA', (engine) => {
  let smtp: FakeSmtpServer;
  let letGo: () => void = () => {};
  beforeAll(async () => {
    smtp = await startSmtpServer();
  });
  afterAll(() => smtp.close());

  /** The same database, opened a second time: another instance of the site. */
  const secondInstance = (url: string | undefined, dataDir: string): Promise<Store> => {
    const store = openStore({ ...TEST_DATABASE, url, dataDir }, createLogger({ level: 'silent' }));
    return store.ready.then(() => store);
  };

  const open = async () => {
    const opened = await engine.open();
    const logs: Array<Record<string, unknown>> = [];
    const logger = createLogger({ level: 'info', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
    const { smtp: settings } = requireConfig({ SMTP_URL: smtp.url(), CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'site@example.com' });
    const worker = createDeliveryWorker({
      outbox: opened.store.outbox,
      mailer: createSmtpMailer(settings!, { logger }),
      compose: (submission) => composeContactEmail(submission, settings!, { name: 'Site', senderName: 'Site', adminOrigin: undefined }),
      logger,
    });
    const other = await secondInstance(opened.url, opened.dataDir);
    smtp.received.length = 0;
    // DATA is held until the test lets it go.
    smtp.answer(() => new Promise((resolve) => (letGo = () => resolve('accept'))));
    return { ...opened, worker, logs, owner: createSubmissionMachine(other.sql), other, received: smtp.attempts() };
  };

  test.skipIf(!engine.available)(
    '“spam” from another instance during the send: the send is recorded, the message held, and “Not spam” never sends it again',
    async () => {
      const { store, worker, owner, other, received } = await open();
      const { id } = await createSubmissionMachine(store.sql).receive(input);
      const delivering = worker.deliverDue();
      await eventually('DATA reaches the mail server', () => smtp.attempts() > received);
      await expect(owner.hold(id, new Date())).resolves.toEqual({ found: true, from: 'sending', changed: true, to: 'spam', deferred: true });
      letGo();
      await delivering;

      await expect(store.outbox.find(id)).resolves.toMatchObject({ status: 'spam', sentAt: expect.any(String), spamReasons: ['marked-by-owner'] });
      await expect(store.outbox.history(id)).resolves.toEqual([{ at: expect.any(String), outcome: 'sent', error: null }]);
      await expect(owner.release(id, new Date())).resolves.toEqual({ found: true, from: 'spam', changed: true, to: 'sent' });
      smtp.answer(() => 'accept');
      await worker.deliverDue();
      expect(smtp.received).toHaveLength(1);
      await other.close();
    },
  );

  test.skipIf(!engine.available)('“delete” during the send: the admin is told it waits, the mail goes out once, then the message is gone', async () => {
    const { store, worker, owner, other, logs, received } = await open();
    const { id } = await createSubmissionMachine(store.sql).receive(input);
    const delivering = worker.deliverDue();
    await eventually('DATA reaches the mail server', () => smtp.attempts() > received);
    await expect(owner.remove(id, new Date())).resolves.toEqual({ found: true, from: 'sending', changed: true, to: 'deleted', deferred: true });
    await expect(store.outbox.find(id)).resolves.toMatchObject({ status: 'pending' });
    letGo();
    await delivering;

    await expect(store.outbox.find(id)).resolves.toBeUndefined();
    await expect(store.outbox.history(id)).resolves.toEqual([]);
    expect(smtp.received).toHaveLength(1);
    expect(logs).toContainEqual(expect.objectContaining({ event: 'contact.delivered', id, afterwards: 'deleted by the owner' }));
    await other.close();
  });

  test.skipIf(!engine.available)('two instances answering “Retry” at once: one moves it, one history row', async () => {
    const { store, owner, other } = await open();
    const here = createSubmissionMachine(store.sql);
    const { id } = await here.receive(input);
    const now = new Date();
    const claimed = await here.claim(now, new Date(now.getTime() + 60 * SECOND));
    await here.finish(id, claimed!.lease, { kind: 'failed', at: now, error: '550 no such user' });

    const answers = await Promise.all([here.requeue(id, now), owner.requeue(id, now)]);
    expect(answers.filter((a) => a.found && a.changed)).toHaveLength(1);
    const history = await store.outbox.history(id);
    expect(history.map((e) => e.outcome)).toEqual(['failed', 'requeued']);
    await other.close();
  });
});
