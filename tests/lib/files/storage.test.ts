import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newFileId } from '../../../packages/site-forms/src/lib/files/files.ts';
import { createFileStorage, type FileStorage, filesFolder, newStorageKey, readStored } from '../../../packages/site-forms/src/lib/files/storage.ts';
import { type S3Server, startS3, startS3Process } from '../../support/s3.ts';

const folders: string[] = [];
const folder = () => {
  const made = mkdtempSync(join(tmpdir(), 'files-storage-'));
  folders.push(made);
  return made;
};
afterAll(() => {
  for (const made of folders) rmSync(made, { recursive: true, force: true });
});

function upload(content: string | Buffer): { file: string; size: number } {
  const file = join(folder(), 'incoming.tmp');
  writeFileSync(file, content);
  return { file, size: Buffer.byteLength(content) };
}

let s3: S3Server;
beforeAll(async () => {
  s3 = await startS3('forms-files');
}, 30_000);
afterAll(async () => {
  await s3?.stop();
});

/** Every key a listing names, in order. */
async function listed(storage: FileStorage, olderThan: Date): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of storage.list(olderThan)) keys.push(key);
  return keys.sort();
}

const kinds: Array<{ name: string; open: () => FileStorage }> = [
  { name: 'the local folder', open: () => createFileStorage({ dataDir: folder() }) },
  { name: 'an S3-compatible store (s3rver)', open: () => createFileStorage({ dataDir: folder(), s3: s3.settings }) },
];

describe.each(kinds)('file storage in $name', ({ open }) => {
  test('a file put under a key is read back byte for byte, and is gone once removed', async () => {
    const storage = open();
    const key = newStorageKey(newFileId(), new Date('2026-11-26T10:00:00Z'));
    expect(key).toMatch(/^2026-11\/[A-Za-z0-9_-]{24}$/);
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 255, 1, 2]);
    const { file, size } = upload(bytes);
    await storage.put(key, file, size, 'image/png');
    expect(await readStored(storage, key)).toEqual(bytes);
    await storage.remove(key);
    await expect(readStored(storage, key)).rejects.toThrow();
    // Removing again is no failure: the sweep repeats a removal until it succeeds.
    await expect(storage.remove(key)).resolves.toBeUndefined();
  });

  test('a key that is not one of ours (a visitor-made path) is refused before it reaches the storage', async () => {
    const storage = open();
    const { file, size } = upload('x');
    for (const key of ['../../etc/passwd', '2026-11/../../x', 'cv.pdf', '/tmp/x', '2026-11/short']) {
      await expect(storage.put(key, file, size, 'text/plain')).rejects.toThrow('not a storage key');
      await expect(storage.open(key)).rejects.toThrow('not a storage key');
    }
  });

  test('an empty storage lists nothing', async () => {
    await expect(listed(open(), new Date(Date.now() + 60_000))).resolves.toEqual([]);
  });

  test('the listing names the keys of files stored before the cutoff, and none stored after it', async () => {
    const storage = open();
    const keys = ['2026-10/AAAAAAAAAAAAAAAAAAAAAAAA', '2026-11/BBBBBBBBBBBBBBBBBBBBBBBB'];
    for (const key of keys) {
      const { file, size } = upload(key);
      await storage.put(key, file, size, 'text/plain');
    }
    const now = Date.now();
    await expect(listed(storage, new Date(now + 60_000))).resolves.toEqual(['2026-10/AAAAAAAAAAAAAAAAAAAAAAAA', '2026-11/BBBBBBBBBBBBBBBBBBBBBBBB']);
    await expect(listed(storage, new Date(now - 60_000))).resolves.toEqual([]);
    for (const key of keys) await storage.remove(key);
  });

  test("the doctor's check writes, reads and removes a probe, leaving nothing behind", async () => {
    const storage = open();
    await expect(storage.check()).resolves.toBeUndefined();
  });
});

test('the local folder keeps each file under DATA_DIR/files/<month>/<id>, nothing else', async () => {
  const dataDir = folder();
  const storage = createFileStorage({ dataDir });
  const key = newStorageKey('A'.repeat(24), new Date('2026-01-05T00:00:00Z'));
  const { file, size } = upload('hello');
  await storage.put(key, file, size, 'text/plain');
  expect(readdirSync(join(filesFolder(dataDir), '2026-01'))).toEqual(['A'.repeat(24)]);
  await storage.check();
  expect(readdirSync(filesFolder(dataDir)).sort()).toEqual(['2026-01', 'doctor']);
  expect(readdirSync(join(filesFolder(dataDir), 'doctor'))).toEqual([]);
});

