/**
 * The API keys in the admin (issue 42 item 5, admin/actions/keys.ts) through `handleAdminPost`,
 * over a real store on both engines: only an owner makes or revokes a key (an editor and a reader
 * are refused 403, nothing made or revoked); a key made is shown once, in the `shown` outcome and
 * nowhere else (the store keeps its prefix and hash, the audit log its name and prefix); a key
 * revoked by its id is refused at its very next use; the forms ticked are the key's (none ticked:
 * every form).
 */
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { type AdminDeps, handleAdminPost } from '../../../packages/site-forms/src/lib/admin/actions/index.ts';
import { createAuditLog } from '../../../packages/site-forms/src/lib/admin/audit.ts';
import { createSessions } from '../../../packages/site-forms/src/lib/admin/session.ts';
import { createSessionStore } from '../../../packages/site-forms/src/lib/admin/session-store.ts';
import { API_KEY, createApiKeys } from '../../../packages/site-forms/src/lib/api/keys.ts';
import { createPeopleStore, type Person } from '../../../packages/site-forms/src/lib/people/store.ts';
import { testEngines } from '../../support/stores.ts';

const SITE = 'https://site.test';
const T0 = new Date('2030-01-01T10:00:00.000Z');
const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g';

function post(path: string, fields: Record<string, string>, cookie?: string): Request {
  return new Request(`${SITE}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: SITE, ...(cookie && { cookie }) },
    body: new URLSearchParams(fields),
  });
}

describe.each(testEngines())('the API keys’ posts on $name', ({ available, open }) => {
  const setUp = async () => {
    const { store } = await open();
    const people = createPeopleStore(store.sql, { passwordHash: HASH, contactTo: 'owner@example.org' });
    await people.ensureEnvOwner(T0);
    const owner = (await people.envOwner())!;
    const now = () => T0;
    const sessions = createSessions(createSessionStore(store.sql, { legacyOwner: true }), now);
    const audit = createAuditLog(store.sql);
    const keys = createApiKeys(store.sql);
    const deps = { sessions, audit, people, apiKeys: { keys, forms: ['contact', 'quote'] }, now } as unknown as AdminDeps;
    const send = (action: Parameters<typeof handleAdminPost>[0], fields: Record<string, string>, cookie?: string) =>
      handleAdminPost(action, post(`/admin/actions/${action}`, fields, cookie), deps, { publicOrigin: SITE, clientKey: '198.51.100.1', clientHash: 'c0ffee' });
    const as = async (person: Person) => {
      const session = await sessions.start({ userId: person.id, stage: 'full', method: 'password' });
      return { cookie: `__Host-admin_session=${session.token}`, csrf: session.csrfToken };
    };
    const add = async (email: string, role: Person['role'], forms: string[] | null = null) => {
      const made = await people.create({ email, name: email.split('@')[0]!, role, forms, origin: 'cli' }, T0);
      if (!made.ok) throw new Error('not made');
      return made.person;
    };
    const entries = async () => (await audit.list(50, 0)).entries.reverse().map((entry) => [entry.action, entry.detail, entry.actorName]);
    return { store, owner, keys, send, as, add, entries };
  };

  describe.skipIf(!available)('who may', () => {
    test('an editor and a reader are refused (403) both posts; nothing is made or revoked', async () => {
      const { owner, keys, send, as, add, entries } = await setUp();
      const made = await keys.create({ name: 'ci', scope: 'read', createdBy: 'cli' }, T0);
      if (!made.ok) throw new Error('not made');
      for (const role of ['editor', 'reader'] as const) {
        const { cookie, csrf } = await as(await add(`${role}@example.org`, role));
        const refused = { kind: 'refused', status: 403, message: 'Your role cannot do this.' };
        expect(await send('create-key', { csrf, name: 'mine', scope: 'write' }, cookie)).toEqual(refused);
        expect(await send('revoke-key', { csrf, id: String(made.record.id) }, cookie)).toEqual(refused);
      }
      expect((await keys.list()).map((key) => [key.name, key.revokedAt])).toEqual([['ci', null]]);
      expect(await keys.find(made.key, T0)).toMatchObject({ kind: 'key', name: 'ci' });
      expect((await entries()).map(([action, detail]) => [action, detail])).toEqual([
        ['refused', 'create-key'],
        ['refused', 'revoke-key'],
        ['refused', 'create-key'],
        ['refused', 'revoke-key'],
      ]);
      void owner;
    });
  });

  describe.skipIf(!available)('an owner', () => {
    test('makes a key: shown once, only its prefix and hash stored, audited with its name and prefix but never its secret', async () => {
      const { store, owner, keys, send, as, entries } = await setUp();
      const { cookie, csrf } = await as(owner);
      const outcome = await send('create-key', { csrf, name: 'ci-export', scope: 'read', 'form.contact': 'on', 'form.newsletter': 'on' }, cookie);
      expect(outcome).toMatchObject({ kind: 'shown', title: 'API key "ci-export"', back: '/admin/keys' });
      if (outcome.kind !== 'shown') throw new Error('not shown');
      expect(outcome.message).toBe(
        'The read key "ci-export" for contact, the newsletter list. Copy it now: it is shown only this once. Programs send it as Authorization: Bearer <key>.',
      );
      const key = outcome.value;
      expect(key).toMatch(API_KEY);
      const row = await store.sql.get<Record<string, unknown>>('SELECT * FROM api_keys');
      expect(row).toMatchObject({
        name: 'ci-export',
        prefix: key.slice(0, 16),
        secret_hash: createHash('sha256').update(key).digest('hex'),
        scope: 'read',
        forms: '["contact","newsletter"]',
        created_by: `person:${owner.id}`,
      });
      const secret = key.slice(17);
      expect(JSON.stringify(row)).not.toContain(secret);
      expect(await entries()).toEqual([['key-created', `ci-export (${key.slice(0, 16)}…), read, contact, the newsletter list`, 'Owner <owner@example.org>']]);
      expect(JSON.stringify(await entries())).not.toContain(secret);
      // The list never holds it: it was shown once.
      expect(JSON.stringify(await keys.list())).not.toContain(secret);
      expect(await keys.find(key, T0)).toMatchObject({ name: 'ci-export', keyScope: 'read', scope: { all: false, forms: ['contact', 'newsletter'] } });
    });

    test('none ticked is every form; a write key', async () => {
      const { keys, owner, send, as } = await setUp();
      const { cookie, csrf } = await as(owner);
      const outcome = await send('create-key', { csrf, name: 'all of it', scope: 'write' }, cookie);
      expect(outcome).toMatchObject({ kind: 'shown' });
      expect((await keys.list()).map((key) => [key.name, key.scope, key.forms])).toEqual([['all of it', 'write', null]]);
    });

    test('revokes a key by its id: refused at its very next use, audited; a second revoke is 404', async () => {
      const { owner, keys, send, as, entries } = await setUp();
      const { cookie, csrf } = await as(owner);
      const made = await keys.create({ name: 'ci', scope: 'write', forms: ['quote'], createdBy: 'cli' }, T0);
      if (!made.ok) throw new Error('not made');
      expect(await send('revoke-key', { csrf, id: String(made.record.id) }, cookie)).toEqual({ kind: 'redirect', location: '/admin/keys?revoked=1' });
      expect(await keys.find(made.key, T0)).toBeUndefined();
      expect(await send('revoke-key', { csrf, id: String(made.record.id) }, cookie)).toMatchObject({ kind: 'refused', status: 404 });
      expect(await send('revoke-key', { csrf, id: 'x' }, cookie)).toMatchObject({ kind: 'refused', status: 404 });
      expect(await entries()).toEqual([['key-revoked', `ci (${made.record.prefix}…)`, 'Owner <owner@example.org>']]);
      // Its name is free again at once.
      expect(await send('create-key', { csrf, name: 'ci', scope: 'read' }, cookie)).toMatchObject({ kind: 'shown' });
    });

    test.each([
      ['no name', { scope: 'read' }, 'Give the key a name: letters, digits, spaces, dots, dashes or underscores, at most 64.'],
      [
        'a name with a control character',
        { name: 'ci\nexport', scope: 'read' },
        'Give the key a name: letters, digits, spaces, dots, dashes or underscores, at most 64.',
      ],
      ['no scope', { name: 'ci' }, 'Choose what the key may do: read, or read and change (write).'],
      ['another scope', { name: 'ci', scope: 'admin' }, 'Choose what the key may do: read, or read and change (write).'],
      ['a form the site does not have', { name: 'ci', scope: 'read', 'form.payroll': 'on' }, 'One of the forms chosen does not exist on this site.'],
    ])('refuses %s (400) and makes nothing', async (_, fields, message) => {
      const { owner, keys, send, as } = await setUp();
      const { cookie, csrf } = await as(owner);
      expect(await send('create-key', { csrf, ...fields } as Record<string, string>, cookie)).toEqual({ kind: 'refused', status: 400, message });
      expect(await keys.list()).toEqual([]);
    });

    test('a live key’s name is taken (400)', async () => {
      const { owner, keys, send, as } = await setUp();
      const { cookie, csrf } = await as(owner);
      await keys.create({ name: 'ci', scope: 'read', createdBy: 'cli' }, T0);
      expect(await send('create-key', { csrf, name: 'ci', scope: 'write' }, cookie)).toEqual({
        kind: 'refused',
        status: 400,
        message: 'A live key is already named "ci": revoke it first, or choose another name.',
      });
      expect(await keys.list()).toHaveLength(1);
    });
  });
});
