import { describe, expect, test } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { openStore } from '../../../packages/site-forms/src/lib/database/database.ts';
import { TEST_DATABASE, testEngines } from '../../support/stores.ts';

const input = (name: string) => ({ name, email: `${name.toLowerCase()}@example.org`, message: `Hello from ${name}.`, honeypot: '' });
const SECOND = 1_000;

describe.each(testEngines())('the store on $name', ({ name, available, open }) => {
  describe.skipIf(!available)(name, () => {
    test('a saved message is pending and due at once, and the list shows the newest first', async () => {
      const { store } = await open();
      const first = await store.submissions.save(input('Ada'));
      const second = await store.submissions.save(input('Grace'));
      expect(second).toBeGreaterThan(first);
      await expect(store.outbox.find(first)).resolves.toMatchObject({
        id: first,
        name: 'Ada',
        email: 'ada@example.org',
        message: 'Hello from Ada.',
        status: 'pending',
        attempts: 0,
        lastError: null,
        sentAt: null,
      });
      expect((await store.outbox.list()).map((s) => s.name)).toEqual(['Grace', 'Ada']);
      await expect(store.outbox.pendingCount()).resolves.toBe(2);
      await expect(store.outbox.find(first + 100)).resolves.toBeUndefined();
    });

    test('a claimed message is kept from every other claim until its lease ends, then taken again', async () => {
      const { store } = await open();
      const a = await store.submissions.save(input('Ada'));
      const b = await store.submissions.save(input('Grace'));
      const now = Date.now() + SECOND;
      const lease = new Date(now + 60 * SECOND);
      expect((await store.outbox.claim(new Date(now), lease))?.id).toBe(a);
      expect((await store.outbox.claim(new Date(now), lease))?.id).toBe(b);
      await expect(store.outbox.claim(new Date(now), lease)).resolves.toBeUndefined();
      // Both leases ran out (their instance died): the oldest goes again first.
      expect((await store.outbox.claim(new Date(now + 60 * SECOND), new Date(now + 120 * SECOND)))?.id).toBe(a);
      await expect(store.outbox.nextDueAt()).resolves.toEqual(new Date(now + 60 * SECOND));
    });

    test('claims made at the same moment never take the same message', async () => {
      const { store } = await open();
      const ids = [];
      for (const who of ['A', 'B', 'C', 'D', 'E']) ids.push(await store.submissions.save(input(who)));
      const now = new Date(Date.now() + SECOND);
      const claimed = await Promise.all(Array.from({ length: 10 }, () => store.outbox.claim(now, new Date(now.getTime() + 60 * SECOND))));
      const taken = claimed.filter((s) => s !== undefined).map((s) => s.id);
      expect(taken.sort((x, y) => x - y)).toEqual(ids);
    });

    test('a retry waits for its time, and marking it sent records the history once', async () => {
      const { store } = await open();
      const id = await store.submissions.save(input('Ada'));
      const now = Date.now() + SECOND;
      const first = await store.outbox.claim(new Date(now), new Date(now + 60 * SECOND));
      await expect(store.outbox.markRetry(id, new Date(now), new Date(now + 30 * SECOND), 'ECONNREFUSED', first!.lease)).resolves.toBe('pending');
      await expect(store.outbox.claim(new Date(now + 29 * SECOND), new Date(now + 90 * SECOND))).resolves.toBeUndefined();
      await expect(store.outbox.find(id)).resolves.toMatchObject({
        status: 'pending',
        attempts: 1,
        lastError: 'ECONNREFUSED',
        nextAttemptAt: new Date(now + 30 * SECOND).toISOString(),
      });
      const second = await store.outbox.claim(new Date(now + 30 * SECOND), new Date(now + 90 * SECOND));
      expect(second?.id).toBe(id);
      await expect(store.outbox.markSent(id, new Date(now + 31 * SECOND), second!.lease)).resolves.toBe('sent');
      // A sender whose lease ran out finishes too: its mail went out, so the history says so,
      // and the status and the time of the first send stand.
      await expect(store.outbox.markSent(id, new Date(now + 32 * SECOND), first!.lease)).resolves.toBe('sent');
      await expect(store.outbox.find(id)).resolves.toMatchObject({
        status: 'sent',
        attempts: 2,
        sentAt: new Date(now + 31 * SECOND).toISOString(),
        nextAttemptAt: null,
        lastError: null,
      });
      await expect(store.outbox.history(id)).resolves.toEqual([
        { at: new Date(now).toISOString(), outcome: 'retrying', error: 'ECONNREFUSED' },
        { at: new Date(now + 31 * SECOND).toISOString(), outcome: 'sent', error: null },
        { at: new Date(now + 32 * SECOND).toISOString(), outcome: 'sent', error: null },
      ]);
      await expect(store.outbox.roundStartedAt(id)).resolves.toEqual(new Date(now));
      await expect(store.outbox.pendingCount()).resolves.toBe(0);
    });

    test('a failed message is counted, and requeued with a fresh round of retries', async () => {
      const { store } = await open();
      const id = await store.submissions.save(input('Ada'));
      const now = Date.now();
      await store.outbox.markFailed(id, new Date(now), '550 no such user');
      await expect(store.outbox.failedCount()).resolves.toBe(1);
      await expect(store.outbox.requeue(id, new Date(now + SECOND))).resolves.toMatchObject({
        found: true,
        from: 'failed',
        submission: { status: 'pending', attempts: 0, nextAttemptAt: new Date(now + SECOND).toISOString() },
      });
      await expect(store.outbox.roundStartedAt(id)).resolves.toBeUndefined();
      await expect(store.outbox.requeue(id, new Date(now + 2 * SECOND))).resolves.toMatchObject({ found: true, from: 'pending' });
      await expect(store.outbox.requeue(id + 100, new Date(now))).resolves.toEqual({ found: false });
      expect((await store.outbox.history(id)).map((e) => e.outcome)).toEqual(['failed', 'requeued']);
      await expect(store.outbox.failedCount()).resolves.toBe(0);
    });

    test('a subscriber is kept once whatever the case of the address, oldest first', async () => {
      const { store } = await open();
      await store.subscribers.add('Ada@Example.org', new Date('2026-01-02T00:00:00.000Z'));
      await store.subscribers.add('grace@example.org', new Date('2026-01-03T00:00:00.000Z'));
      await store.subscribers.add('ADA@example.org', new Date('2026-01-04T00:00:00.000Z'));
      await expect(store.subscribers.list()).resolves.toEqual([
        { email: 'ada@example.org', created: '2026-01-02T00:00:00.000Z' },
        { email: 'grace@example.org', created: '2026-01-03T00:00:00.000Z' },
      ]);
    });

    test('a transaction that fails stores nothing and rejects with its own error', async () => {
      const { store } = await open();
      const failing = store.sql.transaction(async (tx) => {
        await tx.run("INSERT INTO subscribers (email, created_at) VALUES ('a@example.org', 't')");
        throw new Error('the real cause');
      });
      await expect(failing).rejects.toThrow('the real cause');
      await expect(store.subscribers.list()).resolves.toEqual([]);
    });

    test('health: a committed write, the counts, and the database named', async () => {
      const { store } = await open();
      const id = await store.submissions.save(input('Ada'));
      await store.submissions.save(input('Grace'));
      await store.outbox.markFailed(id, new Date(), '550');
      await expect(store.health()).resolves.toEqual({
        database: name,
        writable: true,
        integrity: name === 'SQLite' ? 'ok' : 'not checked',
        pendingMessages: 1,
        failedMessages: 1,
      });
    });

    test('a new database logs each migration step it applies, by number and name', async () => {
      const { logs } = await open();
      expect(logs.filter((l) => l.event === 'database.migrated').map((l) => [l.database, l.step, l.name])).toEqual([
        [name, 1, 'submissions and subscribers'],
        [name, 2, 'delivery history'],
        [name, 3, 'delivery leases, statuses checked in code, health probe'],
        [name, 4, 'admin sessions and audit log'],
        [name, 5, 'spam: reasons, used challenges, settings'],
        [name, 6, "the owner's request on a message being sent"],
        [name, 7, 'audit: repeats, no subscriber addresses'],
        [name, 8, 'webhook events and deliveries'],
        [name, 9, 'automatic replies: whom, when'],
        [name, 10, 'newsletter signups waiting for the provider'],
        [name, 11, 'newsletter consent records'],
        [name, 12, 'submissions: their form and extra fields'],
        [name, 13, 'drafts of refused form posts'],
        [name, 14, 'automatic replies: only to a person, so many an hour'],
        [name, 15, 'newsletter consents: the links of a mail sent again'],
        [name, 16, 'the client of each draft'],
        [name, 17, 'leases that name their worker'],
        [name, 18, 'files with a message'],
        [name, 19, 'queue times as timestamptz on PostgreSQL'],
        [name, 20, 'people, passkeys, sign-in links and API keys'],
      ]);
    });

    test('opening again applies no migration twice, logs none, and every step is recorded', async () => {
      const { store, url, dataDir } = await open();
      await store.submissions.save(input('Ada'));
      const lines: string[] = [];
      const logger = createLogger({ level: 'info', write: (line) => lines.push(line) });
      // Two instances starting together on one database.
      const again = [openStore({ ...TEST_DATABASE, url, dataDir }, logger), openStore({ ...TEST_DATABASE, url, dataDir }, logger)];
      await Promise.all(again.map((s) => s.ready));
      const applied =
        name === 'SQLite'
          ? (await again[0]!.sql.get<{ user_version: number }>('PRAGMA user_version'))?.user_version
          : Number((await again[0]!.sql.get<{ n: string }>('SELECT count(*) AS n FROM schema_migrations'))?.n);
      expect(applied).toBe(20);
      expect(lines.filter((line) => line.includes('database.migrated'))).toEqual([]);
      await expect(again[1]!.outbox.list()).resolves.toHaveLength(1);
      await Promise.all(again.map((s) => s.close()));
    });
  });
});
