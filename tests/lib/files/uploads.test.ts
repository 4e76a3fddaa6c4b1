import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { createAdminQueries } from '../../../packages/site-forms/src/lib/admin/queries.ts';
import { incomingFolder } from '../../../packages/site-forms/src/lib/files/storage.ts';
import { createUploads, removeStaleIncoming } from '../../../packages/site-forms/src/lib/files/uploads.ts';
import { defineForm } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { testEngines } from '../../support/stores.ts';

const folders: string[] = [];
const folder = () => {
  const made = mkdtempSync(join(tmpdir(), 'files-uploads-'));
  folders.push(made);
  return made;
};
afterAll(() => {
  for (const made of folders) rmSync(made, { recursive: true, force: true });
});

const SETTINGS = { maxTotalBytes: 1_000_000, diskMinFreeBytes: 0, s3: undefined, clamd: undefined };
const FORM = defineForm({ name: 'quote', title: 'Quote', fields: [{ name: 'cv', type: 'file', label: 'CV' }] });
const logs: Array<Record<string, unknown>> = [];
const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });

/** A temp file as the reader leaves it, in the incoming folder of `dataDir`. */
function received(dataDir: string, name: string, content: string) {
  const incoming = incomingFolder(dataDir);
  mkdirSync(incoming, { recursive: true });
  const path = join(incoming, `${name}-0000-0000-0000-000000000000`);
  writeFileSync(path, content);
  return { field: 'cv', name, size: Buffer.byteLength(content), type: 'text/plain', path };
}

test('the housekeeping removes temp files older than an hour (a killed process), and keeps those of uploads under way', async () => {
  const dataDir = folder();
  const stale = received(dataDir, 'stale', 'half a file');
  const fresh = received(dataDir, 'fresh', 'an upload under way');
  const now = new Date();
  const twoHoursAgo = new Date(now.getTime() - 2 * 60 * 60 * 1000);
  utimesSync(stale.path, twoHoursAgo, twoHoursAgo);
  await expect(removeStaleIncoming(incomingFolder(dataDir), now)).resolves.toBe(1);
  expect([existsSync(stale.path), existsSync(fresh.path)]).toEqual([false, true]);
  await expect(removeStaleIncoming(join(dataDir, 'no-such-folder'), now)).resolves.toBe(0);
});

test('a storage that fails (an object store down) is a 503 with Retry-After, and nothing stays stored', async () => {
  const dataDir = folder();
  const uploads = createUploads(
    { ...SETTINGS, s3: { endpoint: 'http://127.0.0.1:9', bucket: 'files', region: 'us-east-1', accessKeyId: 'a', secretAccessKey: 'b' } },
    { dataDir, logger },
  );
  const kept = await uploads.keep([received(dataDir, 'cv.txt', 'Curriculum vitae')], FORM);
  expect(kept).toEqual({
    ok: false,
    failure: {
      kind: 'failure',
      status: 503,
      error: 'Files cannot be received right now. Please try again in a few minutes.',
      headers: { 'retry-after': '60' },
    },
  });
  expect(logs.filter((line) => line.event === 'upload.storage_failed')).toHaveLength(1);
});

describe.each(testEngines())('the files of messages that go, on $name', ({ name, available, open }) => {
  describe.skipIf(!available)(name, () => {
    test('deleted by the owner, past retention, held spam past its days: their stored files go with the housekeeping', async () => {
      const { store, dataDir } = await open();
      const uploads = createUploads(SETTINGS, { dataDir, logger });
      const message = async (text: string, held?: string[]) => {
        const kept = await uploads.keep([received(dataDir, `${text}.txt`, text)], FORM);
        if (!kept.ok) throw new Error('not kept');
        const { id } = await store.submissions.receive({ name: 'Ada', email: 'ada@example.org', message: text, held, form: 'quote', files: kept.records });
        return { id, key: kept.records[0]!.storageKey };
      };
      const deleted = await message('deleted');
      const old = await message('old');
      const spam = await message('spam', ['honeypot']);
      const kept = await message('kept');
      const files = join(dataDir, 'files');
      const objects = () => readdirSync(files, { recursive: true }).filter((path) => String(path).includes('/') && !String(path).startsWith('.incoming'));
      expect(objects()).toHaveLength(4);

      await store.outbox.remove(deleted.id, new Date());
      const queries = createAdminQueries(store.sql, store.messages);
      // Retention and the held-spam days, as their jobs run them: everything received before a cutoff.
      await store.sql.run('UPDATE submissions SET created_at = ? WHERE id IN (?, ?)', ['2020-01-01T00:00:00.000Z', old.id, spam.id]);
      await expect(store.spam.deleteHeldBefore('2021-01-01T00:00:00.000Z')).resolves.toBe(1);
      await expect(queries.deleteOlderThan(new Date('2021-01-01T00:00:00.000Z'))).resolves.toBe(1);

      const sweep = uploads.jobs(store.files).find((job) => job.name === 'files.deleted-messages')!;
      await sweep.run(new Date());
      expect(objects().map(String)).toEqual([kept.key]);
      await expect(store.files.filesOf(kept.id)).resolves.toHaveLength(1);
      for (const gone of [deleted, old, spam]) await expect(store.files.filesOf(gone.id)).resolves.toEqual([]);
    });
  });
});
