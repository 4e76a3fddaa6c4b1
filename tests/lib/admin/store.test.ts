import { describe, expect, test } from 'vitest';
import { createAdmin, createAdminStores } from '../../../packages/site-forms/src/lib/admin/owner-inbox.ts';
import { applyRetention } from '../../../packages/site-forms/src/lib/admin/retention.ts';
import { parsePasswordHash } from '../../../packages/site-forms/src/lib/admin/password.ts';
import { createSessions } from '../../../packages/site-forms/src/lib/admin/session.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import type { Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createConsents } from '../../../packages/site-forms/src/lib/newsletter/consents.ts';
import { createSignups } from '../../../packages/site-forms/src/lib/newsletter/signups.ts';
import { createDeliveries } from '../../../packages/site-forms/src/lib/webhooks/deliveries.ts';
import { createSubmissionMachine } from '../../../packages/site-forms/src/lib/submissions/machine.ts';
import { testEngines } from '../../support/stores.ts';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** Stores a message as a visitor would, then dates it and sets its status as the test needs. */
async function message(store: Store, name: string, fields: { email?: string; message?: string; createdAt?: string; status?: string } = {}): Promise<number> {
  const id = await store.submissions.save({
    name,
    email: fields.email ?? `${name.split(' ')[0]!.toLowerCase()}@example.org`,
    message: fields.message ?? `Hello from ${name}.`,
    honeypot: '',
  });
  if (fields.createdAt) await store.sql.run('UPDATE submissions SET created_at = ? WHERE id = ?', [fields.createdAt, id]);
  if (fields.status) await store.sql.run('UPDATE submissions SET status = ? WHERE id = ?', [fields.status, id]);
  return id;
}

