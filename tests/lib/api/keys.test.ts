/**
 * The API keys (issue 42, api/keys.ts) on both engines: a key is shown once and only its prefix and
 * hash are kept; a revocation holds at once for every instance (no cache); a revoked name is free
 * again; two keys made with one name at the same moment: one is made.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import { createApiKeys } from '../../../packages/site-forms/src/lib/api/keys.ts';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { TEST_DATABASE, testEngines } from '../../support/stores.ts';

const T0 = new Date('2030-01-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

describe.each(testEngines())('the API keys on $name', (engine) => {
  const others: Store[] = [];
  afterEach(async () => {
    for (const store of others.splice(0)) await store.close();
  });
  const open = async () => {
    const { store, url, dataDir } = await engine.open();
    return { store, url, dataDir, keys: createApiKeys(store.sql) };
  };
  /** A second instance on the same database, as another process would open it. */
  const openAgain = async (url: string | undefined, dataDir: string) => {
    const store = openStore({ ...TEST_DATABASE, url, dataDir }, createLogger({ level: 'silent' }));
    await store.ready;
    others.push(store);
    return createApiKeys(store.sql);
  };

  test.skipIf(!engine.available)('a key is given once; the database keeps its prefix and the SHA-256 of the whole key, never the key', async () => {
    const { store, keys } = await open();
    const made = await keys.create({ name: 'ci-export', scope: 'read', forms: ['contact'], createdBy: 'person:1' }, T0);
    expect(made).toMatchObject({ ok: true });
    if (!made.ok) return;
    expect(made.key).toMatch(/^sfk_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/);
    const rows = await store.sql.all<Record<string, unknown>>('SELECT * FROM api_keys');
    expect(rows).toEqual([
      {
        id: expect.anything(),
        name: 'ci-export',
        prefix: made.key.slice(0, 16),
        secret_hash: createHash('sha256').update(made.key).digest('hex'),
        scope: 'read',
        forms: '["contact"]',
        created_by: 'person:1',
        created_at: T0.toISOString(),
        last_used_at: null,
        revoked_at: null,
      },
    ]);
    expect(JSON.stringify(rows)).not.toContain(made.key.slice(17));
    // And the key finds its actor.
    await expect(keys.find(made.key, T0)).resolves.toEqual({
      kind: 'key',
      id: Number(rows[0]!.id),
      name: 'ci-export',
      keyScope: 'read',
      scope: { all: false, forms: ['contact'] },
    });
    expect(await keys.list()).toEqual([
      expect.objectContaining({ name: 'ci-export', prefix: made.key.slice(0, 16), scope: 'read', forms: ['contact'], revokedAt: null }),
    ]);
  });

  test.skipIf(!engine.available)('a key with a wrong secret, an unknown prefix or a malformed text finds nothing', async () => {
    const { keys } = await open();
    const made = await keys.create({ name: 'all-forms', scope: 'write', createdBy: 'cli' }, T0);
    if (!made.ok) throw new Error('not made');
    const last = made.key.at(-1) === 'A' ? 'B' : 'A';
    await expect(keys.find(`${made.key.slice(0, -1)}${last}`, T0)).resolves.toBeUndefined();
    await expect(keys.find(`sfk_aaaaaaaaaaaa_${made.key.slice(17)}`, T0)).resolves.toBeUndefined();
    await expect(keys.find(made.key.slice(0, -1), T0)).resolves.toBeUndefined();
    await expect(keys.find(`${made.key} `, T0)).resolves.toBeUndefined();
    await expect(keys.find(made.key, T0)).resolves.toMatchObject({ name: 'all-forms', keyScope: 'write', scope: { all: true } });
  });

  test.skipIf(!engine.available)('the last use is written at most once a minute', async () => {
    const { store, keys } = await open();
    const made = await keys.create({ name: 'poller', scope: 'read', createdBy: 'cli' }, T0);
    if (!made.ok) throw new Error('not made');
    const lastUsed = async () => (await store.sql.get<{ last_used_at: string | null }>('SELECT last_used_at FROM api_keys'))!.last_used_at;
    await keys.find(made.key, at(1_000));
    expect(await lastUsed()).toBe(at(1_000).toISOString());
    await keys.find(made.key, at(60_999));
    expect(await lastUsed()).toBe(at(1_000).toISOString());
    await keys.find(made.key, at(61_000));
    expect(await lastUsed()).toBe(at(61_000).toISOString());
  });

  test.skipIf(!engine.available)('a revoked key is refused at once by another instance, and its name can be given to a new key', async () => {
    const { keys, url, dataDir } = await open();
    const elsewhere = await openAgain(url, dataDir);
    const made = await keys.create({ name: 'ci-export', scope: 'read', createdBy: 'cli' }, T0);
    if (!made.ok) throw new Error('not made');
    await expect(elsewhere.find(made.key, T0)).resolves.toMatchObject({ name: 'ci-export' });
    await expect(keys.create({ name: 'ci-export', scope: 'write', createdBy: 'cli' }, T0)).resolves.toEqual({ ok: false, reason: 'name-taken' });

    await expect(keys.revoke('ci-export', at(1))).resolves.toBe(true);
    await expect(elsewhere.find(made.key, at(2))).resolves.toBeUndefined();
    await expect(keys.revoke('ci-export', at(3))).resolves.toBe(false);

    const again = await elsewhere.create({ name: 'ci-export', scope: 'write', createdBy: 'cli' }, at(4));
    expect(again).toMatchObject({ ok: true });
    if (!again.ok) return;
    await expect(keys.find(again.key, at(5))).resolves.toMatchObject({ name: 'ci-export', keyScope: 'write' });
    await expect(keys.find(made.key, at(5))).resolves.toBeUndefined();
    expect((await keys.list()).map((key) => [key.name, key.scope, key.revokedAt?.toISOString() ?? null])).toEqual([
      ['ci-export', 'read', at(1).toISOString()],
      ['ci-export', 'write', null],
    ]);
  });

  test.skipIf(!engine.available)('two instances making a key of one name at the same moment: one is made, the other told the name is taken', async () => {
    const { keys, url, dataDir } = await open();
    const elsewhere = await openAgain(url, dataDir);
    const answers = await Promise.all([
      keys.create({ name: 'race', scope: 'read', createdBy: 'cli' }, T0),
      elsewhere.create({ name: 'race', scope: 'write', createdBy: 'cli' }, T0),
    ]);
    expect(answers.map((answer) => answer.ok).sort()).toEqual([false, true]);
    expect(answers.find((answer) => !answer.ok)).toEqual({ ok: false, reason: 'name-taken' });
    expect(await keys.list()).toHaveLength(1);
  });
});
