/**
 * The people of the admin (issue 42, people/store.ts) on both engines: each person's record, the
 * first owner made from ADMIN_PASSWORD_HASH once however many instances start at once, removal
 * with everything that lets the person in, and the last owner that nothing removes or demotes,
 * not even two owners removing each other at the same moment on two instances.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createPeopleStore, type EnvOwner, type PeopleStore } from '../../../packages/site-forms/src/lib/people/store.ts';
import type { Sql } from '../../../packages/site-forms/src/lib/sql/sql.ts';
import { TEST_DATABASE, testEngines } from '../../support/stores.ts';

const T0 = new Date('2030-01-01T10:00:00.000Z');
const T1 = new Date('2030-01-01T11:00:00.000Z');
const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g';
const OTHER_HASH = '$argon2id$v=19$m=19456,t=2,p=1$b3RoZXJzYWx0b3RoZXI$b3RoZXJoYXNob3RoZXJoYXNob3RoZXJoYXNob3Ro';
const ENV: EnvOwner = { passwordHash: HASH, contactTo: 'Owner@Example.org' };

const count = async (sql: Sql, table: string, where = 'TRUE') =>
  Number((await sql.get<{ n: number | string }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`))!.n);

/**
 * 'waiting' once a statement of this database waits for a lock, 'settled' if `promise` settles
 * first. No clock: each look is a round trip to the database, and the test's own timeout ends a
 * look that never ends.
 */
async function waitsOrSettles(sql: Sql, promise: Promise<unknown>): Promise<'waiting' | 'settled'> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (;;) {
    if (settled) return 'settled';
    const row = await sql.get<{ n: number | string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
    );
    if (Number(row!.n) > 0) return 'waiting';
  }
}

