import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { downloadHeaders, openForDownload } from '../../../packages/site-forms/src/lib/files/delivery.ts';
import { createFileStorage, type FileStorage, filesFolder, incomingFolder, readStored } from '../../../packages/site-forms/src/lib/files/storage.ts';
import { type FakeHttpServer, startFakeHttpServer } from '../../support/fake-http.ts';
import { type S3Server, startS3, startS3Process } from '../../support/s3.ts';

/**
 * The storage at its edges: a put across file systems, the listing's cutoff to the millisecond,
 * what the doctor's check says of each step that fails (against a real HTTP server that answers
 * as an S3 store would), the words a storage is described in, and a download of a missing object.
 */
const folders: string[] = [];
const folder = (parent = tmpdir()) => {
  const made = mkdtempSync(join(parent, 'files-storage-edges-'));
  folders.push(made);
  return made;
};
afterAll(() => {
  for (const made of folders) rmSync(made, { recursive: true, force: true });
});

function upload(content: string | Buffer, parent?: string): { file: string; size: number } {
  const file = join(folder(parent), 'incoming.tmp');
  writeFileSync(file, content);
  return { file, size: Buffer.byteLength(content) };
}

async function listed(storage: FileStorage, olderThan: Date): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of storage.list(olderThan)) keys.push(key);
  return keys;
}

let s3: S3Server;
beforeAll(async () => {
  s3 = await startS3('edge-files');
}, 30_000);
afterAll(async () => {
  await s3?.stop();
});

const KEY = '2026-11/KKKKKKKKKKKKKKKKKKKKKKKK';

describe('the local folder', () => {
  test('uploads under way are written to DATA_DIR/files/.incoming', () => {
    expect(incomingFolder('/srv/forms')).toBe('/srv/forms/files/.incoming');
    expect(createFileStorage({ dataDir: '/srv/forms' }).describe).toBe('the folder /srv/forms/files');
  });

  test.skipIf(!existsSync('/dev/shm'))('a temp file on another file system is copied in whole, with no part file left', async () => {
    const dataDir = folder();
    const storage = createFileStorage({ dataDir });
    const bytes = Buffer.alloc(100_000, 'xyz');
    const { file, size } = upload(bytes, '/dev/shm');
    await storage.put(KEY, file, size, 'text/plain');
    expect((await readStored(storage, KEY)).equals(bytes)).toBe(true);
    expect(readdirSync(join(filesFolder(dataDir), '2026-11'))).toEqual(['KKKKKKKKKKKKKKKKKKKKKKKK']);
  });

  test('a put never replaces an object stored under the same key', async () => {
    const storage = createFileStorage({ dataDir: folder() });
    const first = upload('first');
    await storage.put(KEY, first.file, first.size, 'text/plain');
    const second = upload('second');
    await expect(storage.put(KEY, second.file, second.size, 'text/plain')).rejects.toMatchObject({ code: 'EEXIST' });
    expect((await readStored(storage, KEY)).toString()).toBe('first');
  });

  test('the listing skips a file that has the name of a month, and takes a cutoff to the millisecond', async () => {
    const dataDir = folder();
    const storage = createFileStorage({ dataDir });
    const { file, size } = upload('stored');
    await storage.put(KEY, file, size, 'text/plain');
    writeFileSync(join(filesFolder(dataDir), '2026-10'), 'a file, not a month');
    const seconds = 1_790_000_000;
    utimesSync(join(filesFolder(dataDir), KEY), seconds, seconds);
    await expect(listed(storage, new Date(seconds * 1000))).resolves.toEqual([]);
    await expect(listed(storage, new Date(seconds * 1000 + 1))).resolves.toEqual([KEY]);
  });

  test('a storage folder that is not a folder fails the listing rather than listing nothing', async () => {
    const dataDir = folder();
    writeFileSync(filesFolder(dataDir), 'in the way');
    await expect(listed(createFileStorage({ dataDir }), new Date())).rejects.toMatchObject({ code: 'ENOTDIR' });
  });
});

