import { createReadStream } from 'node:fs';
import { copyFile, link, mkdir, readdir, rename, rm, stat, statfs, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';

/**
 * Where the files of messages are kept: the local folder `DATA_DIR/files/` or an S3-compatible
 * object store. Keys are ours (`newStorageKey`), never a visitor's file name.
 */
export type FileStorage = {
  /** Stores the file at the local path `file` under `key`; the caller removes its temp file afterwards. */
  put(key: string, file: string, size: number, type: string): Promise<void>;
  /** The stored bytes of `key`, as a stream; rejects when there is no such object. */
  open(key: string): Promise<Readable>;
  /** Removes `key`; an object already gone is no failure (removal is repeated until it succeeds). */
  remove(key: string): Promise<void>;
  /**
   * The keys of message files stored before `olderThan`, read page by page (the orphan sweep's).
   * Hint: only keys of our shape are named: a shared bucket's other objects, the doctor's probes
   * and the uploads under way (`.incoming`) are never listed, so never removed.
   */
  list(olderThan: Date): AsyncIterable<string>;
  /** Writes, reads back and removes a small object, rejecting with what failed (`npm run doctor`). */
  check(): Promise<void>;
  /** Where files go, in words for the log and the doctor (no secret). */
  readonly describe: string;
};

/** An S3-compatible object store (S3_*): path-style addressing, as MinIO, Garage and SeaweedFS want. */
export type S3Settings = {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
  /** How long a write (a put, a removal) or a page of a listing may take, retries included, before it fails (S3_TIMEOUT_SECONDS); none when undefined. */
  timeoutMs?: number | undefined;
};

/** Where the files go: the local folder under `dataDir`, or the object store when `s3` is set; `listPageSize` (S3's 1000 by default) is smaller only in tests of the paging. */
export type FileStorageSettings = { dataDir: string; s3?: S3Settings | undefined; listPageSize?: number | undefined };

/** The folder of a local storage and of the temp files of uploads under way (`.incoming`). */
export function filesFolder(dataDir: string): string {
  return join(dataDir, 'files');
}

/** The folder where uploads under way are written before they are accepted: same file system as the local storage, so a put is a link. */
export function incomingFolder(dataDir: string): string {
  return join(filesFolder(dataDir), '.incoming');
}

// The keys of message files, a month folder and a random id (`2026-11/Ab3…`): the only ones a listing names.
const FILE_KEY = /^[0-9]{4}-[0-9]{2}\/[A-Za-z0-9_-]{16,64}$/;
// Our keys only (those and the doctor's probes): a key that is not one is refused before it reaches a path.
const KEY = new RegExp(`${FILE_KEY.source}|^doctor\\/[A-Za-z0-9_-]{16,64}$`);
const MONTH = /^[0-9]{4}-[0-9]{2}$/;

/** A storage key for a new file: its month and its (random, unguessable) id. */
export function newStorageKey(id: string, now = new Date()): string {
  return `${now.toISOString().slice(0, 7)}/${id}`;
}

/** Opens the storage the settings name; the AWS SDK is loaded only when S3 is configured, at the first use. */
export function createFileStorage(settings: FileStorageSettings): FileStorage {
  return settings.s3 ? s3Storage(settings.s3, settings.listPageSize) : localStorage(filesFolder(settings.dataDir));
}

function requireKey(key: string): string {
  if (!KEY.test(key)) throw new Error('not a storage key');
  return key;
}

function localStorage(root: string): FileStorage {
  const pathOf = (key: string) => join(root, ...requireKey(key).split('/'));
  const storage: FileStorage = {
    describe: `the folder ${root}`,
    async put(key, file) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      try {
        // The temp file is on the same file system: a link stores it without a second copy of the bytes.
        await link(file, path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
        const part = `${path}.part`;
        await copyFile(file, part);
        await rename(part, path);
      }
    },
    async open(key) {
      const path = pathOf(key);
      const stream = createReadStream(path);
      // Rejects here when the file is not there, rather than on the first read of the answer.
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', reject);
      });
      return stream;
    },
    async remove(key) {
      await rm(pathOf(key), { force: true });
    },
    async *list(olderThan) {
      // The month folders alone: `.incoming` (uploads under way) and `doctor` are not among them.
      for (const month of await entriesOf(root)) {
        if (!month.isDirectory() || !MONTH.test(month.name)) continue;
        for (const entry of await entriesOf(join(root, month.name))) {
          const key = `${month.name}/${entry.name}`;
          if (!entry.isFile() || !FILE_KEY.test(key)) continue;
          // A stored file's mtime is its temp file's last write (a put is a link): older than the put, never younger.
          const info = await stat(join(root, month.name, entry.name)).catch(() => undefined);
          if (info && info.mtimeMs < olderThan.getTime()) yield key;
        }
      }
    },
    async check() {
      await checkRoundTrip(storage, async (key) => {
        await mkdir(dirname(pathOf(key)), { recursive: true });
        const file = join(root, `${key.replace('/', '-')}.probe`);
        await writeFile(file, PROBE);
        return file;
      });
    },
  };
  return storage;
}

