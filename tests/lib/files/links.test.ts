import { describe, expect, test } from 'vitest';
import { createFileLinks } from '../../../src/lib/files/links.ts';
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