describe.each(testEngines())('the admin on $name', ({ name, available, open }) => {
  describe.skipIf(!available)(name, () => {
    test('sessions: stored by hash, touched, ended, and swept when idle or too old', async () => {
      const { store } = await open();
      const { sessionStore } = createAdminStores(store);
      let now = new Date('2026-11-22T08:00:00.000Z');
      const sessions = createSessions(sessionStore, () => now);
      const owner = { userId: 1, stage: 'full', method: 'password' } as const;
      await store.sql.run(
        "INSERT INTO admin_users (id, email, name, role, origin, user_handle, created_at, updated_at) VALUES (1, 'owner@example.org', 'Owner', 'owner', 'cli', 'handle', ?, ?)",
        [now.toISOString(), now.toISOString()],
      );
      const a = await sessions.start(owner);
      const b = await sessions.start(owner);
      const rows = await store.sql.all<{ token_hash: string }>('SELECT token_hash FROM admin_person_sessions ORDER BY token_hash');
      expect(rows.map((r) => r.token_hash)).toEqual([a.tokenHash, b.tokenHash].sort());
      now = new Date(now.getTime() + 29 * MINUTE);
      await expect(sessions.resume(a.token)).resolves.toMatchObject({ ok: true });
      now = new Date(now.getTime() + 2 * MINUTE);
      // b: 31 minutes idle; a: used 2 minutes ago.
      await expect(sessions.sweep()).resolves.toBe(1);
      await expect(sessions.resume(b.token)).resolves.toEqual({ ok: false, reason: 'unknown' });
      await sessions.end(a.token);
      await expect(sessions.resume(a.token)).resolves.toEqual({ ok: false, reason: 'unknown' });
    });

    test('the audit log: newest first, paged, counted', async () => {
      const { store } = await open();
      const { audit } = createAdminStores(store);
      for (const [i, action] of (['sign-in', 'export-messages', 'delete-message'] as const).entries()) {
        await audit.record({ at: `2026-11-22T08:0${i}:00.000Z`, action, detail: `#${i}`, client: 'abc' });
      }
      await expect(audit.list(2, 0)).resolves.toEqual({
        entries: [
          { at: '2026-11-22T08:02:00.000Z', action: 'delete-message', detail: '#2', client: 'abc', repeats: 1 },
          { at: '2026-11-22T08:01:00.000Z', action: 'export-messages', detail: '#1', client: 'abc', repeats: 1 },
        ],
        total: 3,
      });
      expect((await audit.list(2, 2)).entries.map((e) => e.action)).toEqual(['sign-in']);
    });

    test('the audit log: a refusal repeated within a quarter-hour is one row with a count, and old entries are pruned', async () => {
      const { store } = await open();
      const { audit } = createAdminStores(store);
      const refused = (at: string, client = 'c0ffee') => audit.recordRepeated({ at, action: 'sign-in-failed', detail: 'refused: too many attempts', client });
      for (let i = 0; i < 50; i++) await refused(`2026-11-22T10:${String(i % 14).padStart(2, '0')}:00.000Z`);
      await refused('2026-11-22T10:05:00.000Z', 'other');
      // The quarter-hour runs from the row's first refusal: 10:15:00 is within it, a millisecond later is not.
      await refused('2026-11-22T10:15:00.000Z');
      await refused('2026-11-22T10:15:00.001Z');
      await audit.record({ at: '2025-01-01T00:00:00.000Z', action: 'sign-in', detail: '', client: 'c0ffee' });
      const { entries, total } = await audit.list(50, 0);
      expect(total).toBe(4);
      expect(entries.map((e) => [e.at, e.client, e.repeats])).toEqual([
        ['2025-01-01T00:00:00.000Z', 'c0ffee', 1],
        ['2026-11-22T10:15:00.001Z', 'c0ffee', 1],
        ['2026-11-22T10:05:00.000Z', 'other', 1],
        ['2026-11-22T10:00:00.000Z', 'c0ffee', 51],
      ]);
      await expect(audit.deleteBefore(new Date('2026-01-01T00:00:00.000Z'))).resolves.toBe(1);
      await expect(audit.list(50, 0)).resolves.toMatchObject({ total: 3 });
    });

    test('search folds case beyond ASCII, and a search with NUL or another control finds nothing and is no outage', async () => {
      const { store } = await open();
      const { queries } = createAdminStores(store);
      await message(store, 'Émile Zola', { message: 'J’ACCUSE… une lettre ouverte.' });
      await message(store, 'Ada Lovelace');
      const names = async (search: string) => (await queries.messages({ page: 1, search })).rows.map((r) => r.name);
      await expect(names('émile')).resolves.toEqual(['Émile Zola']);
      await expect(names('ÉMILE')).resolves.toEqual(['Émile Zola']);
      await expect(names('j’accuse')).resolves.toEqual(['Émile Zola']);
      for (const search of ['\u0000', 'Ada\u0000', '%\u0000%', '\u0007']) {
        await expect(queries.messages({ page: 1, search })).resolves.toEqual({ rows: [], total: 0 });
        await expect(queries.subscribers(search, 1)).resolves.toEqual({ rows: [], total: 0 });
      }
      // The database was never told anything was wrong: health stays writable.
      await expect(store.health()).resolves.toMatchObject({ writable: true });
    });

    test('messages: newest first, 50 a page, filtered by status, searched in name, email and text', async () => {
      const { store } = await open();
      const { queries } = createAdminStores(store);
      for (let i = 0; i < 53; i++)
        await message(store, `Person ${String(i).padStart(2, '0')}`, { createdAt: new Date(Date.UTC(2026, 10, 1) + i * MINUTE).toISOString() });
      await message(store, 'Ada Lovelace', { email: 'ada@engine.example', message: 'About 100% of the ENGINE_ROOM.', status: 'failed' });
      await message(store, 'Grace Hopper', { message: 'Compilers, please.', status: 'spam' });

      const first = await queries.messages({ page: 1 });
      expect(first.total).toBe(55);
      expect(first.rows).toHaveLength(50);
      expect(first.rows.slice(0, 3).map((r) => r.name)).toEqual(['Grace Hopper', 'Ada Lovelace', 'Person 52']);
      expect((await queries.messages({ page: 2 })).rows.map((r) => r.name)).toEqual(['Person 04', 'Person 03', 'Person 02', 'Person 01', 'Person 00']);
      expect((await queries.messages({ page: 3 })).rows).toEqual([]);

      const names = async (query: Parameters<typeof queries.messages>[0]) => (await queries.messages(query)).rows.map((r) => r.name);
      await expect(names({ page: 1, status: 'failed' })).resolves.toEqual(['Ada Lovelace']);
      await expect(names({ page: 1, status: 'spam' })).resolves.toEqual(['Grace Hopper']);
      await expect(names({ page: 1, search: 'LOVELACE' })).resolves.toEqual(['Ada Lovelace']);
      await expect(names({ page: 1, search: 'engine.example' })).resolves.toEqual(['Ada Lovelace']);
      await expect(names({ page: 1, search: 'compilers' })).resolves.toEqual(['Grace Hopper']);
      // LIKE's wildcards are searched for as themselves.
      await expect(names({ page: 1, search: '100%' })).resolves.toEqual(['Ada Lovelace']);
      await expect(names({ page: 1, search: 'engine_room' })).resolves.toEqual(['Ada Lovelace']);
      await expect(names({ page: 1, search: '%' })).resolves.toEqual(['Ada Lovelace']);
      await expect(names({ page: 1, search: 'Person 5', status: 'pending' })).resolves.toEqual(['Person 52', 'Person 51', 'Person 50']);
      await expect(queries.messages({ page: 1, search: 'nobody' })).resolves.toEqual({ rows: [], total: 0 });
      expect(first.rows[1]).toEqual({
        id: expect.any(Number),
        createdAt: expect.any(String),
        name: 'Ada Lovelace',
        email: 'ada@engine.example',
        status: 'failed',
        excerpt: 'About 100% of the ENGINE_ROOM.',
        form: 'contact',
        fields: {},
      });
    });

    test('messages: filtered by the form they came from', async () => {
      const { store } = await open();
      const { queries } = createAdminStores(store);
      await message(store, 'Contact Person');
      const machine = createSubmissionMachine(store.sql);
      await machine.receive({ name: 'Quote Person', email: 'q@example.org', message: '', form: 'quote', fields: { topic: 'table' }, held: undefined });
      const names = async (form?: string) => (await queries.messages({ page: 1, form })).rows.map((r) => [r.name, r.form]);
      await expect(names('quote')).resolves.toEqual([['Quote Person', 'quote']]);
      await expect(names('contact')).resolves.toEqual([['Contact Person', 'contact']]);
      await expect(names()).resolves.toHaveLength(2);
      // Its fields are searched too, and are the row's own.
      expect((await queries.messages({ page: 1, search: 'TABLE' })).rows.map((r) => [r.name, r.fields])).toEqual([['Quote Person', { topic: 'table' }]]);
      await expect(store.outbox.list()).resolves.toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'Quote Person', form: 'quote', fields: { topic: 'table' } })]),
      );
    });

    test('counts per status and per day, and delivery health', async () => {
      const { store } = await open();
      const { queries } = createAdminStores(store);
      await message(store, 'A', { createdAt: '2026-11-20T23:59:59.999Z', status: 'sent' });
      await message(store, 'B', { createdAt: '2026-11-21T00:00:00.000Z', status: 'failed' });
      await message(store, 'C', { createdAt: '2026-11-21T12:00:00.000Z' });
      await message(store, 'D', { createdAt: '2026-10-01T12:00:00.000Z' });
      await expect(queries.countByStatus()).resolves.toEqual({ sent: 1, failed: 1, pending: 2 });
      const days = await queries.perDay(new Date('2026-11-01T00:00:00.000Z'));
      expect(days.sort((x, y) => x.day.localeCompare(y.day))).toEqual([
        { day: '2026-11-20', count: 1 },
        { day: '2026-11-21', count: 2 },
      ]);
      await expect(queries.deliveryHealth()).resolves.toEqual({ lastSentAt: null, lastFailureAt: null, failed: 1, pending: 2 });
      const id = await message(store, 'E');
      await store.outbox.markRetry(id, new Date('2026-11-22T09:00:00.000Z'), new Date('2026-11-22T09:01:00.000Z'), 'timeout');
      await store.outbox.markSent(id, new Date('2026-11-22T09:01:00.000Z'));
      await expect(queries.deliveryHealth()).resolves.toEqual({
        lastSentAt: '2026-11-22T09:01:00.000Z',
        lastFailureAt: '2026-11-22T09:00:00.000Z',
        failed: 1,
        pending: 2,
      });
    });

    test('deleting a message erases it and its delivery history, and nothing else', async () => {
      const { store } = await open();
      const { queries } = createAdminStores(store);
      const gone = await message(store, 'Gone');
      const kept = await message(store, 'Kept');
      for (const id of [gone, kept]) await store.outbox.markRetry(id, new Date(), new Date(), 'timeout');
      await expect(queries.deleteMessage(gone)).resolves.toBe(true);
      await expect(queries.deleteMessage(gone)).resolves.toBe(false);
      await expect(store.outbox.find(gone)).resolves.toBeUndefined();
      expect(Number((await store.sql.get<{ n: number | string }>('SELECT count(*) AS n FROM delivery_attempts WHERE submission_id = ?', [gone]))!.n)).toBe(0);
      expect(Number((await store.sql.get<{ n: number | string }>('SELECT count(*) AS n FROM delivery_attempts WHERE submission_id = ?', [kept]))!.n)).toBe(1);
      await expect(store.outbox.find(kept)).resolves.toMatchObject({ name: 'Kept' });
    });

    test('retention deletes what is older than RETENTION_DAYS, with its history, and audits it', async () => {
      const { store } = await open();
      const { queries, audit } = createAdminStores(store);
      const now = new Date('2026-11-22T12:00:00.000Z');
      const old = await message(store, 'Old', { createdAt: new Date(now.getTime() - 30 * DAY - 1).toISOString() });
      await message(store, 'Young', { createdAt: new Date(now.getTime() - 30 * DAY + 1000).toISOString() });
      await store.outbox.markRetry(old, now, now, 'timeout');
      const parts = { sessions: undefined, queries, audit, retentionDays: 30, logger: silentLogger };
      // An audit entry older than the 30 days goes with the messages.
      await audit.record({ at: new Date(now.getTime() - 31 * DAY).toISOString(), action: 'sign-in', detail: '', client: 'abc' });
      await expect(applyRetention(parts, now)).resolves.toEqual({ sessions: 0, messages: 1, auditEntries: 1, events: 0 });
      expect((await store.outbox.list()).map((s) => s.name)).toEqual(['Young']);
      expect(Number((await store.sql.get<{ n: number | string }>('SELECT count(*) AS n FROM delivery_attempts'))!.n)).toBe(0);
      await expect(audit.list(10, 0)).resolves.toEqual({
        entries: [{ at: now.toISOString(), action: 'retention', detail: '1 older than 30 days', client: 'server', repeats: 1 }],
        total: 1,
      });
      // Without RETENTION_DAYS the audit log is still pruned, after a year: 366 days go, 364 stay.
      await audit.record({ at: new Date(now.getTime() - 366 * DAY).toISOString(), action: 'sign-in', detail: '', client: 'abc' });
      await audit.record({ at: new Date(now.getTime() - 364 * DAY).toISOString(), action: 'sign-in', detail: 'kept', client: 'abc' });
      await expect(applyRetention({ ...parts, retentionDays: undefined }, now)).resolves.toEqual({ sessions: 0, messages: 0, auditEntries: 1, events: 0 });
      expect((await store.outbox.list()).map((s) => s.name)).toEqual(['Young']);
      expect((await audit.list(10, 0)).entries.map((e) => e.detail)).toContain('kept');
    });

    test('the admin over the store: the overview, one message with its history and reasons, retry only of a failed one', async () => {
      const { store } = await open();
      const parsed = parsePasswordHash('$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4', true);
      if (!parsed.ok) throw new Error(parsed.problem);
      const now = new Date('2026-11-22T12:00:00.000Z');
      const failed = await message(store, 'Failed One', { createdAt: '2026-11-22T08:00:00.000Z' });
      const held = await message(store, 'Held One', { createdAt: '2026-11-21T08:00:00.000Z', status: 'spam' });
      await message(store, 'Too Old', { createdAt: '2026-10-23T23:59:59.999Z' });
      await store.outbox.markFailed(failed, new Date('2026-11-22T08:00:01.000Z'), '550 mailbox unavailable');
      const admin = createAdmin(
        { passwordHash: parsed.hash, passwordHashText: undefined, retentionDays: 90 },
        {
          store,
          logger: silentLogger,
          providerName: 'local',
          spam: {
            markSpam: async () => ({ found: false }),
            release: async () => ({ found: false }),
            reasons: async (id) => (id === held ? ['too-many-links'] : []),
          },
          exportMessages: async function* () {},
          webhooks: createDeliveries(store.sql),
          signups: createSignups(store.sql),
        },
      );
      const overview = await admin.overview(now);
      expect(overview).toMatchObject({
        counts: { failed: 1, spam: 1, pending: 1 },
        delivery: { lastSentAt: null, lastFailureAt: '2026-11-22T08:00:01.000Z', failed: 1, pending: 1 },
        provider: 'local',
        database: name,
        retentionDays: 90,
        // The first visit: everything held so far.
        held: { since: undefined, count: 1 },
      });
      // The next visit counts only what was held since this one.
      await message(store, 'Held Two', { createdAt: '2026-11-22T12:30:00.000Z', status: 'spam' });
      const later = new Date('2026-11-22T13:00:00.000Z');
      await expect(admin.overview(later)).resolves.toMatchObject({ held: { since: '2026-11-22T12:00:00.000Z', count: 1 } });
      await expect(admin.overview(new Date('2026-11-22T14:00:00.000Z'))).resolves.toMatchObject({ held: { since: '2026-11-22T13:00:00.000Z', count: 0 } });
      expect(overview.days).toHaveLength(30);
      expect(overview.days[0]).toEqual({ day: '2026-10-24', count: 0 });
      expect(overview.days.slice(-2)).toEqual([
        { day: '2026-11-21', count: 1 },
        { day: '2026-11-22', count: 1 },
      ]);

      await expect(admin.message(held)).resolves.toMatchObject({ submission: { name: 'Held One' }, history: [], spamReasons: ['too-many-links'] });
      await expect(admin.message(failed)).resolves.toMatchObject({
        history: [{ at: '2026-11-22T08:00:01.000Z', outcome: 'failed', error: '550 mailbox unavailable' }],
        spamReasons: [],
      });
      await expect(admin.message(failed + 1000)).resolves.toBeUndefined();

      await expect(admin.deps.commands.retry(held, now)).resolves.toEqual({ found: true, from: 'spam', changed: false });
      await expect(admin.deps.commands.retry(failed, now)).resolves.toEqual({ found: true, from: 'failed', changed: true, to: 'pending' });
      await expect(admin.deps.commands.retry(failed, now)).resolves.toEqual({ found: true, from: 'pending', changed: false });
      await expect(admin.deps.commands.retry(failed + 1000, now)).resolves.toEqual({ found: false });
      await expect(store.outbox.find(failed)).resolves.toMatchObject({ status: 'pending' });
    });

    test('subscribers: counted, searched, paged, deleted', async () => {
      const { store } = await open();
      const { queries } = createAdminStores(store);
      await store.subscribers.add('ada@example.org', new Date('2026-11-01T00:00:00.000Z'));
      await store.subscribers.add('grace@example.net', new Date('2026-11-02T00:00:00.000Z'));
      await store.subscribers.add('a_b@example.org', new Date('2026-11-03T00:00:00.000Z'));
      await expect(queries.subscribers(undefined, 1)).resolves.toEqual({
        rows: [
          { email: 'a_b@example.org', createdAt: '2026-11-03T00:00:00.000Z' },
          { email: 'grace@example.net', createdAt: '2026-11-02T00:00:00.000Z' },
          { email: 'ada@example.org', createdAt: '2026-11-01T00:00:00.000Z' },
        ],
        total: 3,
      });
      expect((await queries.subscribers('EXAMPLE.ORG', 1)).total).toBe(2);
      expect((await queries.subscribers('a_b', 1)).rows.map((r) => r.email)).toEqual(['a_b@example.org']);
      await expect(queries.deleteSubscriber('grace@example.net')).resolves.toEqual({ found: true });
      await expect(queries.deleteSubscriber('grace@example.net')).resolves.toEqual({ found: false });
      expect((await queries.subscribers(undefined, 1)).total).toBe(2);
    });

    test('deleting an address that holds a NUL deletes nothing, answers so, and is no outage of the database', async () => {
      const { store, logs } = await open();
      const { queries } = createAdminStores(store);
      await store.subscribers.add('ada@example.org', new Date('2026-11-01T00:00:00.000Z'));
      await expect(queries.deleteSubscriber('ada\u0000@example.org')).resolves.toEqual({ found: false });
      await expect(queries.deleteSubscriber('ada@example.org\u0000')).resolves.toEqual({ found: false });
      expect(logs.filter((line) => line.event === 'database.unavailable')).toEqual([]);
      expect((await queries.subscribers(undefined, 1)).total).toBe(1);
    });

    test('a statement refused for its own data (a NUL PostgreSQL cannot store) fails alone: no outage is logged', async () => {
      const { store, logs } = await open();
      const asked = store.sql.get('SELECT email FROM subscribers WHERE email = ?', ['a\u0000b@example.org']);
      if (name === 'PostgreSQL') await expect(asked).rejects.toThrow('invalid byte sequence');
      else await expect(asked).resolves.toBeUndefined();
      expect(logs.filter((line) => line.event === 'database.unavailable')).toEqual([]);
      await expect(store.sql.get('SELECT count(*) AS n FROM subscribers')).resolves.toMatchObject({ n: expect.anything() });
    });

    test('erasing a subscriber erases the consent record and a signup waiting for the provider too', async () => {
      const { store } = await open();
      const { queries } = createAdminStores(store);
      const consents = createConsents(store.sql);
      const evidence = { page: '/', text: 'Yes please.', version: 'abc123abc123', client: '203.0.113.0/24' };
      const tokens = await consents.request('erase.me@example.org', evidence, new Date('2026-11-01T00:00:00.000Z'));
      await consents.confirm(tokens!.confirm, new Date('2026-11-01T00:01:00.000Z'));
      await store.subscribers.add('erase.me@example.org', new Date('2026-11-01T00:01:00.000Z'));
      await createSignups(store.sql).enqueue('Erase.Me@example.org', 'mailchimp', new Date('2026-11-01T00:02:00.000Z'));
      await expect(queries.subscribers(undefined, 1)).resolves.toMatchObject({
        rows: [{ email: 'erase.me@example.org', consent: { confirmedAt: '2026-11-01T00:01:00.000Z', version: 'abc123abc123', page: '/' } }],
      });
      await expect(queries.deleteSubscriber('erase.me@example.org')).resolves.toEqual({ found: true });
      await expect(consents.find('erase.me@example.org')).resolves.toBeUndefined();
      await expect(createSignups(store.sql).pending(10)).resolves.toEqual([]);
      await expect(queries.subscribers(undefined, 1)).resolves.toEqual({ rows: [], total: 0 });
    });

    test('page 0 or below reads as the first page, of messages and of subscribers; subscribers are paged 50 at a time', async () => {
      const { store } = await open();
      const { queries } = createAdminStores(store);
      await message(store, 'Older', { createdAt: '2026-11-01T00:00:00.000Z' });
      await message(store, 'Newer', { createdAt: '2026-11-02T00:00:00.000Z' });
      for (const page of [0, -3]) {
        const { rows, total } = await queries.messages({ page });
        expect([rows.map((r) => r.name), total]).toEqual([['Newer', 'Older'], 2]);
      }
      for (let i = 0; i < 52; i++) await store.subscribers.add(`reader${String(i).padStart(2, '0')}@example.org`, new Date(Date.UTC(2026, 10, 1) + i * MINUTE));
      const first = await queries.subscribers(undefined, 1);
      expect([first.rows.length, first.rows[0]?.email, first.total]).toEqual([50, 'reader51@example.org', 52]);
      await expect(queries.subscribers(undefined, 0)).resolves.toEqual(first);
      const second = await queries.subscribers('READER', 2);
      expect([second.rows.map((r) => r.email), second.total]).toEqual([['reader01@example.org', 'reader00@example.org'], 52]);
      await expect(queries.subscribers('reader5', 1)).resolves.toMatchObject({ total: 2 });
      await expect(queries.subscribers('nobody', 1)).resolves.toEqual({ rows: [], total: 0 });
    });

    test('a subscriber who has not confirmed yet shows a consent without a date', async () => {
      const { store } = await open();
      const { queries } = createAdminStores(store);
      const evidence = { page: '/newsletter', text: 'Yes please.', version: 'def456def456', client: '203.0.113.0/24' };
      await createConsents(store.sql).request('later@example.org', evidence, new Date('2026-11-01T00:00:00.000Z'));
      await store.subscribers.add('later@example.org', new Date('2026-11-01T00:00:01.000Z'));
      await store.subscribers.add('plain@example.org', new Date('2026-11-01T00:00:00.000Z'));
      await expect(queries.subscribers(undefined, 1)).resolves.toEqual({
        rows: [
          { email: 'later@example.org', createdAt: '2026-11-01T00:00:01.000Z', consent: { confirmedAt: null, version: 'def456def456', page: '/newsletter' } },
          { email: 'plain@example.org', createdAt: '2026-11-01T00:00:00.000Z' },
        ],
        total: 2,
      });
    });

    test('an erasure asked in capitals still removes the consent record and the waiting signup', async () => {
      const { store } = await open();
      const { queries } = createAdminStores(store);
      const consents = createConsents(store.sql);
      const evidence = { page: '/', text: 'Yes please.', version: 'abc123abc123', client: '203.0.113.0/24' };
      await consents.request('case@example.org', evidence, new Date('2026-11-01T00:00:00.000Z'));
      await expect(queries.deleteSubscriber('CASE@EXAMPLE.ORG')).resolves.toEqual({ found: true });
      await expect(consents.find('case@example.org')).resolves.toBeUndefined();
      await createSignups(store.sql).enqueue('Queue@Example.org', 'mailchimp', new Date('2026-11-01T00:02:00.000Z'));
      await expect(queries.deleteSubscriber('QUEUE@example.ORG')).resolves.toEqual({ found: true });
      await expect(createSignups(store.sql).pending(10)).resolves.toEqual([]);
      await expect(queries.deleteSubscriber('QUEUE@example.ORG')).resolves.toEqual({ found: false });
    });

    test('deleting a message being sent is not done now: it answers false and the message stays until its send ends', async () => {
      const { store } = await open();
      const { queries } = createAdminStores(store);
      const id = await message(store, 'Sending');
      const machine = createSubmissionMachine(store.sql);
      const now = new Date();
      await expect(machine.claim(now, new Date(now.getTime() + MINUTE))).resolves.toMatchObject({ id });
      await expect(queries.deleteMessage(id)).resolves.toBe(false);
      await expect(store.outbox.find(id)).resolves.toMatchObject({ name: 'Sending' });
      await expect(queries.deleteMessage(id + 1000)).resolves.toBe(false);
    });
  });
});
