import { describe, expect, test } from 'vitest';
import { personActor, type PersonActor } from '../../../packages/site-forms/src/lib/access/permissions.ts';
import { createAdmin } from '../../../packages/site-forms/src/lib/admin/owner-inbox.ts';
import { parsePasswordHash } from '../../../packages/site-forms/src/lib/admin/password.ts';
import { exportChunks } from '../../../packages/site-forms/src/lib/contact/export.ts';
import type { Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createSignups } from '../../../packages/site-forms/src/lib/newsletter/signups.ts';
import { createDeliveries } from '../../../packages/site-forms/src/lib/webhooks/deliveries.ts';
import { testEngines } from '../../support/stores.ts';

// Issue 42 step S4: what a person reaches is limited to their forms, in every query the admin's
// pages and posts read through (`admin.for(actor)`), the export's cursor and the form lookup the
// message commands authorize with. Two forms: contact (Carl, Sam held as spam) and quote (Quinn).

const NOW = new Date('2026-11-22T12:00:00.000Z');

/** Stores a message of `form`, dated and with the status the test needs. */
async function message(store: Store, name: string, form: string, status: string, createdAt: string): Promise<number> {
  const id = await store.submissions.save({ name, email: `${name.toLowerCase()}@example.org`, message: `Hello from ${name}.`, honeypot: '' });
  await store.sql.run('UPDATE submissions SET form = ?, status = ?, created_at = ? WHERE id = ?', [form, status, createdAt, id]);
  return id;
}

async function twoForms(store: Store) {
  const carl = await message(store, 'Carl', 'contact', 'sent', '2026-11-20T09:00:00.000Z');
  const sam = await message(store, 'Sam', 'contact', 'spam', '2026-11-21T09:00:00.000Z');
  const quinn = await message(store, 'Quinn', 'quote', 'failed', '2026-11-22T09:00:00.000Z');
  await store.sql.run('UPDATE submissions SET sent_at = ? WHERE id = ?', ['2026-11-20T09:00:05.000Z', carl]);
  await store.sql.run("INSERT INTO delivery_attempts (submission_id, attempted_at, outcome, error) VALUES (?, ?, 'failed', 'refused')", [
    carl,
    '2026-11-20T09:00:01.000Z',
  ]);
  await store.sql.run("INSERT INTO delivery_attempts (submission_id, attempted_at, outcome, error) VALUES (?, ?, 'failed', 'refused')", [
    quinn,
    '2026-11-22T09:00:01.000Z',
  ]);
  return { carl, sam, quinn };
}

function adminOn(store: Store) {
  const parsed = parsePasswordHash('$scrypt$ln=4,r=8,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g');
  return createAdmin(
    { passwordHash: parsed.ok ? parsed.hash : undefined, passwordHashText: undefined, retentionDays: undefined },
    {
      store,
      logger: silentLogger,
      providerName: 'local',
      spam: { markSpam: async () => ({ found: false }), release: async () => ({ found: false }), reasons: async () => [] },
      exportMessages: async function* () {},
      webhooks: createDeliveries(store.sql),
      signups: createSignups(store.sql),
    },
    () => NOW,
  );
}

const person = (id: number, role: 'owner' | 'editor' | 'reader', forms: string[] | null): PersonActor =>
  personActor({ id, name: `P${id}`, email: `p${id}@example.org`, role, forms, stage: 'full' });
const OWNER = person(1, 'owner', null);
const QUOTE_EDITOR = person(2, 'editor', ['quote']);
const QUOTE_READER = person(3, 'reader', ['quote']);
const NOBODY = person(4, 'reader', []);

/** The names a JSON export holds. */
async function exportedNames(chunks: AsyncIterable<string>): Promise<string[]> {
  let text = '';
  for await (const chunk of chunks) text += chunk;
  return (JSON.parse(text) as { name: string }[]).map((row) => row.name);
}

