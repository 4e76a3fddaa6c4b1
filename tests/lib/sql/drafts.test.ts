import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { createFormDrafts, DRAFT_LIMITS, formDraftsJob } from '../../../packages/site-forms/src/lib/sql/drafts.ts';
import { openSqlite } from '../../../packages/site-forms/src/lib/sql/sqlite.ts';
import { testEngines } from '../../support/stores.ts';

/** The drafts of refused posts (decision 0133) on both engines, with a clock of the test's own. */
const T0 = new Date('2026-11-25T10:00:00.000Z');
const at = (minutes: number, seconds = 0) => new Date(T0.getTime() + minutes * 60_000 + seconds * 1000);

/** A view as the pipeline writes it: opaque text to the store, 199 bytes. */
const CONTENT = JSON.stringify({
  form: 'contact',
  status: 400,
  values: { name: 'A', email: 'ada@example.com', message: 'Ünïcode and <b>markup</b>, kept as typed.' },
  errors: { name: ['Name must be between 2 and 100 characters'] },
});
const CONTACT = { route: '/api/contact', client: '192.0.2.1' };
const ID = /^[\w-]{32}$/;

describe.each(testEngines())('form drafts on $name', (engine) => {
  test.skipIf(!engine.available)('a draft is read back as it was kept, with when, as often as the person reloads', async () => {
    const { store } = await engine.open();
    const drafts = createFormDrafts(store.sql);
    const id = await drafts.save({ ...CONTACT, content: CONTENT }, T0);
    expect(id).toMatch(ID);
    await expect(drafts.read({ id: id!, ...CONTACT }, at(1))).resolves.toEqual({ content: CONTENT, createdAt: T0 });
    await expect(drafts.read({ id: id!, ...CONTACT }, at(2))).resolves.toEqual({ content: CONTENT, createdAt: T0 });
  });

  test.skipIf(!engine.available)('expires after 30 minutes, and the housekeeping deletes it then, not before', async () => {
    const { store } = await engine.open();
    const drafts = createFormDrafts(store.sql);
    const id = (await drafts.save({ ...CONTACT, content: CONTENT }, T0))!;
    await expect(drafts.read({ id, ...CONTACT }, at(29, 59))).resolves.toMatchObject({ content: CONTENT });
    await expect(drafts.prune(at(29, 59))).resolves.toBe(0);
    await expect(drafts.read({ id, ...CONTACT }, at(30))).resolves.toBeUndefined();
    // The housekeeping's job, every quarter of an hour, is what deletes it.
    const job = formDraftsJob(drafts);
    expect([job.name, job.everyMs]).toEqual(['form-drafts', 900_000]);
    await job.run(at(30));
    expect(Number((await store.sql.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM form_drafts'))?.n)).toBe(0);
  });

  test.skipIf(!engine.available)('only the id, the route and the client that made it open a draft', async () => {
    const { store } = await engine.open();
    const drafts = createFormDrafts(store.sql);
    const id = (await drafts.save({ ...CONTACT, content: CONTENT }, T0))!;
    const other = (await drafts.save({ ...CONTACT, content: CONTENT }, T0))!;
    expect(other).not.toBe(id);
    await expect(drafts.read({ id, route: '/api/newsletter', client: CONTACT.client }, at(1))).resolves.toBeUndefined();
    await expect(drafts.read({ id, route: CONTACT.route, client: '192.0.2.2' }, at(1))).resolves.toBeUndefined();
    await expect(drafts.read({ id: `${id.slice(0, -1)}${id.endsWith('A') ? 'B' : 'A'}`, ...CONTACT }, at(1))).resolves.toBeUndefined();
    await expect(drafts.read({ id: "' OR 1=1 --", ...CONTACT }, at(1))).resolves.toBeUndefined();
  });

  test.skipIf(!engine.available)('the database keeps only hashes of the id and the client: a row gives no working address', async () => {
    const { store } = await engine.open();
    const drafts = createFormDrafts(store.sql);
    const id = (await drafts.save({ ...CONTACT, content: CONTENT }, T0))!;
    const rows = await store.sql.all<Record<string, unknown>>('SELECT * FROM form_drafts');
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(id);
    expect(JSON.stringify(rows)).not.toContain(CONTACT.client);
  });

  test.skipIf(!engine.available)('bounded: a draft over its size, or past the live drafts’ count or bytes, is not kept', async () => {
    const { store } = await engine.open();
    const small = createFormDrafts(store.sql, { ...DRAFT_LIMITS, draftBytes: 1_000, liveDrafts: 2, liveBytes: 100_000 });
    await expect(small.save({ ...CONTACT, content: 'x'.repeat(1_001) }, T0)).resolves.toBeUndefined();
    await expect(small.save({ ...CONTACT, content: 'x'.repeat(1_000) }, T0)).resolves.toMatch(ID);
    await expect(small.save({ ...CONTACT, content: CONTENT }, T0)).resolves.toMatch(ID);
    await expect(small.save({ ...CONTACT, content: CONTENT }, at(1))).resolves.toBeUndefined();
    // Expired drafts no longer count, even before the housekeeping has deleted them.
    await expect(small.save({ ...CONTACT, content: CONTENT }, at(30))).resolves.toMatch(ID);

    const bytes = createFormDrafts(store.sql, { ...DRAFT_LIMITS, liveBytes: 300 });
    await expect(bytes.save({ ...CONTACT, content: CONTENT }, at(60))).resolves.toMatch(ID);
    await expect(bytes.save({ ...CONTACT, content: CONTENT }, at(60))).resolves.toBeUndefined();
  });

  test.skipIf(!engine.available)('the live drafts’ bytes may reach their bound exactly, not pass it', async () => {
    const { store } = await engine.open();
    const drafts = createFormDrafts(store.sql, { ...DRAFT_LIMITS, liveBytes: 398 });
    await expect(drafts.save({ ...CONTACT, content: CONTENT }, T0)).resolves.toMatch(ID);
    await expect(drafts.save({ ...CONTACT, content: CONTENT }, T0)).resolves.toMatch(ID);
    await expect(drafts.save({ ...CONTACT, content: 'x' }, T0)).resolves.toBeUndefined();
  });

  test.skipIf(!engine.available)('one client’s 800 refused posts of 60 KiB keep its 10 newest drafts, and another client still gets one', async () => {
    const { store } = await engine.open();
    // The store of the attack round: 32 MiB in all; 800 posts of 60 KiB filled it from one address.
    const drafts = createFormDrafts(store.sql);
    const big = (n: number) => `${n}`.padEnd(60 * 1024, 'x');
    const ids: string[] = [];
    for (let n = 0; n < 800; n++) ids.push((await drafts.save({ ...CONTACT, content: big(n) }, at(0, n / 100)))!);
    expect(ids.every((id) => ID.test(id))).toBe(true);
    const kept = await store.sql.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM form_drafts');
    expect(Number(kept?.n)).toBe(10);
    // Its newest draft still opens; its first gave way to the later ones.
    await expect(drafts.read({ id: ids[799]!, ...CONTACT }, at(1))).resolves.toMatchObject({ content: big(799) });
    await expect(drafts.read({ id: ids[0]!, ...CONTACT }, at(1))).resolves.toBeUndefined();
    const other = { route: '/api/contact', client: '198.51.100.7' };
    const theirs = await drafts.save({ ...other, content: CONTENT }, at(1));
    expect(theirs).toMatch(ID);
    await expect(drafts.read({ id: theirs!, ...other }, at(2))).resolves.toMatchObject({ content: CONTENT });
  });

  test.skipIf(!engine.available)('a client’s drafts give way only to its own: another client’s stay', async () => {
    const { store } = await engine.open();
    const drafts = createFormDrafts(store.sql, { ...DRAFT_LIMITS, clientDrafts: 2 });
    const other = { route: '/api/contact', client: '198.51.100.7' };
    const theirs = (await drafts.save({ ...other, content: CONTENT }, T0))!;
    const first = (await drafts.save({ ...CONTACT, content: CONTENT }, at(0, 1)))!;
    const second = (await drafts.save({ ...CONTACT, content: CONTENT }, at(0, 2)))!;
    const third = (await drafts.save({ ...CONTACT, content: CONTENT }, at(0, 3)))!;
    await expect(drafts.read({ id: first, ...CONTACT }, at(1))).resolves.toBeUndefined();
    await expect(drafts.read({ id: second, ...CONTACT }, at(1))).resolves.toMatchObject({ content: CONTENT });
    await expect(drafts.read({ id: third, ...CONTACT }, at(1))).resolves.toMatchObject({ content: CONTENT });
    await expect(drafts.read({ id: theirs, ...other }, at(1))).resolves.toMatchObject({ content: CONTENT });
  });

  test.skipIf(!engine.available)('by default a draft may hold 96 KiB (a body of 64 KiB and its errors), not a byte more', async () => {
    const { store } = await engine.open();
    const drafts = createFormDrafts(store.sql);
    await expect(drafts.save({ ...CONTACT, content: 'x'.repeat(98_305) }, T0)).resolves.toBeUndefined();
    await expect(drafts.save({ ...CONTACT, content: 'x'.repeat(98_304) }, T0)).resolves.toMatch(ID);
  });

  test.skipIf(!engine.available)('by default the live drafts hold 32 MiB at most, reached exactly, from many clients', async () => {
    const { store } = await engine.open();
    const drafts = createFormDrafts(store.sql);
    // 341 full drafts of 96 KiB and one of 32 KiB make 32 MiB; each from its own client, who keeps 10.
    for (let n = 0; n < 341; n++) await expect(drafts.save({ ...CONTACT, client: `client-${n}`, content: 'x'.repeat(98_304) }, T0)).resolves.toMatch(ID);
    await expect(drafts.save({ ...CONTACT, client: 'client-341', content: 'x'.repeat(32_768) }, T0)).resolves.toMatch(ID);
    await expect(drafts.save({ ...CONTACT, client: 'client-342', content: 'x' }, T0)).resolves.toBeUndefined();
  });

  test.skipIf(!engine.available)(
    'by default 5,000 drafts are live at most, from many clients',
    async () => {
      const { store } = await engine.open();
      const drafts = createFormDrafts(store.sql);
      for (let n = 0; n < 5_000; n++) await drafts.save({ ...CONTACT, client: `client-${n}`, content: 'x' }, T0);
      const kept = await store.sql.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM form_drafts');
      expect(Number(kept?.n)).toBe(5_000);
      await expect(drafts.save({ ...CONTACT, client: 'client-5000', content: 'x' }, T0)).resolves.toBeUndefined();
    },
    60_000,
  );
});

describe('a draft’s id that save could not have made', () => {
  test('is not looked up: only an id of 32 letters, digits, - and _ asks the database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'site-forms-drafts-'));
    const sql = openSqlite(dir, { lockTimeoutMs: 1_000 });
    // Closed: a lookup fails, so an answer shows that none was made.
    await sql.close();
    const drafts = createFormDrafts(sql);
    try {
      const read = (id: string) => drafts.read({ id, ...CONTACT }, T0);
      await expect(read('AZaz09_-'.repeat(4))).rejects.toThrow('database is not open');
      for (const id of [
        '',
        'A'.repeat(31),
        'A'.repeat(33),
        `+${'A'.repeat(32)}`,
        `${'A'.repeat(32)}+`,
        `${'A'.repeat(31)}=`,
        `/${'A'.repeat(31)}`,
        `${'A'.repeat(16)} ${'A'.repeat(15)}`,
      ]) {
        await expect(read(id), id).resolves.toBeUndefined();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