describe.each(testEngines())('the people of the admin on $name', (engine) => {
  const others: Store[] = [];
  afterEach(async () => {
    for (const store of others.splice(0)) await store.close();
  });
  const open = async (env: EnvOwner = ENV) => {
    const { store, url, dataDir } = await engine.open();
    return { store, url, dataDir, people: createPeopleStore(store.sql, env) };
  };
  /** A second instance on the same database, as another process would open it. */
  const openAgain = async (url: string | undefined, dataDir: string, env: EnvOwner = ENV): Promise<PeopleStore> => {
    const store = openStore({ ...TEST_DATABASE, url, dataDir }, createLogger({ level: 'silent' }));
    await store.ready;
    others.push(store);
    return createPeopleStore(store.sql, env);
  };
  const owners = async (people: PeopleStore) => (await people.list()).filter((person) => person.role === 'owner').map((person) => person.email);

  test.skipIf(!engine.available)(
    'a person is stored with a lower-cased email, a user handle of their own, and found by id or by any case of their email',
    async () => {
      const { people } = await open();
      const made = await people.create({ email: ' Ada@Example.ORG ', name: 'Ada Lovelace', role: 'editor', forms: ['contact', 'quote'], origin: 'cli' }, T0);
      const other = await people.create({ email: 'grace@example.org', role: 'reader', origin: 'invited', passwordHash: HASH }, T0);
      expect(made).toMatchObject({ ok: true });
      expect(other).toMatchObject({ ok: true });
      if (!made.ok || !other.ok) return;
      expect(made.person).toEqual({
        id: expect.any(Number),
        email: 'ada@example.org',
        name: 'Ada Lovelace',
        role: 'editor',
        forms: ['contact', 'quote'],
        passwordHash: null,
        origin: 'cli',
        userHandle: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        mailForms: null,
        digest: false,
        overviewVisitedAt: null,
        lastSignInAt: null,
        createdAt: T0,
        updatedAt: T0,
      });
      expect(other.person).toMatchObject({ email: 'grace@example.org', name: '', forms: null, passwordHash: HASH });
      expect(other.person.userHandle).not.toBe(made.person.userHandle);
      await expect(people.find(made.person.id)).resolves.toEqual(made.person);
      await expect(people.findByEmail('ADA@example.org')).resolves.toEqual(made.person);
      await expect(people.findByEmail('nobody@example.org')).resolves.toBeUndefined();
      await expect(people.find(made.person.id + 100)).resolves.toBeUndefined();
      await expect(people.list()).resolves.toEqual([made.person, other.person]);
    },
  );

  test.skipIf(!engine.available)('an email is one person’s: a second person with it, in any case, is refused and nothing is stored', async () => {
    const { store, people } = await open();
    await people.create({ email: 'ada@example.org', role: 'editor', origin: 'cli' }, T0);
    await expect(people.create({ email: 'ADA@example.org', role: 'owner', origin: 'cli' }, T0)).resolves.toEqual({ ok: false, reason: 'email-taken' });
    await expect(count(store.sql, 'admin_users')).resolves.toBe(1);
  });

  test.skipIf(!engine.available)('a person’s role, forms, password, mail choices and email are changed, and the change dated', async () => {
    const { people } = await open();
    const made = await people.create({ email: 'ada@example.org', role: 'reader', forms: ['quote'], origin: 'cli' }, T0);
    await people.create({ email: 'grace@example.org', role: 'owner', origin: 'cli' }, T0);
    if (!made.ok) throw new Error('not made');
    const id = made.person.id;
    await expect(
      people.update(id, { name: 'Ada', role: 'editor', forms: null, passwordHash: HASH, mailForms: ['quote'], digest: true, email: 'Ada@Lovelace.org' }, T1),
    ).resolves.toEqual({
      ok: true,
      person: {
        ...made.person,
        name: 'Ada',
        role: 'editor',
        forms: null,
        passwordHash: HASH,
        mailForms: ['quote'],
        digest: true,
        email: 'ada@lovelace.org',
        updatedAt: T1,
      },
    });
    // Only what is named changes; an empty list of forms is no form at all, not every form.
    await expect(people.update(id, { forms: [] }, T1)).resolves.toMatchObject({ ok: true, person: { forms: [], name: 'Ada', mailForms: ['quote'] } });
    await expect(people.update(id, { email: 'GRACE@example.org' }, T1)).resolves.toEqual({ ok: false, reason: 'email-taken' });
    await expect(people.update(id + 100, { name: 'Nobody' }, T1)).resolves.toEqual({ ok: false, reason: 'not-found' });
    await expect(people.find(id)).resolves.toMatchObject({ email: 'ada@lovelace.org', forms: [] });
  });

  test.skipIf(!engine.available)(
    'the first owner is made from ADMIN_PASSWORD_HASH once, with CONTACT_TO as their email and the inbox’s last visit',
    async () => {
      const { store, people } = await open();
      await store.sql.run("INSERT INTO settings (name, value) VALUES ('admin_overview_visited_at', '2029-12-31T08:00:00.000Z')");
      await expect(people.ensureEnvOwner(T0)).resolves.toBe('created');
      await expect(people.ensureEnvOwner(T1)).resolves.toBe('present');
      await expect(people.list()).resolves.toEqual([
        {
          id: expect.any(Number),
          email: 'owner@example.org',
          name: 'Owner',
          role: 'owner',
          forms: null,
          // Their password stays the variable itself, read at each sign-in.
          passwordHash: null,
          origin: 'env',
          userHandle: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
          mailForms: null,
          digest: true,
          overviewVisitedAt: new Date('2029-12-31T08:00:00.000Z'),
          lastSignInAt: null,
          createdAt: T0,
          updatedAt: T0,
        },
      ]);
      await expect(people.envOwner()).resolves.toMatchObject({ origin: 'env', email: 'owner@example.org' });
    },
  );

  test.skipIf(!engine.available)(
    'no first owner without ADMIN_PASSWORD_HASH; without CONTACT_TO, or when a person already has that address, the first owner has no email',
    async () => {
      const unset = await open({ passwordHash: undefined, contactTo: 'owner@example.org' });
      await expect(unset.people.ensureEnvOwner(T0)).resolves.toBe('unset');
      await expect(unset.people.list()).resolves.toEqual([]);

      const noMail = await open({ passwordHash: HASH, contactTo: undefined });
      await expect(noMail.people.ensureEnvOwner(T0)).resolves.toBe('created');
      await expect(noMail.people.envOwner()).resolves.toMatchObject({ email: null, role: 'owner' });

      const taken = await open();
      await taken.people.create({ email: 'owner@example.org', name: 'Added by the command', role: 'editor', origin: 'cli' }, T0);
      await expect(taken.people.ensureEnvOwner(T0)).resolves.toBe('created');
      await expect(taken.people.envOwner()).resolves.toMatchObject({ email: null, role: 'owner' });
      await expect(taken.people.ensureEnvOwner(T1)).resolves.toBe('present');
      await expect(count(taken.store.sql, 'admin_users')).resolves.toBe(2);
    },
  );

  test.skipIf(!engine.available)('two instances starting together make one first owner', async () => {
    const { url, dataDir, people } = await open();
    const again = await openAgain(url, dataDir);
    const made = await Promise.all([people.ensureEnvOwner(T0), again.ensureEnvOwner(T0), people.ensureEnvOwner(T0), again.ensureEnvOwner(T0)]);
    expect(made.toSorted()).toEqual(['created', 'present', 'present', 'present']);
    await expect(people.list()).resolves.toHaveLength(1);
  });

  test.skipIf(!engine.available || engine.name !== 'PostgreSQL')(
    'an instance that starts while another is making the first owner waits for it, then finds it (PostgreSQL)',
    async () => {
      // Without CONTACT_TO the first owner has no email: only their origin tells them apart.
      const env = { passwordHash: HASH, contactTo: undefined };
      const { store, url, dataDir, people } = await open(env);
      const again = await openAgain(url, dataDir, env);
      let second: Promise<string> | undefined;
      await store.sql.transaction(async (tx) => {
        await expect(people.within(tx).ensureEnvOwner(T0)).resolves.toBe('created');
        second = again.ensureEnvOwner(T0);
        await expect(waitsOrSettles(store.sql, second)).resolves.toBe('waiting');
      });
      await expect(second).resolves.toBe('present');
      await expect(people.list()).resolves.toHaveLength(1);
    },
  );

  test.skipIf(engine.name !== 'PostgreSQL' || !engine.available)(
    'an instance starting while the first owner is being removed waits for the removal, sees its tombstone, and brings nobody back',
    async () => {
      const { store, url, dataDir, people } = await open();
      await people.ensureEnvOwner(T0);
      const other = await people.create({ email: 'ada@example.org', role: 'owner', origin: 'cli' }, T0);
      if (!other.ok) throw new Error('not made');
      const first = (await people.envOwner())!;
      const again = await openAgain(url, dataDir);
      let starting: Promise<unknown> | undefined;
      await store.sql.transaction(async (tx) => {
        await expect(people.within(tx).remove(first.id, T1)).resolves.toMatchObject({ ok: true });
        starting = again.ensureEnvOwner(T1);
        await expect(waitsOrSettles(store.sql, starting)).resolves.toBe('waiting');
      });
      await expect(starting).resolves.toBe('removed');
      await expect(people.envOwner()).resolves.toBeUndefined();
    },
  );

  test.skipIf(!engine.available)('removing a person ends their sessions, passkeys, challenges and pending links in one step, and nobody else’s', async () => {
    const { store, people } = await open();
    const owner = await people.create({ email: 'owner@example.org', role: 'owner', origin: 'cli' }, T0);
    const ada = await people.create({ email: 'ada@example.org', role: 'editor', origin: 'invited' }, T0);
    if (!owner.ok || !ada.ok) throw new Error('not made');
    const [o, a] = [owner.person.id, ada.person.id];
    for (const [token, id] of [
      ['t-owner', o],
      ['t-ada-1', a],
      ['t-ada-2', a],
    ] as const) {
      await store.sql.run(
        "INSERT INTO admin_person_sessions (token_hash, user_id, stage, method, created_at, last_seen_at) VALUES (?, ?, 'full', 'password', ?, ?)",
        [token, id, T0.toISOString(), T0.toISOString()],
      );
    }
    for (const [credential, id] of [
      ['c-owner', o],
      ['c-ada', a],
    ] as const) {
      await store.sql.run(
        "INSERT INTO admin_passkeys (id, user_id, name, public_key, counter, device_type, backed_up, created_at) VALUES (?, ?, 'Laptop', 'pk', 0, 'singleDevice', 0, ?)",
        [credential, id, T0.toISOString()],
      );
    }
    await store.sql.run(
      "INSERT INTO admin_webauthn_challenges (challenge_hash, purpose, user_id, expires_at) VALUES ('ch-ada', 'register', ?, ?), ('ch-owner', 'register', ?, ?)",
      [a, T1.toISOString(), o, T1.toISOString()],
    );
    const link = (token: string, kind: string, email: string, userId: number | null, usedAt: string | null) =>
      store.sql.run('INSERT INTO admin_links (token_hash, kind, email, user_id, created_by, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
        token,
        kind,
        email,
        userId,
        'cli',
        T0.toISOString(),
        T1.toISOString(),
        usedAt,
      ]);
    await link('l-reset', 'reset', 'ada@example.org', a, null);
    await link('l-invite-again', 'invite', 'ada@example.org', null, null);
    await link('l-accepted', 'invite', 'ada@example.org', a, T0.toISOString());
    await link('l-owner', 'reset', 'owner@example.org', o, null);

    await expect(people.remove(a, T1)).resolves.toEqual({ ok: true, person: ada.person });
    await expect(people.find(a)).resolves.toBeUndefined();
    await expect(store.sql.all('SELECT token_hash FROM admin_person_sessions')).resolves.toEqual([{ token_hash: 't-owner' }]);
    await expect(store.sql.all('SELECT id FROM admin_passkeys')).resolves.toEqual([{ id: 'c-owner' }]);
    await expect(store.sql.all('SELECT challenge_hash FROM admin_webauthn_challenges')).resolves.toEqual([{ challenge_hash: 'ch-owner' }]);
    await expect(store.sql.all('SELECT token_hash, revoked_at FROM admin_links ORDER BY id')).resolves.toEqual([
      { token_hash: 'l-reset', revoked_at: T1.toISOString() },
      { token_hash: 'l-invite-again', revoked_at: T1.toISOString() },
      // A link already used stays as it was: it is history, not a way in.
      { token_hash: 'l-accepted', revoked_at: null },
      { token_hash: 'l-owner', revoked_at: null },
    ]);
    await expect(people.remove(a, T1)).resolves.toEqual({ ok: false, reason: 'not-found' });
  });

  test.skipIf(!engine.available)(
    'removing the first owner also ends the password’s own sessions, and keeps them from coming back until the password changes',
    async () => {
      const { store, people } = await open();
      await people.ensureEnvOwner(T0);
      await people.create({ email: 'grace@example.org', role: 'owner', origin: 'cli' }, T0);
      await store.sql.run('INSERT INTO admin_sessions (token_hash, created_at, last_seen_at) VALUES (?, ?, ?)', ['legacy', T0.toISOString(), T0.toISOString()]);
      const env = await people.envOwner();
      await expect(people.remove(env!.id, T1)).resolves.toMatchObject({ ok: true, person: { origin: 'env' } });
      await expect(count(store.sql, 'admin_sessions')).resolves.toBe(0);
      await expect(people.ensureEnvOwner(T1)).resolves.toBe('removed');
      await expect(createPeopleStore(store.sql, ENV).envOwner()).resolves.toBeUndefined();
      // A new ADMIN_PASSWORD_HASH is the operator's new decision: its owner is made again.
      await expect(createPeopleStore(store.sql, { ...ENV, passwordHash: OTHER_HASH }).ensureEnvOwner(T1)).resolves.toBe('created');
    },
  );

  test.skipIf(!engine.available)('inside a caller’s transaction, a person made or removed is kept only if the whole transaction is', async () => {
    const { store, people } = await open();
    await people.ensureEnvOwner(T0);
    const ada = await people.create({ email: 'ada@example.org', role: 'editor', origin: 'cli' }, T0);
    if (!ada.ok) throw new Error('not made');
    const failing = store.sql.transaction(async (tx) => {
      await expect(people.within(tx).remove(ada.person.id, T1)).resolves.toMatchObject({ ok: true });
      await expect(people.within(tx).create({ email: 'grace@example.org', role: 'reader', origin: 'invited' }, T1)).resolves.toMatchObject({ ok: true });
      await expect(people.within(tx).find(ada.person.id)).resolves.toBeUndefined();
      throw new Error('the link was used meanwhile');
    });
    await expect(failing).rejects.toThrow('the link was used meanwhile');
    await expect(people.list()).resolves.toEqual([expect.objectContaining({ origin: 'env' }), ada.person]);
  });

  test.skipIf(!engine.available)('the last owner can be neither removed nor made an editor or a reader; with two owners, one can', async () => {
    const { store, people } = await open();
    await people.ensureEnvOwner(T0);
    const env = (await people.envOwner())!;
    const reader = await people.create({ email: 'rita@example.org', role: 'reader', origin: 'cli' }, T0);
    if (!reader.ok) throw new Error('not made');
    await store.sql.run(
      "INSERT INTO admin_person_sessions (token_hash, user_id, stage, method, created_at, last_seen_at) VALUES ('t', ?, 'full', 'password', ?, ?)",
      [env.id, T0.toISOString(), T0.toISOString()],
    );
    await expect(people.remove(env.id, T1)).resolves.toEqual({ ok: false, reason: 'last-owner' });
    await expect(people.update(env.id, { role: 'editor' }, T1)).resolves.toEqual({ ok: false, reason: 'last-owner' });
    await expect(people.update(env.id, { role: 'reader', name: 'Changed' }, T1)).resolves.toEqual({ ok: false, reason: 'last-owner' });
    // Nothing of a refused change is kept.
    await expect(people.envOwner()).resolves.toEqual(env);
    await expect(count(store.sql, 'admin_person_sessions')).resolves.toBe(1);
    // Other changes to the last owner, and removing someone else, are fine.
    await expect(people.update(env.id, { role: 'owner', name: 'Ada' }, T1)).resolves.toMatchObject({ ok: true, person: { name: 'Ada', role: 'owner' } });
    await expect(people.remove(reader.person.id, T1)).resolves.toMatchObject({ ok: true });

    const grace = await people.create({ email: 'grace@example.org', role: 'editor', origin: 'cli' }, T0);
    if (!grace.ok) throw new Error('not made');
    await expect(people.update(grace.person.id, { role: 'owner' }, T1)).resolves.toMatchObject({ ok: true });
    await expect(people.update(env.id, { role: 'editor' }, T1)).resolves.toMatchObject({ ok: true, person: { role: 'editor' } });
    await expect(people.remove(grace.person.id, T1)).resolves.toEqual({ ok: false, reason: 'last-owner' });
    await expect(owners(people)).resolves.toEqual(['grace@example.org']);
  });

  test.skipIf(!engine.available)('two owners removing or demoting each other at once on two instances: one wins, one owner is left', async () => {
    const { store, url, dataDir, people } = await open();
    const again = await openAgain(url, dataDir);
    for (const second of ['remove', 'demote'] as const) {
      await store.sql.run('DELETE FROM admin_users');
      const a = await people.create({ email: `a-${second}@example.org`, role: 'owner', origin: 'cli' }, T0);
      const b = await people.create({ email: `b-${second}@example.org`, role: 'owner', origin: 'cli' }, T0);
      if (!a.ok || !b.ok) throw new Error('not made');
      const outcomes = await Promise.all([
        people.remove(a.person.id, T1),
        second === 'remove' ? again.remove(b.person.id, T1) : again.update(b.person.id, { role: 'reader' }, T1),
      ]);
      expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(1);
      expect(outcomes.filter((outcome) => !outcome.ok)).toEqual([{ ok: false, reason: 'last-owner' }]);
      await expect(owners(people)).resolves.toHaveLength(1);
    }
  });

  test.skipIf(!engine.available || engine.name !== 'PostgreSQL')(
    'one instance removing an owner holds the other’s removal or demotion of the other owner until it commits, which then refuses it (PostgreSQL)',
    async () => {
      const { store, url, dataDir, people } = await open();
      const again = await openAgain(url, dataDir);
      for (const second of ['remove', 'demote'] as const) {
        await store.sql.run('DELETE FROM admin_users');
        const a = await people.create({ email: 'a@example.org', role: 'owner', origin: 'cli' }, T0);
        const b = await people.create({ email: 'b@example.org', role: 'owner', origin: 'cli' }, T0);
        if (!a.ok || !b.ok) throw new Error('not made');
        let other: Promise<unknown> | undefined;
        await store.sql.transaction(async (tx) => {
          await expect(people.within(tx).remove(a.person.id, T1)).resolves.toMatchObject({ ok: true });
          other = second === 'remove' ? again.remove(b.person.id, T1) : again.update(b.person.id, { role: 'reader' }, T1);
          await expect(waitsOrSettles(store.sql, other)).resolves.toBe('waiting');
        });
        await expect(other).resolves.toEqual({ ok: false, reason: 'last-owner' });
        await expect(owners(people)).resolves.toEqual(['b@example.org']);
      }
    },
  );
});
