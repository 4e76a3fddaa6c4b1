/**
 * The people's sessions in the database (issue 42 step S3a, admin/session-store.ts) on both
 * engines: a session belongs to a person read at every request, a removed person's session ends
 * at their next request, and a session of the version before people (`admin_sessions`) still
 * resumes as the first owner's for the rest of its 12 hours while ADMIN_PASSWORD_HASH is set.
 */
import { describe, expect, test } from 'vitest';
import { createSessions, hashToken } from '../../../packages/site-forms/src/lib/admin/session.ts';
import { createSessionStore } from '../../../packages/site-forms/src/lib/admin/session-store.ts';
import { createPeopleStore } from '../../../packages/site-forms/src/lib/people/store.ts';
import type { Sql } from '../../../packages/site-forms/src/lib/sql/sql.ts';
import { testEngines } from '../../support/stores.ts';

const MINUTE = 60_000;
const T0 = new Date('2030-01-01T10:00:00.000Z');
const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g';
/** A token as the version before people gave it, and its row there. */
const OLD_TOKEN = 'o'.repeat(43);

const count = async (sql: Sql, table: string) => Number((await sql.get<{ n: number | string }>(`SELECT count(*) AS n FROM ${table}`))!.n);

async function oldSession(sql: Sql, createdAt: Date, lastSeenAt = createdAt): Promise<void> {
  await sql.run('INSERT INTO admin_sessions (token_hash, created_at, last_seen_at) VALUES (?, ?, ?)', [
    hashToken(OLD_TOKEN),
    createdAt.toISOString(),
    lastSeenAt.toISOString(),
  ]);
}

