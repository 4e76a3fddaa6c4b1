import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { TEST_DATABASE } from '../../support/stores.ts';

const input = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more.', honeypot: '' };
const T0 = new Date('2026-11-26T10:00:00.000Z');

let dir: string;
let db: Store;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'site-forms-outbox-'));
  db = openStore({ ...TEST_DATABASE, url: undefined, dataDir: dir }, createLogger({ level: 'silent' }));
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

test('releasing the leases makes a message being sent by a dead process claimable at once', async () => {
  const id = await db.submissions.save(input);
  const now = new Date();
  await expect(db.outbox.claim(now, new Date(now.getTime() + 120_000))).resolves.toMatchObject({ id });
  await expect(db.outbox.claim(now, new Date(now.getTime() + 120_000))).resolves.toBeUndefined();
  await expect(db.outbox.releaseLeases()).resolves.toBe(1);
  await expect(db.outbox.claim(now, new Date(now.getTime() + 120_000))).resolves.toMatchObject({ id });
});

test('a retry of a failed message answers it queued, with the message; of a missing one, not found', async () => {
  const id = await db.submissions.save(input);
  const now = new Date();
  const claimed = (await db.outbox.claim(now, new Date(now.getTime() + 120_000)))!;
  await db.outbox.markFailed(id, T0, 'EENVELOPE 550: no such user', claimed.lease);
  const retried = await db.outbox.requeue(id, new Date());
  expect(retried).toMatchObject({ found: true, from: 'failed', changed: true, submission: { id, name: 'Ada Lovelace', status: 'pending' } });
  await expect(db.outbox.requeue(id + 1, new Date())).resolves.toEqual({ found: false });
});