/** The entries of a folder; none when it does not exist (no file was ever stored). */
async function entriesOf(folder: string) {
  try {
    return await readdir(folder, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

const PROBE = 'site-forms storage check\n';

/** The doctor's check: put a small object, read it back, remove it; each step's failure names the step. */
async function checkRoundTrip(storage: FileStorage, probeFile: (key: string) => Promise<string>): Promise<void> {
  const key = `doctor/${crypto.randomUUID().replaceAll('-', '')}`;
  const file = await probeFile(key);
  try {
    await step('write', () => storage.put(key, file, Buffer.byteLength(PROBE), 'text/plain'));
    const text = await step('read', async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of await storage.open(key)) chunks.push(Buffer.from(chunk as Buffer));
      return Buffer.concat(chunks).toString('utf8');
    });
    if (text !== PROBE) throw new Error('read: the object read back differs from the one written');
    await step('remove', () => storage.remove(key));
  } finally {
    await unlink(file).catch(() => {});
  }
}

async function step<T>(name: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const message = error instanceof Error ? (error.name === 'Error' ? error.message : `${error.name}: ${error.message}`) : String(error);
    throw new Error(`${name}: ${message.split('\n', 1)[0]}`);
  }
}

type S3Module = typeof import('@aws-sdk/client-s3');

const quiet = () => {};
const SILENT = { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet };

function s3Storage(settings: S3Settings, listPageSize = 1000): FileStorage {
  let client: Promise<{ s3: S3Module; client: InstanceType<S3Module['S3Client']> }> | undefined;
  // Loaded at the first use: a site without S3 never pays for the SDK.
  const connect = () =>
    (client ??= import('@aws-sdk/client-s3').then((s3) => ({
      s3,
      client: new s3.S3Client({
        endpoint: settings.endpoint,
        region: settings.region,
        forcePathStyle: true,
        // Checksums only where the operation needs one: the SDK's default (aws-chunked bodies with a
        // trailing checksum) is not understood by every S3-compatible store, which then keeps the framing as bytes.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        // The SDK's own words never reach the terminal: a failure is told by our log line, once (uploads.ts).
        logger: SILENT,
        ...(settings.accessKeyId &&
          settings.secretAccessKey && { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }),
      }),
    })));
  const Bucket = settings.bucket;
  // A store that accepts and never answers must not hold the visitor's post, nor its temp file (issue 39 item 18).
  const limited = () => (settings.timeoutMs === undefined ? {} : { abortSignal: AbortSignal.timeout(settings.timeoutMs) });
  const storage: FileStorage = {
    describe: `the bucket ${settings.bucket} at ${safeEndpoint(settings.endpoint)}`,
    async put(key, file, size, type) {
      const { s3, client } = await connect();
      // Read in 256 kB pieces, not 64 kB: a quarter of the reads and of the socket's writes for a large file.
      const Body = createReadStream(file, { highWaterMark: 256 * 1024 });
      try {
        await client.send(new s3.PutObjectCommand({ Bucket, Key: requireKey(key), Body, ContentLength: size, ContentType: type }), limited());
      } finally {
        // An aborted put leaves its file open otherwise.
        Body.destroy();
      }
    },
    async open(key) {
      const { s3, client } = await connect();
      const answer = await client.send(new s3.GetObjectCommand({ Bucket, Key: requireKey(key) }));
      return answer.Body as Readable;
    },
    async remove(key) {
      const { s3, client } = await connect();
      await client.send(new s3.DeleteObjectCommand({ Bucket, Key: requireKey(key) }), limited());
    },
    async *list(olderThan) {
      const { s3, client } = await connect();
      // Each page starts after the last key of the one before (keys come in order): every
      // S3-compatible store knows StartAfter, and not every one can read its own continuation token back.
      let StartAfter: string | undefined;
      do {
        // Limited too: the orphans' sweep runs among the housekeeping's jobs, one after the other,
        // and a page that never came would hold back every job behind it (the queues' upkeep).
        const page = await client.send(new s3.ListObjectsV2Command({ Bucket, MaxKeys: listPageSize, ...(StartAfter && { StartAfter }) }), limited());
        const objects = page.Contents ?? [];
        for (const object of objects) {
          if (object.Key && FILE_KEY.test(object.Key) && object.LastModified && object.LastModified < olderThan) yield object.Key;
        }
        StartAfter = page.IsTruncated ? objects.at(-1)?.Key : undefined;
      } while (StartAfter);
    },
    async check() {
      await checkRoundTrip(storage, async (key) => {
        const folder = join(tmpdir(), 'site-forms-doctor');
        await mkdir(folder, { recursive: true });
        const file = join(folder, `${key.replace('/', '-')}.probe`);
        await writeFile(file, PROBE);
        return file;
      });
    },
  };
  return storage;
}

/** The endpoint without credentials a URL might carry. */
function safeEndpoint(endpoint: string): string {
  try {
    const url = new URL(endpoint);
    return `${url.protocol}//${url.host}`;
  } catch {
    return 'the configured endpoint';
  }
}

/** The bytes free for an unprivileged writer on the file system of `folder` (made when missing). */
export async function freeBytes(folder: string): Promise<number> {
  await mkdir(folder, { recursive: true });
  const stats = await statfs(folder);
  return stats.bavail * stats.bsize;
}

/** Reads a stored object whole; for tests and small files only. */
export async function readStored(storage: FileStorage, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await storage.open(key)) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}