describe('an S3-compatible store', () => {
  test('it is described by its bucket and endpoint, never by credentials in the URL', () => {
    expect(createFileStorage({ dataDir: folder(), s3: s3.settings }).describe).toBe(`the bucket edge-files at ${s3.endpoint}`);
    const withSecret = { ...s3.settings, endpoint: 'https://key:secret@s3.example.org:9000/some/path' };
    expect(createFileStorage({ dataDir: folder(), s3: withSecret }).describe).toBe('the bucket edge-files at https://s3.example.org:9000');
    expect(createFileStorage({ dataDir: folder(), s3: { ...s3.settings, endpoint: 'not a url' } }).describe).toBe(
      'the bucket edge-files at the configured endpoint',
    );
  });

  test('the listing takes a cutoff to the millisecond', async () => {
    const storage = createFileStorage({ dataDir: folder(), s3: s3.settings });
    const { file, size } = upload('stored');
    await storage.put(KEY, file, size, 'text/plain');
    const { S3Client, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    const page = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
    client.destroy();
    const modified = page.Contents!.find((object) => object.Key === KEY)!.LastModified!;
    try {
      await expect(listed(storage, modified)).resolves.toEqual([]);
      await expect(listed(storage, new Date(modified.getTime() + 1))).resolves.toEqual([KEY]);
    } finally {
      await storage.remove(KEY);
    }
  });

  test('a store reached by "localhost" is still addressed by path', async () => {
    const storage = createFileStorage({ dataDir: folder(), s3: { ...s3.settings, endpoint: s3.endpoint.replace('127.0.0.1', 'localhost') } });
    await expect(storage.check()).resolves.toBeUndefined();
  });

  test('without keys in the settings, the SDK finds its own (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY); a key alone is not used', async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
    process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
    try {
      const storage = createFileStorage({ dataDir: folder(), s3: { ...s3.settings, accessKeyId: 'S3RVER', secretAccessKey: undefined } });
      await expect(storage.check()).resolves.toBeUndefined();
    } finally {
      for (const [name, value] of [
        ['AWS_ACCESS_KEY_ID', saved.id],
        ['AWS_SECRET_ACCESS_KEY', saved.secret],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  test('a listing of several pages names each key once', { timeout: 30_000 }, async () => {
    const server = await startS3Process('paged-files');
    try {
      const storage = createFileStorage({ dataDir: folder(), s3: server.settings, listPageSize: 3 });
      const keys = [
        '2026-07/AAAAAAAAAAAAAAAAAAAAAAAA',
        '2026-07/BBBBBBBBBBBBBBBBBBBBBBBB',
        '2026-07/CCCCCCCCCCCCCCCCCCCCCCCC',
        '2026-08/DDDDDDDDDDDDDDDDDDDDDDDD',
      ];
      for (const key of keys) {
        const { file, size } = upload(key);
        await storage.put(key, file, size, 'text/plain');
      }
      await expect(listed(storage, new Date(Date.now() + 60_000))).resolves.toEqual(keys);
    } finally {
      await server.stop();
    }
  });

  test('a missing object is no download; the local folder says the same', async () => {
    await expect(openForDownload(createFileStorage({ dataDir: folder(), s3: s3.settings }), KEY)).resolves.toBeUndefined();
    await expect(openForDownload(createFileStorage({ dataDir: folder() }), KEY)).resolves.toBeUndefined();
  });
});

/** An S3 error document, as a store sends it. */
const s3Error = (code: string, message: string) => `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;

describe("the doctor's check and a download, against a store that answers each step its own way", () => {
  let store: FakeHttpServer;
  /** What the fake store answers to each method; a PUT is taken by default. */
  let answers: Record<string, { status: number; body: string; type?: string }>;
  beforeAll(async () => {
    store = await startFakeHttpServer((request, res) => {
      const answer = answers[request.method] ?? { status: 200, body: '' };
      res.writeHead(answer.status, { 'content-type': answer.type ?? 'application/xml' });
      res.end(answer.body);
    });
  });
  afterAll(async () => {
    await store?.close();
  });
  const storage = () =>
    createFileStorage({ dataDir: folder(), s3: { endpoint: store.url, bucket: 'probe', region: 'us-east-1', accessKeyId: 'a', secretAccessKey: 'b' } });
  const PROBE = 'site-forms storage check\n';

  test('a read refused is told by the step and the store error, and nothing else is tried', async () => {
    answers = { GET: { status: 403, body: s3Error('AccessDenied', 'Access Denied') } };
    const before = store.requests.length;
    await expect(storage().check()).rejects.toThrow(new Error('read: AccessDenied: Access Denied'));
    expect(store.requests.slice(before).map((request) => request.method)).toEqual(['PUT', 'GET']);
  });

  test('bytes read back that differ from those written fail the check at the read', async () => {
    answers = { GET: { status: 200, body: 'something else\n', type: 'text/plain' } };
    await expect(storage().check()).rejects.toThrow(new Error('read: the object read back differs from the one written'));
  });

  test('a removal refused is told by its step', async () => {
    answers = { GET: { status: 200, body: PROBE, type: 'text/plain' }, DELETE: { status: 403, body: s3Error('AccessDenied', 'Access Denied') } };
    const before = store.requests.length;
    await expect(storage().check()).rejects.toThrow(new Error('remove: AccessDenied: Access Denied'));
    const methods = store.requests.slice(before).map((request) => request.method);
    expect(methods).toEqual(['PUT', 'GET', 'DELETE']);
    // The probe was written as text, its bytes as they are: no checksum framing a store might keep as bytes.
    const put = store.requests.at(-3)!;
    expect([put.headers['content-type'], put.body]).toEqual(['text/plain', PROBE]);
  });

  test('a write that cannot reach the store is told by its step and the error, with no name added to a plain Error', async () => {
    const down = createFileStorage({
      dataDir: folder(),
      s3: { endpoint: 'http://127.0.0.1:9', bucket: 'probe', region: 'us-east-1', accessKeyId: 'a', secretAccessKey: 'b' },
    });
    await expect(down.check()).rejects.toThrow(/^write: [a-z]/);
  });

  test("a download of an object the store says is not there (404 without a body) is no download; a refusal is an error without the store's words", async () => {
    answers = { GET: { status: 404, body: '' } };
    await expect(openForDownload(storage(), KEY)).resolves.toBeUndefined();
    answers = { GET: { status: 403, body: s3Error('AccessDenied', 'Secret words of the provider') } };
    await expect(openForDownload(storage(), KEY)).rejects.toThrow(new Error('the storage could not open a file (AccessDenied)'));
  });

  test('a failure with neither a code nor a name is still told without its words', async () => {
    await expect(
      openForDownload(
        {
          open: () => Promise.reject('provider text'),
        },
        KEY,
      ),
    ).rejects.toThrow(new Error('the storage could not open a file (no code)'));
  });
});

test('the headers of a download: bytes to save, never sniffed, cached or run', () => {
  expect(downloadHeaders({ name: 'plan.pdf', size: 1234 })).toEqual({
    'content-type': 'application/octet-stream',
    'content-disposition': `attachment; filename="plan.pdf"; filename*=UTF-8''plan.pdf`,
    'content-length': '1234',
    'x-content-type-options': 'nosniff',
    'cache-control': 'private, no-store',
    'content-security-policy': "default-src 'none'; sandbox",
  });
});
