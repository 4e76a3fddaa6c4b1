/**
 * What each command of the machine answers and what it leaves in the row, read back with plain
 * SQL: a lease still running against one that ran out, the owner's "Spam" or "Delete" asked
 * during a send and what the finished send then records, a lease lost before the send ended,
 * leases ended at start, the reasons a held message keeps, and the form and fields stored.
 */
import { describe, expect, test } from 'vitest';
import type { Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createSubmissionMachine, parseFields, parseReasons } from '../../../packages/site-forms/src/lib/submissions/machine.ts';
import { testEngines } from '../../support/stores.ts';

const input = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more.', held: undefined };

const T0 = new Date('2030-01-01T10:00:00.000Z');
const LEASE = new Date('2030-01-01T10:01:00.000Z');
const MIDWAY = new Date('2030-01-01T10:00:30.000Z');
const AFTER = new Date('2030-01-01T10:02:00.000Z');

type Stored = {
  status: string;
  lease_until: string | null;
  requested: string | null;
  spam_reasons: string | null;
  sent_at: string | null;
  next_attempt_at: string | null;
  attempts: number;
  last_error: string | null;
};

const row = (store: Store, id: number) =>
  store.sql.get<Stored>('SELECT status, lease_until, requested, spam_reasons, sent_at, next_attempt_at, attempts, last_error FROM submissions WHERE id = ?', [
    id,
  ]);
const history = async (store: Store, id: number) =>
  store.sql.all<{ attempted_at: string; outcome: string; error: string | null }>(
    'SELECT attempted_at, outcome, error FROM delivery_attempts WHERE submission_id = ? ORDER BY id',
    [id],
  );
// In the order of the message they tell of, then of their type: events of one millisecond have
// no order of their own (an event's id is its millisecond, then random bits).
const events = async (store: Store) =>
  (await store.sql.all<{ type: string; data: string }>('SELECT type, data FROM events'))
    .map((e) => ({ type: e.type, data: JSON.parse(e.data) as Record<string, unknown> }))
    .sort((a, b) => Number(a.data.id) - Number(b.data.id) || a.type.localeCompare(b.type));

