import { describe, expect, test } from 'vitest';
import { handleAdminPost } from '../../../packages/site-forms/src/lib/admin/actions/index.ts';
import { type AdminParts, createAdmin } from '../../../packages/site-forms/src/lib/admin/owner-inbox.ts';
import { parsePasswordHash } from '../../../packages/site-forms/src/lib/admin/password.ts';
import type { Change } from '../../../packages/site-forms/src/lib/submissions/machine.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import type { Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createSignups } from '../../../packages/site-forms/src/lib/newsletter/signups.ts';
import { createDeliveries } from '../../../packages/site-forms/src/lib/webhooks/deliveries.ts';
import { testEngines } from '../../support/stores.ts';

// createAdmin's wiring, through the posts the owner makes: which part each action reaches.
// The reference implementation's argon2id vector (password "password"): cheap to check.
const HASH = '$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4';
const SITE = 'https://site.test';
const context = { publicOrigin: SITE, clientKey: '203.0.113.9', clientHash: 'c0ffee' };

function post(path: string, fields: Record<string, string>, cookie?: string): Request {
  return new Request(`${SITE}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: SITE, ...(cookie && { cookie }) },
    body: new URLSearchParams(fields),
  });
}

async function message(store: Store, name: string, status?: string): Promise<number> {
  const id = await store.submissions.save({ name, email: `${name.toLowerCase()}@example.org`, message: `Hello from ${name}.`, honeypot: '' });
  if (status) await store.sql.run('UPDATE submissions SET status = ? WHERE id = ?', [status, id]);
  return id;
}

function build(store: Store, extra: Partial<AdminParts> = {}) {
  const parsed = parsePasswordHash(HASH, true);
  if (!parsed.ok) throw new Error(parsed.problem);
  const calls: string[] = [];
  const spamChange = (to: 'spam' | 'pending'): Change => ({ found: true, from: to === 'spam' ? 'pending' : 'spam', changed: true, to });
  const parts: AdminParts = {
    store,
    logger: silentLogger,
    providerName: 'local',
    spam: {
      markSpam: async (id) => {
        calls.push(`spam #${id}`);
        return spamChange('spam');
      },
      release: async (id) => {
        calls.push(`release #${id}`);
        return spamChange('pending');
      },
      reasons: async () => [],
    },
    exportMessages: async function* (format, { excel }) {
      yield `${format}${excel ? ' for Excel' : ''}\n`;
    },
    webhooks: createDeliveries(store.sql),
    signups: createSignups(store.sql),
    delays: { client: () => 0, overall: () => 0 },
    // The reference vector's cheap parameters: an unknown account's guess costs what a person's does, here little.
    dummy: parsed.hash,
    ...extra,
  };
  return { admin: createAdmin({ passwordHash: parsed.hash, passwordHashText: HASH, retentionDays: 45 }, parts), calls, parts };
}

