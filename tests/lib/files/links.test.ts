import { createHmac } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { createFileLinks } from '../../../packages/site-forms/src/lib/files/links.ts';
import type { Sql } from '../../../packages/site-forms/src/lib/sql/sql.ts';
import { testEngines } from '../../support/stores.ts';

/** The signed, expiring download links of webhooks and chat alerts, over the store's secret on both engines. */
const T0 = new Date('2026-11-26T10:00:00.000Z');
const UNIX_T0 = 1_795_687_200;
const later = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

/** The query of a link as a request to `/api/files/<id>` carries it. */
function partsOf(link: string): { id: string; expires: string; signature: string } {
  const url = new URL(link, 'http://site.example');
  const id = /^\/api\/files\/([^/]+)$/.exec(url.pathname)![1]!;
  return { id, expires: url.searchParams.get('expires')!, signature: url.searchParams.get('signature')! };
}

describe.each(testEngines())('file links on $name', (engine) => {
  test.skipIf(!engine.available)('a link names the file, its end in unix seconds and a SHA-256 HMAC; it opens the file until then', async () => {
    const { store } = await engine.open();
    const links = createFileLinks(store.sql, { lifetimeSeconds: 3600 });
    const link = await links.sign('f7', T0);
    expect(link).toMatch(/^\/api\/files\/f7\?expires=\d+&signature=[0-9a-f]{64}$/);
    const parts = partsOf(link);
    expect(parts.expires).toBe(String(UNIX_T0 + 3600));
    await expect(links.verify(parts, later(3599))).resolves.toBe('valid');
  });

  test.skipIf(!engine.available)('an expired link is refused, though its signature is right', async () => {
    const { store } = await engine.open();
    const links = createFileLinks(store.sql, { lifetimeSeconds: 60 });
    const parts = partsOf(await links.sign('f7', T0));
    await expect(links.verify(parts, later(60))).resolves.toBe('expired');
    await expect(links.verify(parts, later(86_400))).resolves.toBe('expired');
  });

  test.skipIf(!engine.available)('an altered end, signature or file id is refused; the link of one file never opens another', async () => {
    const { store } = await engine.open();
    const links = createFileLinks(store.sql, { lifetimeSeconds: 3600 });
    const parts = partsOf(await links.sign('f7', T0));
    const other = partsOf(await links.sign('f8', T0));
    await expect(links.verify({ ...parts, expires: String(UNIX_T0 + 999_999) }, later(1))).resolves.toBe('invalid');
    const flipped = (parts.signature[0] === 'a' ? 'b' : 'a') + parts.signature.slice(1);
    await expect(links.verify({ ...parts, signature: flipped }, later(1))).resolves.toBe('invalid');
    await expect(links.verify({ ...parts, id: 'f8' }, later(1))).resolves.toBe('invalid');
    await expect(links.verify({ ...other, id: 'f7' }, later(1))).resolves.toBe('invalid');
    // Malformed parts are refused the same, never thrown.
    await expect(links.verify({ ...parts, signature: 'zz' }, later(1))).resolves.toBe('invalid');
    await expect(links.verify({ ...parts, expires: '12e9' }, later(1))).resolves.toBe('invalid');
    await expect(links.verify({ id: 'f7', expires: '', signature: '' }, later(1))).resolves.toBe('invalid');
  });

  test.skipIf(!engine.available)("the key is the store's: a second instance over the same store accepts the first one's links", async () => {
    const { store } = await engine.open();
    const first = createFileLinks(store.sql, { lifetimeSeconds: 3600 });
    const second = createFileLinks(store.sql, { lifetimeSeconds: 3600 });
    const parts = partsOf(await first.sign('f7', T0));
    await expect(second.verify(parts, later(10))).resolves.toBe('valid');
    // Another store has another key.
    const { store: elsewhere } = await engine.open();
    await expect(createFileLinks(elsewhere.sql, { lifetimeSeconds: 3600 }).verify(parts, later(10))).resolves.toBe('invalid');
  });
});

describe.each(testEngines())('the key of file links on $name', (engine) => {
  /** The HMAC-SHA256 a link of `id` ending at `expires` carries, under the key kept in the store's settings. */
  async function signatureOf(sql: Sql, id: string, expires: string): Promise<string> {
    const row = await sql.get<{ value: string }>("SELECT value FROM settings WHERE name = 'file_link_secret'");
    return createHmac('sha256', Buffer.from(row!.value, 'hex')).update(`${id}\n${expires}`).digest('hex');
  }

  test.skipIf(!engine.available)("a link's signature is the HMAC of its id and end under the 32 bytes kept in the store", async () => {
    const { store } = await engine.open();
    const links = createFileLinks(store.sql, { lifetimeSeconds: 3600 });
    const parts = partsOf(await links.sign('f7', T0));
    const row = await store.sql.get<{ value: string }>("SELECT value FROM settings WHERE name = 'file_link_secret'");
    expect(row!.value).toMatch(/^[0-9a-f]{64}$/);
    expect(parts.signature).toBe(await signatureOf(store.sql, 'f7', String(UNIX_T0 + 3600)));
  });

  test.skipIf(!engine.available)('an end that is not plain digits is refused, even signed with the right key', async () => {
    const { store } = await engine.open();
    const links = createFileLinks(store.sql, { lifetimeSeconds: 3600 });
    await links.sign('f7', T0);
    for (const expires of ['+99999999999', '99999999999e9', `${UNIX_T0 + 3600}x`]) {
      const signature = await signatureOf(store.sql, 'f7', expires);
      await expect(links.verify({ id: 'f7', expires, signature }, later(1))).resolves.toBe('invalid');
    }
  });

  test.skipIf(!engine.available)('a signature with anything before or after its 64 hex digits is refused', async () => {
    const { store } = await engine.open();
    const links = createFileLinks(store.sql, { lifetimeSeconds: 3600 });
    const parts = partsOf(await links.sign('f7', T0));
    await expect(links.verify({ ...parts, signature: `${parts.signature}00` }, later(1))).resolves.toBe('invalid');
    await expect(links.verify({ ...parts, signature: `00${parts.signature}` }, later(1))).resolves.toBe('invalid');
  });

  test.skipIf(!engine.available)('a store that fails when the key is first read fails that link; the next one reads the key again', async () => {
    const { store } = await engine.open();
    let failing = true;
    // The store as the links see it, out of reach for its first statement.
    const flaky = new Proxy(store.sql, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'run' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return (...args: unknown[]) => {
          if (failing) {
            failing = false;
            return Promise.reject(new Error('the database is away'));
          }
          return value.apply(target, args);
        };
      },
    });
    const links = createFileLinks(flaky, { lifetimeSeconds: 3600 });
    await expect(links.sign('f7', T0)).rejects.toThrow('the database is away');
    const parts = partsOf(await links.sign('f7', T0));
    await expect(links.verify(parts, later(1))).resolves.toBe('valid');
  });
});