describe.each(testEngines())('people’s sessions on $name', ({ name, available, open }) => {
  describe.skipIf(!available)(name, () => {
    const setUp = async (legacyOwner = true) => {
      const { store } = await open();
      let now = T0;
      const clock = { now: () => now, advance: (ms: number) => (now = new Date(now.getTime() + ms)) };
      const people = createPeopleStore(store.sql, { passwordHash: legacyOwner ? HASH : undefined, contactTo: 'owner@example.org' });
      const sessions = createSessions(createSessionStore(store.sql, { legacyOwner }), clock.now);
      return { sql: store.sql, people, sessions, clock };
    };

    test('a new session is a person’s, kept in admin_person_sessions by hash, never in admin_sessions', async () => {
      const { sql, people, sessions } = await setUp();
      const ada = await people.create({ email: 'ada@example.org', name: 'Ada', role: 'editor', forms: ['quote'], origin: 'cli' }, T0);
      if (!ada.ok) throw new Error('not created');
      const session = await sessions.start({ userId: ada.person.id, stage: 'full', method: 'password' });
      const rows = await sql.all<Record<string, unknown>>('SELECT token_hash, user_id, stage, method FROM admin_person_sessions');
      expect(rows.map((row) => ({ ...row, user_id: Number(row.user_id) }))).toEqual([
        { token_hash: session.tokenHash, user_id: ada.person.id, stage: 'full', method: 'password' },
      ]);
      await expect(count(sql, 'admin_sessions')).resolves.toBe(0);
      const resumed = await sessions.resume(session.token);
      expect(resumed.ok && resumed.session.actor).toEqual({
        kind: 'person',
        id: ada.person.id,
        name: 'Ada',
        email: 'ada@example.org',
        stage: 'full',
        role: 'editor',
        scope: { all: false, forms: ['quote'] },
      });
    });

    test('the role and forms are read at every request: a change applies at the next one', async () => {
      const { people, sessions } = await setUp();
      const ada = await people.create({ email: 'ada@example.org', name: 'Ada', role: 'reader', forms: ['quote'], origin: 'cli' }, T0);
      if (!ada.ok) throw new Error('not created');
      const { token } = await sessions.start({ userId: ada.person.id, stage: 'full', method: 'password' });
      await people.update(ada.person.id, { role: 'editor', forms: ['quote', 'booking'] }, T0);
      const resumed = await sessions.resume(token);
      expect(resumed.ok && [resumed.session.actor.role, resumed.session.actor.scope]).toEqual(['editor', { all: false, forms: ['quote', 'booking'] }]);
    });

    test('a removed person’s session fails at the next request, even if its row survived', async () => {
      const { sql, people, sessions } = await setUp();
      await people.ensureEnvOwner(T0);
      const ada = await people.create({ email: 'ada@example.org', name: 'Ada', role: 'owner', origin: 'cli' }, T0);
      if (!ada.ok) throw new Error('not created');
      const kept = await sessions.start({ userId: ada.person.id, stage: 'full', method: 'password' });
      const removed = await sessions.start({ userId: ada.person.id, stage: 'full', method: 'password' });
      await expect(people.remove(ada.person.id, T0)).resolves.toMatchObject({ ok: true });
      await expect(sessions.resume(removed.token)).resolves.toEqual({ ok: false, reason: 'unknown' });
      // A session started by a sign-in that raced the removal: its row is there, its person is not.
      await sql.run('INSERT INTO admin_person_sessions (token_hash, user_id, stage, method, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?)', [
        kept.tokenHash,
        ada.person.id,
        'full',
        'password',
        T0.toISOString(),
        T0.toISOString(),
      ]);
      await expect(sessions.resume(kept.token)).resolves.toEqual({ ok: false, reason: 'unknown' });
    });

    test('a session of the version before people resumes as the first owner’s for the rest of its 12 hours', async () => {
      const { sql, people, sessions, clock } = await setUp();
      await people.ensureEnvOwner(T0);
      const owner = (await people.envOwner())!;
      await oldSession(sql, new Date(T0.getTime() - 11 * 60 * MINUTE), T0);
      const resumed = await sessions.resume(OLD_TOKEN);
      expect(resumed.ok && resumed.session.actor).toMatchObject({ id: owner.id, role: 'owner', scope: { all: true }, stage: 'full' });
      // Touched where it lives, so its idle limit runs from each request.
      clock.advance(29 * MINUTE);
      await expect(sessions.resume(OLD_TOKEN)).resolves.toMatchObject({ ok: true });
      clock.advance(29 * MINUTE);
      await expect(sessions.resume(OLD_TOKEN)).resolves.toMatchObject({ ok: true });
      clock.advance(2 * MINUTE);
      await expect(sessions.resume(OLD_TOKEN)).resolves.toEqual({ ok: false, reason: 'expired' });
      await expect(count(sql, 'admin_sessions')).resolves.toBe(0);
    });

    test('a session of the version before people is nobody’s without ADMIN_PASSWORD_HASH', async () => {
      const { sql, sessions } = await setUp(false);
      await oldSession(sql, T0);
      await expect(sessions.resume(OLD_TOKEN)).resolves.toEqual({ ok: false, reason: 'unknown' });
    });

    test('a session of the version before people is nobody’s once the first owner is removed', async () => {
      const { sql, people, sessions } = await setUp();
      await people.ensureEnvOwner(T0);
      const other = await people.create({ email: 'ada@example.org', role: 'owner', origin: 'cli' }, T0);
      if (!other.ok) throw new Error('not created');
      await oldSession(sql, T0);
      // Keep the row: the removal deletes admin_sessions itself, and the store must not rely on it.
      await people.remove((await people.envOwner())!.id, T0);
      await oldSession(sql, T0);
      await expect(sessions.resume(OLD_TOKEN)).resolves.toEqual({ ok: false, reason: 'unknown' });
    });

    test('without ADMIN_PASSWORD_HASH the first owner’s own sessions do not resume: the hash unset ends them', async () => {
      const { sql, people, sessions } = await setUp();
      await people.ensureEnvOwner(T0);
      const owner = (await people.envOwner())!;
      const session = await sessions.start({ userId: owner.id, stage: 'full', method: 'password' });
      await expect(sessions.resume(session.token)).resolves.toMatchObject({ ok: true });
      // The server started again without the hash: the row of the first owner is still there.
      const unset = createSessions(createSessionStore(sql, { legacyOwner: false }), () => T0);
      await expect(unset.resume(session.token)).resolves.toEqual({ ok: false, reason: 'unknown' });
      // Another person's session is theirs whatever the hash.
      const ada = await people.create({ email: 'ada@example.org', role: 'reader', origin: 'cli' }, T0);
      if (!ada.ok) throw new Error('not created');
      const hers = await unset.start({ userId: ada.person.id, stage: 'full', method: 'password' });
      await expect(unset.resume(hers.token)).resolves.toMatchObject({ ok: true });
    });

    test('a session of the version before people is not a later first owner’s: a new ADMIN_PASSWORD_HASH after a removal ends them', async () => {
      const { sql, people } = await setUp();
      await people.ensureEnvOwner(T0);
      const other = await people.create({ email: 'ada@example.org', role: 'owner', origin: 'cli' }, T0);
      if (!other.ok) throw new Error('not created');
      await people.remove((await people.envOwner())!.id, T0);
      // Written after the removal by an instance of the version before people, still running with the old hash.
      await oldSession(sql, T0);
      const renewed = createPeopleStore(sql, { passwordHash: HASH.replace('aGFza', 'bmV3a'), contactTo: undefined });
      await expect(renewed.ensureEnvOwner(T0)).resolves.toBe('created');
      const sessions = createSessions(createSessionStore(sql, { legacyOwner: true }), () => T0);
      await expect(sessions.resume(OLD_TOKEN)).resolves.toEqual({ ok: false, reason: 'unknown' });
    });

    test('signing out ends a session of either kind; the sweep deletes the expired of both tables', async () => {
      const { sql, people, sessions, clock } = await setUp();
      await people.ensureEnvOwner(T0);
      const owner = (await people.envOwner())!;
      await oldSession(sql, T0);
      await sessions.end(OLD_TOKEN);
      await expect(count(sql, 'admin_sessions')).resolves.toBe(0);
      const a = await sessions.start({ userId: owner.id, stage: 'full', method: 'password' });
      await sessions.end(a.token);
      await expect(count(sql, 'admin_person_sessions')).resolves.toBe(0);

      await oldSession(sql, T0);
      await sessions.start({ userId: owner.id, stage: 'full', method: 'password' });
      clock.advance(20 * MINUTE);
      const live = await sessions.start({ userId: owner.id, stage: 'full', method: 'password' });
      clock.advance(10 * MINUTE);
      await expect(sessions.sweep()).resolves.toBe(2);
      await expect(count(sql, 'admin_sessions')).resolves.toBe(0);
      await expect(sessions.resume(live.token)).resolves.toMatchObject({ ok: true });
    });
  });
});