describe.each(testEngines())('the machine’s answers on $name', (engine) => {
  const open = async () => {
    const { store } = await engine.open();
    const machine = createSubmissionMachine(store.sql);
    /** A message received and due at T0, so that a claim at T0 takes it. */
    const queued = async (extra: Partial<Parameters<typeof machine.receive>[0]> = {}) => {
      const { id } = await machine.receive({ ...input, ...extra });
      await store.sql.run('UPDATE submissions SET next_attempt_at = ? WHERE id = ?', [T0.toISOString(), id]);
      return id;
    };
    return { store, machine, queued };
  };

  describe('a lease still running, or run out', () => {
    test.skipIf(!engine.available)('“Spam” while the lease runs is deferred; at the very instant it runs out the message is held at once', async () => {
      const { store, machine, queued } = await open();
      const id = await queued();
      await expect(machine.claim(T0, LEASE)).resolves.toEqual({ id, lease: { worker: expect.any(String), until: LEASE.toISOString() } });
      await expect(machine.hold(id, MIDWAY)).resolves.toEqual({ found: true, from: 'sending', changed: true, to: 'spam', deferred: true });
      await expect(row(store, id)).resolves.toMatchObject({
        status: 'pending',
        requested: 'hold',
        lease_until: LEASE.toISOString(),
        spam_reasons: '["marked-by-owner"]',
      });

      const other = await queued();
      await machine.claim(T0, LEASE);
      // lease_until equal to now: the lease is over, the message is plainly pending.
      await expect(machine.hold(other, LEASE)).resolves.toEqual({ found: true, from: 'pending', changed: true, to: 'spam' });
      await expect(row(store, other)).resolves.toMatchObject({
        status: 'spam',
        requested: null,
        lease_until: null,
        next_attempt_at: null,
        spam_reasons: '["marked-by-owner"]',
      });
    });

    test.skipIf(!engine.available)('“Delete” after the lease ran out erases at once, and the late send’s outcome then answers deleted', async () => {
      const { store, machine, queued } = await open();
      const failing = await queued();
      const sending = await queued();
      const failLease = await machine.claim(T0, LEASE);
      const sendLease = await machine.claim(T0, LEASE);
      await expect(machine.remove(failing, AFTER)).resolves.toEqual({ found: true, from: 'pending', changed: true, to: 'deleted' });
      await expect(machine.remove(sending, AFTER)).resolves.toEqual({ found: true, from: 'pending', changed: true, to: 'deleted' });
      await expect(machine.finish(failing, failLease!.lease, { kind: 'failed', at: AFTER, error: '550 no such user' })).resolves.toBe('deleted');
      await expect(machine.finish(sending, sendLease!.lease, { kind: 'sent', at: AFTER })).resolves.toBe('deleted');
      await expect(store.sql.all('SELECT id FROM submissions')).resolves.toEqual([]);
      await expect(store.sql.all('SELECT id FROM delivery_attempts')).resolves.toEqual([]);
    });

    test.skipIf(!engine.available)('a retry whose lease another instance took meanwhile changes nothing: still pending, never marked as sent', async () => {
      const { store, machine, queued } = await open();
      const id = await queued();
      const first = await machine.claim(T0, LEASE);
      const secondLease = new Date('2030-01-01T10:03:00.000Z');
      await expect(machine.claim(AFTER, secondLease)).resolves.toEqual({ id, lease: { worker: expect.any(String), until: secondLease.toISOString() } });
      const next = new Date('2030-01-01T11:00:00.000Z');
      await expect(machine.finish(id, first!.lease, { kind: 'retry', at: AFTER, next, error: '451 try later' })).resolves.toBe('pending');
      await expect(row(store, id)).resolves.toMatchObject({
        status: 'pending',
        sent_at: null,
        // Both claims counted as they were made; the lost retry adds nothing.
        attempts: 2,
        last_error: null,
        lease_until: secondLease.toISOString(),
      });
      await expect(history(store, id)).resolves.toEqual([]);

      // The late mail that did go out is recorded, and the lease holder's own end still applies.
      await expect(machine.finish(id, first!.lease, { kind: 'sent', at: AFTER })).resolves.toBe('pending');
      await expect(row(store, id)).resolves.toMatchObject({ status: 'pending', sent_at: AFTER.toISOString() });
      await expect(history(store, id)).resolves.toEqual([{ attempted_at: AFTER.toISOString(), outcome: 'sent', error: null }]);
    });

    test.skipIf(!engine.available)('a message held when its dead sender’s lease ran out stays held for an owner whose clock is behind', async () => {
      const { store, machine, queued } = await open();
      const id = await queued();
      await machine.claim(T0, LEASE);
      await machine.hold(id, MIDWAY);
      // No claim takes it after the lease; the upkeep applies the request, and the old lease is left on the held row.
      await expect(machine.claim(AFTER, new Date('2030-01-01T10:03:00.000Z'))).resolves.toBeUndefined();
      await machine.upkeep(AFTER);
      await expect(row(store, id)).resolves.toMatchObject({ status: 'spam', requested: null, lease_until: LEASE.toISOString() });
      // Seen at a time the old lease still covers, it is held, not being sent.
      await expect(machine.release(id, MIDWAY)).resolves.toEqual({ found: true, from: 'spam', changed: true, to: 'pending' });
      await expect(row(store, id)).resolves.toMatchObject({ status: 'pending', lease_until: null, next_attempt_at: MIDWAY.toISOString() });
    });
  });

  describe('the owner’s request during a send', () => {
    test.skipIf(!engine.available)('a send that ends after “Spam” answers spam and leaves the message held, sent once', async () => {
      const { store, machine, queued } = await open();
      const id = await queued();
      const claimed = await machine.claim(T0, LEASE);
      await machine.hold(id, MIDWAY);
      await expect(machine.finish(id, claimed!.lease, { kind: 'sent', at: MIDWAY })).resolves.toBe('spam');
      await expect(row(store, id)).resolves.toEqual({
        status: 'spam',
        lease_until: null,
        requested: null,
        spam_reasons: '["marked-by-owner"]',
        sent_at: MIDWAY.toISOString(),
        next_attempt_at: null,
        attempts: 1,
        last_error: null,
      });
      await expect(history(store, id)).resolves.toEqual([{ attempted_at: MIDWAY.toISOString(), outcome: 'sent', error: null }]);

      // "Not spam" on a message that went out: back to sent, no requeue in its history, no news.
      const before = (await events(store)).length;
      await expect(machine.release(id, AFTER)).resolves.toEqual({ found: true, from: 'spam', changed: true, to: 'sent' });
      await expect(row(store, id)).resolves.toMatchObject({ status: 'sent', attempts: 1 });
      await expect(history(store, id)).resolves.toEqual([{ attempted_at: MIDWAY.toISOString(), outcome: 'sent', error: null }]);
      expect(await events(store)).toHaveLength(before);
    });

    test.skipIf(!engine.available)('“Not spam” before the send ends takes the request back once; the send then stands', async () => {
      const { store, machine, queued } = await open();
      const id = await queued();
      const claimed = await machine.claim(T0, LEASE);
      await machine.hold(id, MIDWAY);
      await expect(machine.release(id, MIDWAY)).resolves.toEqual({ found: true, from: 'spam', changed: true, to: 'sending' });
      await expect(row(store, id)).resolves.toMatchObject({ status: 'pending', requested: null, lease_until: LEASE.toISOString() });
      await expect(machine.release(id, MIDWAY)).resolves.toEqual({ found: true, from: 'sending', changed: false });
      await expect(machine.finish(id, claimed!.lease, { kind: 'sent', at: MIDWAY })).resolves.toBe('sent');
      await expect(row(store, id)).resolves.toMatchObject({ status: 'sent', requested: null, sent_at: MIDWAY.toISOString() });
    });

    test.skipIf(!engine.available)('“Not spam” takes back only a “Spam”: a pending “Delete” stays', async () => {
      const { store, machine, queued } = await open();
      const deleted = await queued();
      await machine.claim(T0, LEASE);
      await expect(machine.remove(deleted, MIDWAY)).resolves.toEqual({ found: true, from: 'sending', changed: true, to: 'deleted', deferred: true });
      await expect(machine.release(deleted, MIDWAY)).resolves.toEqual({ found: true, from: 'sending', changed: false });
      await expect(row(store, deleted)).resolves.toMatchObject({ status: 'pending', requested: 'delete' });
    });

    test.skipIf(!engine.available)('“Not spam” after the dead sender’s lease, before the upkeep, takes the Spam back', async () => {
      const { store, machine, queued } = await open();
      const held = await queued();
      await machine.claim(T0, LEASE);
      await machine.hold(held, MIDWAY);
      // The lease ran out (the sender died) and no upkeep ran yet: the message is not spam yet, the request is taken back.
      await expect(machine.release(held, AFTER)).resolves.toEqual({ found: true, from: 'spam', changed: true, to: 'pending' });
      await expect(row(store, held)).resolves.toMatchObject({ status: 'pending', requested: null });
      // The upkeep then holds nothing, and the message is sent again as if never marked.
      await machine.upkeep(AFTER);
      await expect(row(store, held)).resolves.toMatchObject({ status: 'pending', requested: null });
      await expect(machine.claim(AFTER, new Date(AFTER.getTime() + 60_000))).resolves.toMatchObject({ id: held });
    });

    test.skipIf(!engine.available)('ending every lease applies the requests, counts the leases ended, and frees the rest for a claim', async () => {
      const { store, machine, queued } = await open();
      const plain = await queued();
      const held = await queued();
      const deleted = await queued();
      const waiting = await queued();
      for (let i = 0; i < 3; i++) await machine.claim(T0, LEASE);
      await machine.hold(held, MIDWAY);
      await machine.remove(deleted, MIDWAY);
      await expect(machine.releaseLeases()).resolves.toBe(2);
      await expect(row(store, plain)).resolves.toMatchObject({ status: 'pending', lease_until: null, requested: null });
      await expect(row(store, held)).resolves.toMatchObject({
        status: 'spam',
        lease_until: null,
        requested: null,
        next_attempt_at: null,
        spam_reasons: '["marked-by-owner"]',
      });
      await expect(row(store, deleted)).resolves.toBeUndefined();
      await expect(row(store, waiting)).resolves.toMatchObject({ status: 'pending', lease_until: null });
      await expect(machine.releaseLeases()).resolves.toBe(0);
      await expect(machine.claim(MIDWAY, LEASE)).resolves.toEqual({ id: plain, lease: { worker: expect.any(String), until: LEASE.toISOString() } });
    });

    test.skipIf(!engine.available)('“Delete” of a message not being sent answers what it erased; of a missing one, not found', async () => {
      const { store, machine, queued } = await open();
      const id = await queued();
      await expect(machine.remove(id, T0)).resolves.toEqual({ found: true, from: 'pending', changed: true, to: 'deleted' });
      await expect(row(store, id)).resolves.toBeUndefined();
      await expect(machine.remove(id, T0)).resolves.toEqual({ found: false });
      await expect(machine.hold(id, T0)).resolves.toEqual({ found: false });
      await expect(machine.release(id, T0)).resolves.toEqual({ found: false });
    });
  });

  test.skipIf(!engine.available)('the owner’s mark is kept once in the reasons, after the filter’s own, however often the message is held', async () => {
    const { store, machine } = await open();
    const { id } = await machine.receive({ ...input, held: ['too-fast', 'proof-missing'] });
    await expect(machine.hold(id, T0)).resolves.toEqual({ found: true, from: 'spam', changed: false });
    await machine.release(id, T0);
    await expect(machine.hold(id, T0)).resolves.toEqual({ found: true, from: 'pending', changed: true, to: 'spam' });
    await machine.release(id, T0);
    await machine.hold(id, T0);
    await expect(row(store, id)).resolves.toMatchObject({ status: 'spam', spam_reasons: '["too-fast","proof-missing","marked-by-owner"]' });
    // Marked by the owner, the sender's confirmation no longer queues it.
    await expect(machine.confirmBySender(id, T0)).resolves.toEqual({ found: true, from: 'spam', changed: false });
  });

  test.skipIf(!engine.available)('a received message is stored due at once, or held with its reasons, address and browser', async () => {
    const { store, machine } = await open();
    const who = { ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (test)' };
    const kept = await machine.receive({ ...input, ...who });
    const held = await machine.receive({ ...input, ...who, held: ['too-fast'] });
    const columns = 'SELECT created_at, next_attempt_at, spam_reasons, client_ip, user_agent, status FROM submissions WHERE id = ?';
    const keptRow = await store.sql.get<Record<string, string | null>>(columns, [kept.id]);
    expect(keptRow).toEqual({
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      // Due at once by the database's clock (decision 0270): the same instant on one machine, to the clocks' step.
      next_attempt_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      spam_reasons: null,
      client_ip: null,
      user_agent: null,
      status: 'pending',
    });
    expect(Math.abs(Date.parse(keptRow!.next_attempt_at!) - Date.parse(keptRow!.created_at!))).toBeLessThan(5_000);
    await expect(store.sql.get(columns, [held.id])).resolves.toEqual({
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      next_attempt_at: null,
      spam_reasons: '["too-fast"]',
      client_ip: '203.0.113.7',
      user_agent: 'Mozilla/5.0 (test)',
      status: 'spam',
    });
  });

  test.skipIf(!engine.available)(
    'the contact form named outright, or a form with no extra fields, adds neither form nor fields to the row or the news',
    async () => {
      const { store, machine } = await open();
      const named = await machine.receive({ ...input, form: 'contact', fields: {} });
      const bare = await machine.receive({ ...input, form: 'quote', fields: {} });
      const held = await machine.receive({ ...input, form: 'contact', fields: {}, held: ['too-fast'] });
      await expect(store.sql.all('SELECT form, fields FROM submissions ORDER BY id')).resolves.toEqual([
        { form: 'contact', fields: null },
        { form: 'quote', fields: null },
        { form: 'contact', fields: null },
      ]);
      await machine.release(held.id, T0);
      const base = { createdAt: expect.any(String), name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more.' };
      expect(await events(store)).toStrictEqual([
        { type: 'contact.received', data: { id: named.id, ...base } },
        { type: 'contact.received', data: { id: bare.id, ...base, form: 'quote' } },
        { type: 'contact.held', data: { id: held.id, ...base, reasons: ['too-fast'] } },
        { type: 'contact.received', data: { id: held.id, ...base } },
      ]);
    },
  );

  test.skipIf(!engine.available)('a held message whose stored fields are unreadable is released with its news told without them', async () => {
    const { store, machine } = await open();
    const { id } = await machine.receive({ ...input, form: 'quote', fields: { topic: 'table' }, held: ['too-fast'] });
    await store.sql.run('UPDATE submissions SET fields = ? WHERE id = ?', ['{"topic": "tab', id]);
    await expect(machine.release(id, T0)).resolves.toEqual({ found: true, from: 'spam', changed: true, to: 'pending' });
    const told = (await events(store)).find((event) => event.type === 'contact.received');
    expect(told).toStrictEqual({
      type: 'contact.received',
      data: { id, createdAt: expect.any(String), name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more.', form: 'quote' },
    });
    await expect(history(store, id)).resolves.toEqual([{ attempted_at: T0.toISOString(), outcome: 'requeued', error: 'released from spam by the owner' }]);
  });
});

describe('reading what is stored', () => {
  test('the extra fields: a JSON object, or none when absent, malformed or not an object', () => {
    expect(parseFields('{"topic":"table","budget":1200,"consent":true}')).toEqual({ topic: 'table', budget: 1200, consent: true });
    expect(parseFields('{"topic": "tab')).toEqual({});
    expect(parseFields('["topic"]')).toEqual({});
    expect(parseFields('"topic"')).toEqual({});
    expect(parseFields('12')).toEqual({});
    expect(parseFields('null')).toEqual({});
    expect(parseFields('')).toEqual({});
    expect(parseFields(null)).toEqual({});
    expect(parseFields(undefined)).toEqual({});
  });

  test('the reasons: the strings of a JSON array, or none when absent, malformed or not an array', () => {
    expect(parseReasons('["too-fast",3,null,"marked-by-owner",{"a":1}]')).toEqual(['too-fast', 'marked-by-owner']);
    expect(parseReasons('["too-fast"')).toEqual([]);
    expect(parseReasons('{"reason":"too-fast"}')).toEqual([]);
    expect(parseReasons('"too-fast"')).toEqual([]);
    expect(parseReasons('')).toEqual([]);
    expect(parseReasons(null)).toEqual([]);
  });
});

describe('on PostgreSQL, a command reads the row under its lock', () => {
  const postgres = testEngines().find((engine) => engine.name === 'PostgreSQL')!;

  test.skipIf(!postgres.available)('“Spam” arriving while another transaction sends the message waits for it, then holds the message as sent', async () => {
    const { store } = await postgres.open();
    const machine = createSubmissionMachine(store.sql);
    const { id } = await machine.receive(input);
    let holding: ReturnType<typeof machine.hold> | undefined;
    await store.sql.transaction(async (tx) => {
      await tx.run("UPDATE submissions SET status = 'sent', sent_at = ?, next_attempt_at = NULL WHERE id = ?", [T0.toISOString(), id]);
      holding = machine.hold(id, T0);
      // Committed only once the owner's command waits on this row.
      for (let waited = 0; ; waited += 10) {
        const waiting = await store.sql.get<{ n: string | number }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
        );
        if (Number(waiting!.n) > 0) break;
        if (waited > 5_000) throw new Error('the owner’s command never waited for the row');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    await expect(holding).resolves.toEqual({ found: true, from: 'sent', changed: true, to: 'spam' });
    await expect(row(store, id)).resolves.toMatchObject({ status: 'spam', sent_at: T0.toISOString(), spam_reasons: '["marked-by-owner"]' });
  });
});
