import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { filesFolder, incomingFolder, readStored } from '../../../packages/site-forms/src/lib/files/storage.ts';
import { createUploads } from '../../../packages/site-forms/src/lib/files/uploads.ts';
import { defineForm } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { startS3 } from '../../support/s3.ts';
import { testEngines } from '../../support/stores.ts';

/**
 * The housekeeping's sweep of stored objects no `files` row names (a process killed between the
 * put and the message's commit, an unstore that failed): on the local folder and on an
 * S3-compatible server, with SQLite and PostgreSQL. Ages come from the clock the job is given.
 */
const FORM = defineForm({ name: 'quote', title: 'Quote', fields: [{ name: 'cv', type: 'file', label: 'CV' }] });
const HOUR = 60 * 60 * 1000;

/** A temp file as the reader leaves it, in the incoming folder of `dataDir`. */
function received(dataDir: string, name: string, content: string) {
  const incoming = incomingFolder(dataDir);
  mkdirSync(incoming, { recursive: true });
  const path = join(incoming, `${name}-${crypto.randomUUID()}`);
  writeFileSync(path, content);
  return { field: 'cv', name, size: Buffer.byteLength(content), type: 'text/plain', path };
}

/** Where the files go in one run: the local folder of the store's DATA_DIR, or a bucket of a fresh s3rver, with a way to put a stranger's object beside ours. */
const storages = [
  {
    storage: 'the local folder',
    start: async (dataDir: string) => {
      const stranger = join(filesFolder(dataDir), '2026-11', 'holiday.jpg');
      return {
        s3: undefined,
        putStranger: async () => {
          mkdirSync(join(filesFolder(dataDir), '2026-11'), { recursive: true });
          writeFileSync(stranger, 'not a file of a message');
        },
        strangerThere: async () => existsSync(stranger),
        stop: async () => {},
      };
    },
  },
  {
    storage: 'an S3-compatible store (s3rver)',
    start: async () => {
      const server = await startS3('shared-bucket');
      const { S3Client, PutObjectCommand, HeadObjectCommand } = await import('@aws-sdk/client-s3');
      const client = new S3Client({
        endpoint: server.endpoint,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      });
      return {
        s3: server.settings,
        // Another application's object in a bucket the owner shares: not of our shape, never touched.
        putStranger: async () => {
          await client.send(new PutObjectCommand({ Bucket: server.bucket, Key: 'backups/2026-11/site.sql', Body: 'not a file of a message' }));
        },
        strangerThere: async () =>
          client.send(new HeadObjectCommand({ Bucket: server.bucket, Key: 'backups/2026-11/site.sql' })).then(
            () => true,
            () => false,
          ),
        stop: async () => {
          client.destroy();
          await server.stop();
        },
      };
    },
  },
];

describe.each(testEngines())('stored objects no row names, on $name', ({ name, available, open }) => {
  describe.skipIf(!available)(name, () => {
    describe.each(storages)('in $storage', ({ start }) => {
      test("an object older than an hour with no row goes; a message's file, a younger object and a stranger's object stay", async () => {
        const { store, dataDir } = await open();
        const where = await start(dataDir);
        try {
          const logs: Array<Record<string, unknown>> = [];
          const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
          const uploads = createUploads({ maxTotalBytes: 1_000_000, diskMinFreeBytes: 0, s3: where.s3, clamd: undefined }, { dataDir, logger });
          const kept = await uploads.keep([received(dataDir, 'kept.txt', 'the file of a message')], FORM);
          if (!kept.ok) throw new Error('not kept');
          const message = await store.submissions.receive({
            name: 'Ada',
            email: 'ada@example.org',
            message: 'My CV.',
            held: undefined,
            form: 'quote',
            files: kept.records,
          });
          // Stored, then the process died before the message's transaction: no row names it.
          const orphaned = await uploads.keep([received(dataDir, 'orphan.txt', 'a file whose message was never written')], FORM);
          if (!orphaned.ok) throw new Error('not kept');
          const orphan = orphaned.records[0]!.storageKey;
          await where.putStranger();

          const job = uploads.jobs(store.files).find((each) => each.name === 'files.orphans')!;
          // Minutes after the put: its message may still be on its way to the database.
          await job.run(new Date(Date.now() + 10 * 60 * 1000));
          expect((await readStored(uploads.storage, orphan)).toString()).toBe('a file whose message was never written');

          await job.run(new Date(Date.now() + 2 * HOUR));
          await expect(readStored(uploads.storage, orphan)).rejects.toThrow();
          expect((await readStored(uploads.storage, kept.records[0]!.storageKey)).toString()).toBe('the file of a message');
          await expect(store.files.filesOf(message.id)).resolves.toHaveLength(1);
          await expect(where.strangerThere()).resolves.toBe(true);

          const lines = logs.filter((line) => line.event === 'upload.orphans_removed');
          expect(lines.map(({ time, ...line }) => line)).toEqual([{ level: 'info', event: 'upload.orphans_removed', files: 1 }]);
          expect(JSON.stringify(logs)).not.toContain(orphan.split('/')[1]!);

          // Nothing left to remove: no second line.
          await job.run(new Date(Date.now() + 3 * HOUR));
          expect(logs.filter((line) => line.event === 'upload.orphans_removed')).toHaveLength(1);
        } finally {
          await where.stop();
        }
      });

      test('a database with no file recorded at all (a wrong DATABASE_URL, a copy not yet made) removes nothing', async () => {
        const { store, dataDir } = await open();
        const where = await start(dataDir);
        try {
          const uploads = createUploads(
            { maxTotalBytes: 1_000_000, diskMinFreeBytes: 0, s3: where.s3, clamd: undefined },
            { dataDir, logger: createLogger({ level: 'silent' }) },
          );
          const stored = await uploads.keep([received(dataDir, 'old.txt', 'a file of a message in another database')], FORM);
          if (!stored.ok) throw new Error('not kept');
          const job = uploads.jobs(store.files).find((each) => each.name === 'files.orphans')!;
          await job.run(new Date(Date.now() + 2 * HOUR));
          expect((await readStored(uploads.storage, stored.records[0]!.storageKey)).toString()).toBe('a file of a message in another database');
        } finally {
          await where.stop();
        }
      });
    });
  });
});