test('the S3 store keeps the object in its bucket, and a store that is down fails the check naming the step', async () => {
  const storage = createFileStorage({ dataDir: folder(), s3: s3.settings });
  const key = newStorageKey(newFileId());
  const { file, size } = upload('in the bucket');
  await storage.put(key, file, size, 'text/plain');
  expect(existsSync(join(s3.directory, 'forms-files'))).toBe(true);
  const down = createFileStorage({ dataDir: folder(), s3: { ...s3.settings, endpoint: 'http://127.0.0.1:9' } });
  await expect(down.check()).rejects.toThrow(/^write: /);
  const noBucket = createFileStorage({ dataDir: folder(), s3: { ...s3.settings, bucket: 'no-such-bucket' } });
  await expect(noBucket.check()).rejects.toThrow(/^write: .*bucket/i);
});

test("the local listing goes by each file's mtime, and names nothing but our keys: not uploads under way, the doctor's probes or a stranger's file", async () => {
  const dataDir = folder();
  const storage = createFileStorage({ dataDir });
  const old = '2026-09/OOOOOOOOOOOOOOOOOOOOOOOO';
  const fresh = '2026-11/FFFFFFFFFFFFFFFFFFFFFFFF';
  for (const key of [old, fresh]) {
    const { file, size } = upload(key);
    await storage.put(key, file, size, 'text/plain');
  }
  const root = filesFolder(dataDir);
  mkdirSync(join(root, '.incoming'), { recursive: true });
  mkdirSync(join(root, 'doctor'), { recursive: true });
  mkdirSync(join(root, 'backups', '2026-09'), { recursive: true });
  const strangers = [
    join(root, '.incoming', 'IIIIIIIIIIIIIIIIIIIIIIII'),
    join(root, 'doctor', 'DDDDDDDDDDDDDDDDDDDDDDDD'),
    join(root, 'notes.txt'),
    join(root, '2026-09', 'holiday.jpg'),
    join(root, '2026-09', 'PPPPPPPPPPPPPPPPPPPPPPPP.part'),
    join(root, 'backups', '2026-09', 'BBBBBBBBBBBBBBBBBBBBBBBB'),
  ];
  const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
  for (const path of strangers) {
    writeFileSync(path, 'not a file of a message');
    utimesSync(path, twoHoursAgo, twoHoursAgo);
  }
  utimesSync(join(root, '2026-09', 'OOOOOOOOOOOOOOOOOOOOOOOO'), twoHoursAgo, twoHoursAgo);
  await expect(listed(storage, new Date(Date.now() - 60 * 60 * 1000))).resolves.toEqual([old]);
});

test('the S3 listing follows the pages of ListObjectsV2, and names nothing but our keys of a shared bucket', { timeout: 30_000 }, async () => {
  const shared = await startS3Process('shared-bucket');
  const storage = createFileStorage({ dataDir: folder(), s3: shared.settings, listPageSize: 2 });
  const ours = ['2026-07/CCCCCCCCCCCCCCCCCCCCCCCC', '2026-07/DDDDDDDDDDDDDDDDDDDDDDDD', '2026-08/EEEEEEEEEEEEEEEEEEEEEEEE'];
  for (const key of ours) {
    const { file, size } = upload(key);
    await storage.put(key, file, size, 'text/plain');
  }
  const { S3Client, PutObjectCommand } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    endpoint: shared.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  for (const Key of ['backups/site.sql', '2026-07/holiday.jpg', 'other-site/2026-07/FFFFFFFFFFFFFFFFFFFFFFFF', 'doctor/GGGGGGGGGGGGGGGGGGGGGGGG', 'zz/last']) {
    await client.send(new PutObjectCommand({ Bucket: shared.bucket, Key, Body: 'not a file of a message' }));
  }
  client.destroy();
  try {
    await expect(listed(storage, new Date(Date.now() + 60_000))).resolves.toEqual(ours);
  } finally {
    await shared.stop();
  }
});