describe.each(testEngines())('scope by form on $name', ({ name, available, open }) => {
  describe.skipIf(!available)(name, () => {
    test('the list and its count: only the forms in scope, whatever the filter asks', async () => {
      const { store } = await open();
      await twoForms(store);
      const admin = adminOn(store);
      const names = async (actor: PersonActor, query = {}) => {
        const { rows, total } = await admin.for(actor).messages({ page: 1, ...query });
        return { names: rows.map((r) => r.name), total };
      };
      await expect(names(OWNER)).resolves.toEqual({ names: ['Quinn', 'Sam', 'Carl'], total: 3 });
      await expect(names(QUOTE_EDITOR)).resolves.toEqual({ names: ['Quinn'], total: 1 });
      await expect(names(QUOTE_READER, { form: 'contact' })).resolves.toEqual({ names: [], total: 0 });
      await expect(names(QUOTE_READER, { search: 'carl' })).resolves.toEqual({ names: [], total: 0 });
      await expect(names(QUOTE_READER, { status: 'sent' })).resolves.toEqual({ names: [], total: 0 });
      await expect(names(NOBODY)).resolves.toEqual({ names: [], total: 0 });
    });

    test('the overview: counts, chart, delivery and held spam of the forms in scope only', async () => {
      const { store } = await open();
      await twoForms(store);
      const admin = adminOn(store);
      const owner = await admin.for(OWNER).overview(NOW);
      expect(owner.counts).toEqual({ sent: 1, spam: 1, failed: 1 });
      expect(owner.days.filter((d) => d.count > 0).map((d) => d.day)).toEqual(['2026-11-20', '2026-11-21', '2026-11-22']);
      expect(owner.delivery).toEqual({ lastSentAt: '2026-11-20T09:00:05.000Z', lastFailureAt: '2026-11-22T09:00:01.000Z', failed: 1, pending: 0 });
      expect(owner.held.count).toBe(1);
      const editor = await admin.for(QUOTE_EDITOR).overview(NOW);
      expect(editor.counts).toEqual({ failed: 1 });
      expect(editor.days.filter((d) => d.count > 0).map((d) => d.day)).toEqual(['2026-11-22']);
      expect(editor.delivery).toEqual({ lastSentAt: null, lastFailureAt: '2026-11-22T09:00:01.000Z', failed: 1, pending: 0 });
      expect(editor.held.count).toBe(0);
      const nobody = await admin.for(NOBODY).overview(NOW);
      expect(nobody.counts).toEqual({});
      expect(nobody.delivery).toEqual({ lastSentAt: null, lastFailureAt: null, failed: 0, pending: 0 });
    });

    test('one message: opened in scope, undefined (the 404) outside it; its form, for the commands’ check', async () => {
      const { store } = await open();
      const { carl, quinn } = await twoForms(store);
      const admin = adminOn(store);
      expect((await admin.for(QUOTE_READER).message(quinn))?.submission.name).toBe('Quinn');
      await expect(admin.for(QUOTE_READER).message(carl)).resolves.toBeUndefined();
      await expect(admin.for(NOBODY).message(quinn)).resolves.toBeUndefined();
      expect((await admin.for(OWNER).message(carl))?.submission.name).toBe('Carl');
      await expect(admin.deps.queries.formOf(carl)).resolves.toBe('contact');
      await expect(admin.deps.queries.formOf(quinn)).resolves.toBe('quote');
      await expect(admin.deps.queries.formOf(9999)).resolves.toBeUndefined();
    });

    test('the export: the cursor reads the forms in scope only, and counts them so', async () => {
      const { store } = await open();
      await twoForms(store);
      const admin = adminOn(store);
      await expect(exportedNames(exportChunks(store.outbox, 'json', { scope: { all: true } }))).resolves.toEqual(['Quinn', 'Sam', 'Carl']);
      await expect(exportedNames(exportChunks(store.outbox, 'json', { scope: QUOTE_EDITOR.scope }))).resolves.toEqual(['Quinn']);
      await expect(exportedNames(exportChunks(store.outbox, 'json', { scope: NOBODY.scope }))).resolves.toEqual([]);
      await expect(admin.deps.exports.countMessages(QUOTE_EDITOR.scope)).resolves.toBe(1);
      await expect(admin.deps.exports.countMessages({ all: true })).resolves.toBe(3);
    });
    test('the previous visit to the overview is each person’s own', async () => {
      const { store } = await open();
      await twoForms(store);
      const admin = adminOn(store);
      const person = store.sql.run.bind(store.sql);
      for (const id of [1, 2]) {
        await person(
          "INSERT INTO admin_users (id, email, name, role, origin, user_handle, created_at, updated_at) VALUES (?, ?, ?, 'editor', 'cli', ?, ?, ?)",
          [id, `p${id}@example.org`, `P${id}`, `handle-${id}`, NOW.toISOString(), NOW.toISOString()],
        );
      }
      const later = new Date(NOW.getTime() + 60_000);
      expect((await admin.for(OWNER).overview(NOW)).held.since).toBeUndefined();
      expect((await admin.for(OWNER).overview(later)).held.since).toBe(NOW.toISOString());
      // Eddie's first visit: the owner's did not count for him, and his does not move the owner's.
      expect((await admin.for(QUOTE_EDITOR).overview(later)).held.since).toBeUndefined();
      expect((await admin.for(OWNER).overview(later)).held.since).toBe(later.toISOString());
      const stored = await store.sql.all<{ id: number | string; overview_visited_at: string | null }>(
        'SELECT id, overview_visited_at FROM admin_users ORDER BY id',
      );
      expect(stored.map((row) => [Number(row.id), row.overview_visited_at])).toEqual([
        [1, later.toISOString()],
        [2, later.toISOString()],
      ]);
    });
  });
});