describe.each(testEngines())('createAdmin on $name', ({ name, available, open }) => {
  describe.skipIf(!available)(name, () => {
    test("signs the owner in with the configured hash, and each action reaches its part: the spam filter's, the state machine's, the store's", async () => {
      const { store } = await open();
      const { admin, calls } = build(store);
      expect(admin.retentionDays).toBe(45);
      const wrong = await handleAdminPost('sign-in', post('/admin/actions/sign-in', { password: 'passwore' }), admin.deps, context);
      expect(wrong).toEqual({ kind: 'redirect', location: '/admin?failed=1' });
      const signIn = await handleAdminPost('sign-in', post('/admin/actions/sign-in', { password: 'password' }), admin.deps, context);
      if (signIn.kind !== 'redirect' || !signIn.cookie) throw new Error('sign-in failed');
      const cookie = signIn.cookie.split(';')[0]!;
      const resumed = await admin.sessions.resume(cookie.split('=')[1]);
      if (!resumed.ok) throw new Error('no session');
      const act = (action: Parameters<typeof handleAdminPost>[0], path: string, fields: Record<string, string>) =>
        handleAdminPost(action, post(path, { csrf: resumed.session.csrfToken, ...fields }, cookie), admin.deps, context);

      const a = await message(store, 'Ada');
      const b = await message(store, 'Bob', 'spam');
      const c = await message(store, 'Cy', 'failed');
      await expect(act('mark-spam', '/admin/actions/spam', { id: String(a) })).resolves.toEqual({
        kind: 'redirect',
        location: `/admin/messages/${a}?done=mark-spam`,
      });
      await expect(act('release', '/admin/actions/release', { id: String(b) })).resolves.toEqual({
        kind: 'redirect',
        location: `/admin/messages/${b}?done=release`,
      });
      expect(calls).toEqual([`spam #${a}`, `release #${b}`]);

      // Delete goes through the state machine: the message is gone from the store.
      await expect(act('delete-message', '/admin/actions/delete', { id: String(c) })).resolves.toEqual({
        kind: 'redirect',
        location: '/admin/messages?done=deleted',
      });
      await expect(store.outbox.find(c)).resolves.toBeUndefined();
      await expect(act('delete-message', '/admin/actions/delete', { id: String(c) })).resolves.toMatchObject({ kind: 'refused', status: 404 });

      // The export of messages counts every message over all statuses: Ada (pending) and Bob (spam).
      const exported = await act('export', '/admin/actions/export', { what: 'messages', format: 'csv', bom: '1' });
      if (exported.kind !== 'download' || typeof exported.body === 'string') throw new Error('no streamed download');
      let body = '';
      for await (const chunk of exported.body) body += chunk;
      expect(body).toBe('csv for Excel\n');

      await store.subscribers.add('Grace@Example.NET', new Date('2026-11-01T10:00:00.000Z'));
      await expect(act('export', '/admin/actions/export', { what: 'subscribers', format: 'json' })).resolves.toMatchObject({
        kind: 'download',
        body: '[\n  {\n    "email": "grace@example.net",\n    "created": "2026-11-01T10:00:00.000Z"\n  }\n]\n',
      });

      const { entries } = await admin.audit.list(20, 0);
      expect(entries.reverse().map((e) => [e.action, e.detail, e.client])).toEqual([
        ['sign-in-failed', 'wrong password', 'c0ffee'],
        ['sign-in', '', 'c0ffee'],
        ['mark-spam', `#${a}`, 'c0ffee'],
        ['release', `#${b}`, 'c0ffee'],
        ['delete-message', `#${c}`, 'c0ffee'],
        ['export-messages', '2 as CSV', 'c0ffee'],
        ['export-subscribers', '1 as JSON', 'c0ffee'],
      ]);
    });

    test('200 addresses trying wrong passwords: a few rows with counts, not a row per attempt', async () => {
      const { store } = await open();
      const { admin } = build(store);
      for (let round = 0; round < 2; round++) {
        for (let n = 0; n < 200; n++) {
          const client = { publicOrigin: SITE, clientKey: `198.51.100.${n}`, clientHash: `c${String(n).padStart(3, '0')}` };
          // Each at an address of its own: 400 guesses at one account would meet its own throttle (tests/lib/admin/no-enumeration.test.ts).
          const fields = { email: `guess${n}@example.org`, password: `guess ${round}` };
          await expect(handleAdminPost('sign-in', post('/admin/actions/sign-in', fields), admin.deps, client)).resolves.toEqual({
            kind: 'redirect',
            location: '/admin?failed=email',
          });
        }
      }
      const { entries, total } = await admin.audit.list(50, 0);
      // The first ten addresses of the quarter-hour have a row each; the 190 others share one.
      expect(total).toBe(11);
      expect(entries.map((e) => [e.action, e.detail, e.client, e.repeats]).sort()).toEqual([
        ...Array.from({ length: 10 }, (_, n) => ['sign-in-failed', 'wrong password', `c00${n}`, 2]),
        ['sign-in-failed', 'wrong password', 'others', 380],
      ]);
    });

    test('the export count sums every status, and the parts it was given are the ones it uses', async () => {
      const { store } = await open();
      const { admin, parts } = build(store);
      await expect(admin.deps.exports.countMessages()).resolves.toBe(0);
      for (const [who, status] of [
        ['Ann', undefined],
        ['Ben', 'spam'],
        ['Cat', 'spam'],
        ['Dan', 'failed'],
        ['Eve', 'sent'],
      ] as const)
        await message(store, who, status);
      await expect(admin.deps.exports.countMessages()).resolves.toBe(5);
      await expect(admin.deps.exports.subscribers()).resolves.toEqual([]);
      expect(admin.webhooks).toBe(parts.webhooks);
      expect(admin.signups).toBe(parts.signups);
      expect(admin.deps.webhooks).toBe(parts.webhooks);
      expect(admin.deps.signups).toBe(parts.signups);
      expect(admin.deps.devices).toBe(admin.devices);
      expect(admin.deps.sessions).toBe(admin.sessions);
      expect(admin.deps.audit).toBe(admin.audit);
      expect(admin.deps.queries).toBe(admin.queries);
      expect(admin.deps.exporting).toEqual({});
    });

    test('the throttle takes the delays it was given, and the default ones without', async () => {
      const { store } = await open();
      const given = build(store, { delays: { client: (earlier) => 100 + earlier, overall: () => 7 } }).admin;
      await expect(given.deps.throttle.attempt('198.51.100.1')).resolves.toEqual({ ok: true, delayMs: 100 });
      await expect(given.deps.throttle.attempt('198.51.100.1')).resolves.toEqual({ ok: true, delayMs: 101 });
      const { delays: _, ...rest } = build(store).parts;
      const parsed = parsePasswordHash(HASH, true);
      if (!parsed.ok) throw new Error(parsed.problem);
      const plain = createAdmin({ passwordHash: parsed.hash, passwordHashText: HASH, retentionDays: undefined }, rest);
      expect(plain.retentionDays).toBeUndefined();
      const gates = [];
      for (let i = 0; i < 5; i++) gates.push(await plain.deps.throttle.attempt('198.51.100.2'));
      expect(gates).toEqual([0, 0, 0, 1000, 2000].map((delayMs) => ({ ok: true, delayMs })));
    });

    test("the device cookie is signed with the configured hash's key", async () => {
      const { store } = await open();
      const { admin } = build(store);
      const cookie = admin.devices.cookie(true).split(';')[0]!;
      const request = new Request(`${SITE}/admin`, { headers: { cookie } });
      expect(admin.devices.known(request, true)).toBe(true);
      expect(admin.deps.devices?.known(request, true)).toBe(true);
      const other = parsePasswordHash('$argon2id$v=19$m=256,t=2,p=1$b3RoZXJzYWx0$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4', true);
      if (!other.ok) throw new Error(other.problem);
      const { parts } = build(store);
      expect(createAdmin({ passwordHash: other.hash, passwordHashText: undefined, retentionDays: undefined }, parts).devices.known(request, true)).toBe(false);
    });
  });
});
