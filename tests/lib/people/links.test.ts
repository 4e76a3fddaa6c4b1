/**
 * Invitations and reset links (issue 42, people/links.ts) on both engines: only the token's
 * SHA-256 is stored, an invitation lives 72 hours and a reset link one, a link is used once even by
 * two accepts at the same moment on two instances, a newer link to an address revokes the older,
 * and accepting an invitation makes the person in the same transaction.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createLinks, type Links } from '../../../packages/site-forms/src/lib/people/links.ts';
import { createPeopleStore, type EnvOwner } from '../../../packages/site-forms/src/lib/people/store.ts';
import type { Sql } from '../../../packages/site-forms/src/lib/sql/sql.ts';
import { TEST_DATABASE, testEngines } from '../../support/stores.ts';

const T0 = new Date('2030-01-01T10:00:00.000Z');
const ENV: EnvOwner = { passwordHash: undefined, contactTo: undefined };
const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g';
const at = (ms: number) => new Date(T0.getTime() + ms);
const HOUR = 60 * 60 * 1000;

const count = async (sql: Sql, table: string) => Number((await sql.get<{ n: number | string }>(`SELECT count(*) AS n FROM ${table}`))!.n);

describe.each(testEngines())('invitations and reset links on $name', (engine) => {
  const others: Store[] = [];
  afterEach(async () => {
    for (const store of others.splice(0)) await store.close();
  });
  const open = async () => {
    const { store, url, dataDir } = await engine.open();
    return { sql: store.sql, url, dataDir, links: createLinks(store.sql, ENV), people: createPeopleStore(store.sql, ENV) };
  };
  const openAgain = async (url: string | undefined, dataDir: string): Promise<Links> => {
    const store = openStore({ ...TEST_DATABASE, url, dataDir }, createLogger({ level: 'silent' }));
    await store.ready;
    others.push(store);
    return createLinks(store.sql, ENV);
  };
  const invite = async (links: Links, email = 'Eddie@Example.org', now = T0) => {
    const made = await links.invite({ email, role: 'editor', forms: ['quote', 'newsletter'], createdBy: 'person:1' }, now);
    if (!('token' in made)) throw new Error('not invited');
    return made;
  };

  test.skipIf(!engine.available)('only the SHA-256 of the token is stored, and the token reads sfl_ and 43 characters', async () => {
    const { sql, links } = await open();
    const { token, link } = await invite(links);
    expect(token).toMatch(/^sfl_[A-Za-z0-9_-]{43}$/);
    expect(link).toMatchObject({ kind: 'invite', email: 'eddie@example.org', role: 'editor', forms: ['quote', 'newsletter'], createdBy: 'person:1' });
    const rows = await sql.all<Record<string, unknown>>('SELECT * FROM admin_links');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(token.slice(4));
  });

  test.skipIf(!engine.available)('an invitation is open for 72 hours, not a millisecond more', async () => {
    const { links } = await open();
    const { token } = await invite(links);
    expect(await links.peek(token, at(72 * HOUR - 1))).toMatchObject({ email: 'eddie@example.org' });
    expect(await links.peek(token, at(72 * HOUR))).toBeUndefined();
    expect(await links.accept(token, { name: 'Eddie', passwordHash: HASH }, at(72 * HOUR))).toEqual({ ok: false, reason: 'invalid' });
    expect(await links.accept(token, { name: 'Eddie', passwordHash: HASH }, at(72 * HOUR - 1))).toMatchObject({ ok: true, kind: 'invite' });
  });

  test.skipIf(!engine.available)('a reset link is open for one hour and sets the password of its person', async () => {
    const { links, people } = await open();
    const made = await people.create({ email: 'rita@example.org', name: 'Rita', role: 'reader', origin: 'cli' }, T0);
    if (!made.ok) throw new Error('not made');
    const first = await links.reset(made.person, 'person:1', T0);
    expect(first!.link).toMatchObject({ kind: 'reset', email: 'rita@example.org', userId: made.person.id });
    expect(await links.accept(first!.token, { passwordHash: HASH }, at(HOUR))).toEqual({ ok: false, reason: 'invalid' });
    const second = await links.reset(made.person, 'person:1', T0);
    const accepted = await links.accept(second!.token, { passwordHash: HASH }, at(HOUR - 1));
    expect(accepted).toMatchObject({ ok: true, kind: 'reset', person: { id: made.person.id, passwordHash: HASH } });
    expect(await links.reset({ id: 9, email: null }, 'cli', T0)).toBeUndefined();
  });

  test.skipIf(!engine.available)('GET reads a link without using it; accepting uses it once and makes the person in the same transaction', async () => {
    const { sql, links, people } = await open();
    const { token } = await invite(links);
    expect(await links.peek(token, T0)).toBeDefined();
    expect(await links.peek(token, T0)).toBeDefined();
    const accepted = await links.accept(token, { name: 'Eddie', passwordHash: HASH }, at(1000));
    expect(accepted).toMatchObject({
      ok: true,
      kind: 'invite',
      person: { email: 'eddie@example.org', name: 'Eddie', role: 'editor', forms: ['quote', 'newsletter'], origin: 'invited' },
    });
    expect(await links.accept(token, { name: 'Eve', passwordHash: HASH }, at(2000))).toEqual({ ok: false, reason: 'invalid' });
    expect(await links.peek(token, at(2000))).toBeUndefined();
    expect((await people.list()).map((person) => person.name)).toEqual(['Eddie']);
    expect(await count(sql, 'admin_users')).toBe(1);
  });

  test.skipIf(!engine.available)('an invitation whose address someone took meanwhile makes nobody and stays unused', async () => {
    const { sql, links, people } = await open();
    const { token } = await invite(links);
    await people.create({ email: 'eddie@example.org', role: 'reader', origin: 'cli' }, T0);
    expect(await links.accept(token, { name: 'Eddie', passwordHash: HASH }, at(1000))).toEqual({ ok: false, reason: 'email-taken' });
    expect(await count(sql, 'admin_users')).toBe(1);
    const row = await sql.get<{ used_at: string | null }>('SELECT used_at FROM admin_links');
    expect(row!.used_at).toBeNull();
    expect(await links.invite({ email: 'EDDIE@example.org', role: 'reader', createdBy: 'cli' }, T0)).toEqual({ reason: 'email-taken' });
  });

  test.skipIf(!engine.available)('a newer link to the same address revokes the older one', async () => {
    const { links } = await open();
    const older = await invite(links, 'eddie@example.org');
    const other = await invite(links, 'rita@example.org');
    const newer = await invite(links, 'Eddie@example.org', at(1000));
    expect(await links.peek(older.token, at(2000))).toBeUndefined();
    expect(await links.accept(older.token, { name: 'Eddie', passwordHash: HASH }, at(2000))).toEqual({ ok: false, reason: 'invalid' });
    expect(await links.peek(other.token, at(2000))).toBeDefined();
    expect((await links.open(at(2000))).map((link) => link.id)).toEqual([other.link.id, newer.link.id]);
    expect(await links.accept(newer.token, { name: 'Eddie', passwordHash: HASH }, at(2000))).toMatchObject({ ok: true });
  });

  test.skipIf(!engine.available)('a revoked link is refused like an unknown one', async () => {
    const { links } = await open();
    const { token, link } = await invite(links);
    expect(await links.revoke(link.id, T0)).toBe(true);
    expect(await links.revoke(link.id, T0)).toBe(false);
    expect(await links.accept(token, { name: 'Eddie', passwordHash: HASH }, T0)).toEqual({ ok: false, reason: 'invalid' });
    expect(await links.accept(`sfl_${'A'.repeat(43)}`, { name: 'Eddie', passwordHash: HASH }, T0)).toEqual({ ok: false, reason: 'invalid' });
    expect(await links.accept('not a token', { name: 'Eddie', passwordHash: HASH }, T0)).toEqual({ ok: false, reason: 'invalid' });
  });

  test.skipIf(!engine.available)('two accepts of one link at the same moment on two instances: one wins, one person is made', async () => {
    const { sql, url, dataDir, links } = await open();
    const again = await openAgain(url, dataDir);
    for (let round = 0; round < 5; round += 1) {
      const { token } = await invite(links, `person${round}@example.org`);
      const results = await Promise.all([
        links.accept(token, { name: 'A', passwordHash: HASH }, at(1000)),
        again.accept(token, { name: 'B', passwordHash: HASH }, at(1000)),
      ]);
      expect(results.filter((result) => result.ok)).toHaveLength(1);
      expect(results.filter((result) => !result.ok)).toEqual([{ ok: false, reason: 'invalid' }]);
    }
    expect(await count(sql, 'admin_users')).toBe(5);
  });
});
