import { existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createFileStorage, filesFolder, freeBytes, incomingFolder, type S3Settings } from '../../../packages/site-forms/src/lib/files/storage.ts';
import { createUploads, removeOrphans, removeStaleIncoming } from '../../../packages/site-forms/src/lib/files/uploads.ts';
import { defineForm } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { type ClamdServer, clamdAvailable, EICAR, startClamd } from '../../support/clamd.ts';
import { testEngines } from '../../support/stores.ts';

/**
 * The road of a post's files through `createUploads`: the disk check before the read, the scan
 * with a real clamd, what is stored and what is refused (nothing stays stored on a refusal), and
 * the housekeeping's jobs and their log lines.
 */
const folders: string[] = [];
const folder = () => {
  const made = mkdtempSync(join(tmpdir(), 'files-road-'));
  folders.push(made);
  return made;
};
afterAll(() => {
  for (const made of folders) rmSync(made, { recursive: true, force: true });
});

const SETTINGS = { maxTotalBytes: 1_000_000, diskMinFreeBytes: 0, s3: undefined, clamd: undefined };
const FORM = defineForm({
  name: 'quote',
  title: 'Quote',
  fields: [
    { name: 'cv', type: 'file', label: 'Your CV' },
    { name: 'letter', type: 'file', label: 'Cover letter' },
  ],
});
const UNAVAILABLE = {
  kind: 'failure',
  status: 503,
  error: 'Files cannot be received right now. Please try again in a few minutes.',
  headers: { 'retry-after': '60' },
};

function logged() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  /** The lines logged so far, without their time. */
  const events = () => lines.map(({ time, ...line }) => line);
  return { logger, events };
}

/** A temp file as the reader leaves it, in the incoming folder of `dataDir`. */
function received(dataDir: string, field: string, name: string, content: string) {
  const incoming = incomingFolder(dataDir);
  mkdirSync(incoming, { recursive: true });
  const path = join(incoming, crypto.randomUUID());
  writeFileSync(path, content);
  return { field, name, size: Buffer.byteLength(content), type: 'text/plain', path };
}

/** The descriptors of this process open on `path` (Linux's /proc). */
function openDescriptorsOf(path: string): string[] {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  });
}

/** The stored objects of a local storage, as `<month>/<id>`. */
function stored(dataDir: string): string[] {
  const root = filesFolder(dataDir);
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true })
    .map(String)
    .filter((path) => /^\d{4}-\d{2}\/.+/.test(path))
    .sort();
}

function post(body: FormData): Request {
  return new Request('http://localhost/api/forms/quote', { method: 'POST', body });
}

describe('reading a post, after a look at the disk', () => {
  test('a disk with fewer free bytes than UPLOAD_DISK_MIN_FREE_BYTES is a 503 before a byte of a file is written, logged with the limit', async () => {
    const dataDir = folder();
    const { logger, events } = logged();
    const uploads = createUploads({ ...SETTINGS, diskMinFreeBytes: Number.MAX_SAFE_INTEGER }, { dataDir, logger });
    const data = new FormData();
    data.append('cv', new Blob(['my cv']), 'cv.txt');
    await expect(uploads.read(post(data), FORM)).resolves.toEqual({ ok: false, failure: UNAVAILABLE });
    expect(events()).toEqual([{ level: 'warn', event: 'upload.disk_full', freeBelow: Number.MAX_SAFE_INTEGER }]);
    expect(readdirSync(incomingFolder(dataDir))).toEqual([]);
  });

  test('below UPLOAD_DISK_MIN_FREE_BYTES, a post without files to a form with a file field is read as ever (issue 39 item 17)', async () => {
    const dataDir = folder();
    const { logger, events } = logged();
    const uploads = createUploads({ ...SETTINGS, diskMinFreeBytes: Number.MAX_SAFE_INTEGER }, { dataDir, logger });
    const data = new FormData();
    data.append('name', 'Ada');
    // An input left empty: the browser still sends its part, with no name and no bytes.
    data.append('cv', new Blob([]), '');
    await expect(uploads.read(post(data), FORM)).resolves.toEqual({ ok: true, fields: { name: 'Ada' }, files: [], errors: {} });
    expect(events()).toEqual([]);
  });

  test('a disk with room enough is read with the limits of the settings', async () => {
    const dataDir = folder();
    const { logger, events } = logged();
    const uploads = createUploads({ ...SETTINGS, maxTotalBytes: 10, diskMinFreeBytes: 1024 }, { dataDir, logger });
    const small = new FormData();
    small.append('cv', new Blob(['my cv']), 'cv.txt');
    const read = await uploads.read(post(small), FORM);
    expect(read.ok && read.files.map(({ field, name, size }) => ({ field, name, size }))).toEqual([{ field: 'cv', name: 'cv.txt', size: 5 }]);
    if (read.ok) await uploads.discard(read.files);
    expect(readdirSync(incomingFolder(dataDir))).toEqual([]);
    const large = new FormData();
    large.append('cv', new Blob(['my cv, at length']), 'cv.txt');
    const refused = await uploads.read(post(large), FORM);
    expect(refused.ok || refused.failure).toEqual({ kind: 'failure', status: 413, error: 'The files are too large together; the limit is 10 B' });
    expect(events()).toEqual([]);
  });

  test('a post slower than UPLOAD_TIMEOUT_SECONDS is a 408', async () => {
    const uploads = createUploads({ ...SETTINGS, timeoutMs: 100 }, { dataDir: folder(), logger: logged().logger });
    const boundary = 'xyz';
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="cv"; filename="cv.txt"\r\n\r\nsome`));
      },
    });
    const request = new Request('http://localhost/api/forms/quote', {
      method: 'POST',
      body,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      duplex: 'half',
    } as RequestInit);
    const read = await uploads.read(request, FORM);
    expect(read.ok || read.failure.status).toBe(408);
  });

  test('an incoming folder that cannot be made is a 503, logged', async () => {
    const dataDir = folder();
    // DATA_DIR/files is a file: nothing can be made under it.
    writeFileSync(filesFolder(dataDir), 'in the way');
    const { logger, events } = logged();
    const uploads = createUploads(SETTINGS, { dataDir, logger });
    const data = new FormData();
    data.append('cv', new Blob(['my cv']), 'cv.txt');
    await expect(uploads.read(post(data), FORM)).resolves.toEqual({ ok: false, failure: UNAVAILABLE });
    expect(events()).toEqual([
      { level: 'error', event: 'upload.incoming_unusable', error: `Error: ENOTDIR: not a directory, mkdir '${incomingFolder(dataDir)}'` },
    ]);
  });

  test('the free bytes are those of the disk for an unprivileged writer, the folder made when missing', async () => {
    const where = join(folder(), 'a', 'b');
    const free = await freeBytes(where);
    expect(existsSync(where)).toBe(true);
    const stats = await statfs(where);
    // The disk is shared with other work: within a tenth of what the system says right after.
    expect(Math.abs(free - stats.bavail * stats.bsize)).toBeLessThan((stats.bavail * stats.bsize) / 10);
  });
});

describe('keeping files that need no scan', () => {
  test('each file is stored under a key of its month and recorded with its field, name, size and type', async () => {
    const dataDir = folder();
    const uploads = createUploads(SETTINGS, { dataDir, logger: logged().logger });
    const kept = await uploads.keep([received(dataDir, 'cv', 'cv.txt', 'my cv'), received(dataDir, 'letter', 'letter.txt', 'dear owner')], FORM);
    if (!kept.ok) throw new Error('not kept');
    expect(kept.records.map(({ field, name, size, type }) => ({ field, name, size, type }))).toEqual([
      { field: 'cv', name: 'cv.txt', size: 5, type: 'text/plain' },
      { field: 'letter', name: 'letter.txt', size: 10, type: 'text/plain' },
    ]);
    expect(stored(dataDir)).toEqual(kept.records.map((record) => record.storageKey).sort());
    expect(uploads.pingScanner()).toBeUndefined();
  });

  test('a storage failure half-way removes what was stored already, and is a 503 logged with where files go', async () => {
    const dataDir = folder();
    const { logger, events } = logged();
    const uploads = createUploads(SETTINGS, { dataDir, logger });
    const first = received(dataDir, 'cv', 'cv.txt', 'my cv');
    const gone = { ...received(dataDir, 'letter', 'letter.txt', 'dear owner'), path: join(incomingFolder(dataDir), 'no-such-temp-file') };
    await expect(uploads.keep([first, gone], FORM)).resolves.toEqual({ ok: false, failure: UNAVAILABLE });
    expect(stored(dataDir)).toEqual([]);
    expect(events()).toEqual([
      { level: 'error', event: 'upload.storage_failed', storage: `the folder ${filesFolder(dataDir)}`, error: expect.stringContaining('ENOENT') },
    ]);
  });

  test('an object store that takes the connection and never reads nor answers: a 503 at S3_TIMEOUT_SECONDS, its words never in the answer, the temp file let go', async () => {
    // A real TCP server that accepts and then neither reads the PUT's 4 MB nor answers: the
    // upload's writes back up, as behind a store that hangs (issue 41 item 5).
    await withHungStore(500, async (s3, sockets) => {
      const dataDir = folder();
      const { logger, events } = logged();
      const uploads = createUploads({ ...SETTINGS, s3 }, { dataDir, logger });
      const file = received(dataDir, 'cv', 'cv.txt', 'x'.repeat(4_000_000));
      await expect(uploads.keep([file], FORM)).resolves.toEqual({ ok: false, failure: UNAVAILABLE });
      expect(sockets.length).toBeGreaterThan(0);
      expect(events()).toEqual([
        { level: 'error', event: 'upload.storage_failed', storage: expect.stringContaining('forms-files'), error: expect.any(String) },
      ]);
      // No descriptor of this process holds the temp file any more; discard removes it.
      expect(openDescriptorsOf(file.path)).toEqual([]);
      await uploads.discard([file]);
      expect(existsSync(file.path)).toBe(false);
    });
  }, 30_000);

  test("a store that never answers a listing fails it at S3_TIMEOUT_SECONDS: the orphans' sweep, and the upkeep after it, are not held", async () => {
    // The housekeeping runs its jobs one after the other (review of issue 41): a listing without
    // an end would hold back every job behind it, the queues' upkeep included.
    await withHungStore(300, async (s3, sockets) => {
      const storage = createFileStorage({ dataDir: folder(), s3 });
      const listing = (async () => {
        for await (const key of storage.list(new Date())) expect(key).toBeUndefined();
      })();
      // Without the limit this waits for ever (the test's own time limit fails it).
      await expect(listing).rejects.toThrow();
      expect(sockets.length).toBeGreaterThan(0);
    });
  }, 30_000);

  test('an object that cannot be removed on unstore is logged with its key, and the others are still removed', async () => {
    const dataDir = folder();
    const { logger, events } = logged();
    const uploads = createUploads(SETTINGS, { dataDir, logger });
    const kept = await uploads.keep([received(dataDir, 'cv', 'cv.txt', 'my cv'), received(dataDir, 'letter', 'letter.txt', 'dear owner')], FORM);
    if (!kept.ok) throw new Error('not kept');
    const [stuck, other] = kept.records as [(typeof kept.records)[0], (typeof kept.records)[0]];
    // A folder where the object was: a removal of a file cannot take it.
    rmSync(join(filesFolder(dataDir), stuck.storageKey));
    mkdirSync(join(filesFolder(dataDir), stuck.storageKey, 'inside'), { recursive: true });
    await uploads.unstore([stuck, other]);
    expect(stored(dataDir)).toEqual([stuck.storageKey, `${stuck.storageKey}/inside`].sort());
    expect(events()).toEqual([{ level: 'error', event: 'upload.unstore_failed', key: stuck.storageKey, error: expect.any(String) }]);
  });

  test('discard removes the temp files of a post', async () => {
    const dataDir = folder();
    const uploads = createUploads(SETTINGS, { dataDir, logger: logged().logger });
    const files = [received(dataDir, 'cv', 'cv.txt', 'my cv'), received(dataDir, 'letter', 'letter.txt', 'dear owner')];
    await uploads.discard(files);
    expect(readdirSync(incomingFolder(dataDir))).toEqual([]);
  });

  test('a scan that fails for another reason than clamd is not taken for an outage', async () => {
    const dataDir = folder();
    const uploads = createUploads(
      { ...SETTINGS, clamd: { socket: '/nowhere' } },
      {
        dataDir,
        logger: logged().logger,
        scan: async () => {
          throw new TypeError('a bug of ours');
        },
      },
    );
    await expect(uploads.keep([received(dataDir, 'cv', 'cv.txt', 'my cv')], FORM)).rejects.toThrow('a bug of ours');
    expect(stored(dataDir)).toEqual([]);
  });
});

describe.skipIf(!clamdAvailable)('keeping files scanned by a real clamd', () => {
  let clamd: ClamdServer;
  beforeAll(async () => {
    clamd = await startClamd();
  }, 60_000);
  afterAll(async () => {
    await clamd?.stop();
  });

  test('an infected file refuses the post at its field, by its label, stores nothing, and is logged with what clamd named', async () => {
    const dataDir = folder();
    const { logger, events } = logged();
    const uploads = createUploads({ ...SETTINGS, clamd: { socket: clamd.socket } }, { dataDir, logger });
    const clean = received(dataDir, 'cv', 'cv.txt', 'my cv');
    const infected = received(dataDir, 'letter', 'letter.com', EICAR);
    await expect(uploads.keep([clean, infected], FORM, '203.0.113.9')).resolves.toEqual({
      ok: false,
      errors: { letter: ['Cover letter: this file was refused by the virus scan'] },
    });
    expect(stored(dataDir)).toEqual([]);
    expect(events()).toEqual([
      { level: 'warn', event: 'upload.infected', field: 'letter', signature: 'Eicar-Test-Signature.UNOFFICIAL', size: 68, client: '203.0.113.9' },
    ]);
    // Without a client's address, none is logged; a field the form does not name is told by its name.
    await expect(uploads.keep([{ ...infected, field: 'other' }], FORM)).resolves.toEqual({
      ok: false,
      errors: { other: ['other: this file was refused by the virus scan'] },
    });
    expect(events()[1]).toEqual({ level: 'warn', event: 'upload.infected', field: 'other', signature: 'Eicar-Test-Signature.UNOFFICIAL', size: 68 });
  });

  test('clean files are scanned and stored; the PING answers', async () => {
    const dataDir = folder();
    const uploads = createUploads({ ...SETTINGS, clamd: { socket: clamd.socket } }, { dataDir, logger: logged().logger });
    const kept = await uploads.keep([received(dataDir, 'cv', 'cv.txt', 'my cv')], FORM);
    expect(kept.ok && kept.records.map((record) => record.name)).toEqual(['cv.txt']);
    expect(stored(dataDir)).toHaveLength(1);
    await expect(uploads.pingScanner()).resolves.toBeUndefined();
  });

  test('clamd down is a 503 that stores nothing, logged once per outage, and its return is logged once', async () => {
    const dataDir = folder();
    const { logger, events } = logged();
    // The address the uploads know: nothing there at first, clamd's socket later.
    const address = join(folder(), 'clamd.sock');
    const uploads = createUploads({ ...SETTINGS, clamd: { socket: address } }, { dataDir, logger });
    const file = received(dataDir, 'cv', 'cv.txt', 'my cv');
    for (let attempt = 0; attempt < 3; attempt++) await expect(uploads.keep([file], FORM)).resolves.toEqual({ ok: false, failure: UNAVAILABLE });
    await expect(uploads.pingScanner()).rejects.toThrow('clamd cannot be reached: ENOENT');
    expect(stored(dataDir)).toEqual([]);
    expect(events()).toEqual([{ level: 'error', event: 'upload.scanner_unavailable', error: 'clamd cannot be reached: ENOENT' }]);
    symlinkSync(clamd.socket, address);
    const first = await uploads.keep([file], FORM);
    const second = await uploads.keep([file], FORM);
    expect([first.ok, second.ok]).toEqual([true, true]);
    expect(events().slice(1)).toEqual([{ level: 'info', event: 'upload.scanner_recovered' }]);
  });
});

describe('the temp files of a killed process', () => {
  test('a temp file exactly an hour old stays; older, it goes, a folder too', async () => {
    const incoming = join(folder(), 'incoming');
    mkdirSync(join(incoming, 'stale-folder'), { recursive: true });
    writeFileSync(join(incoming, 'stale-folder', 'inside'), 'x');
    writeFileSync(join(incoming, 'hour-old'), 'x');
    const seconds = 1_790_000_000;
    utimesSync(join(incoming, 'hour-old'), seconds, seconds);
    utimesSync(join(incoming, 'stale-folder'), seconds - 1, seconds - 1);
    await expect(removeStaleIncoming(incoming, new Date(seconds * 1000 + 60 * 60 * 1000))).resolves.toBe(1);
    expect(readdirSync(incoming)).toEqual(['hour-old']);
  });
});

describe('the jobs of the housekeeping', () => {
  test('three jobs, each at its pace', () => {
    const uploads = createUploads(SETTINGS, { dataDir: folder(), logger: logged().logger });
    const none = {
      sweep: async () => 0,
      recordedKeys: async () => new Set<string>(),
      anyRecorded: async () => false,
      filesOf: async () => [],
      fileById: async () => undefined,
      linkedFile: async () => undefined,
    };
    expect(uploads.jobs(none).map(({ name, everyMs }) => ({ name, everyMs }))).toEqual([
      { name: 'files.incoming', everyMs: 3_600_000 },
      { name: 'files.deleted-messages', everyMs: 300_000 },
      { name: 'files.orphans', everyMs: 86_400_000 },
    ]);
  });

  test('the temp files job logs how many it removed, and nothing when none', async () => {
    const dataDir = folder();
    const { logger, events } = logged();
    const uploads = createUploads(SETTINGS, { dataDir, logger });
    const none = {
      sweep: async () => 0,
      recordedKeys: async () => new Set<string>(),
      anyRecorded: async () => false,
      filesOf: async () => [],
      fileById: async () => undefined,
      linkedFile: async () => undefined,
    };
    const job = uploads.jobs(none).find((each) => each.name === 'files.incoming')!;
    const file = received(dataDir, 'cv', 'cv.txt', 'half a file');
    await job.run(new Date());
    expect(events()).toEqual([]);
    utimesSync(file.path, new Date(Date.now() - 2 * 60 * 60 * 1000), new Date(Date.now() - 2 * 60 * 60 * 1000));
    await job.run(new Date());
    expect(events()).toEqual([{ level: 'info', event: 'upload.stale_removed', files: 1 }]);
    expect(existsSync(file.path)).toBe(false);
  });

  describe.each(testEngines())('on $name', ({ available, open }) => {
    test.skipIf(!available)('the deleted-messages job sweeps until nothing is left, and logs the count once', async () => {
      const { store, dataDir } = await open();
      const { logger, events } = logged();
      const uploads = createUploads(SETTINGS, { dataDir, logger });
      const ids: number[] = [];
      for (const text of ['one', 'two', 'three']) {
        const kept = await uploads.keep([received(dataDir, 'cv', `${text}.txt`, text)], FORM);
        if (!kept.ok) throw new Error('not kept');
        const { id } = await store.submissions.receive({
          name: 'Ada',
          email: 'ada@example.org',
          message: text,
          held: undefined,
          form: 'quote',
          files: kept.records,
        });
        ids.push(id);
      }
      const job = uploads.jobs(store.files).find((each) => each.name === 'files.deleted-messages')!;
      await job.run(new Date());
      expect(events()).toEqual([]);
      for (const id of ids) await store.outbox.remove(id, new Date());
      // Batches of one: three sweeps, one line.
      const files = { ...store.files, sweep: (storage: Parameters<typeof store.files.sweep>[0]) => store.files.sweep(storage, 1) };
      await uploads
        .jobs(files)
        .find((each) => each.name === 'files.deleted-messages')!
        .run(new Date());
      expect(events()).toEqual([{ level: 'info', event: 'upload.files_removed', files: 3 }]);
      expect(stored(dataDir)).toEqual([]);
    });

    test.skipIf(!available)('the orphan sweep asks the store about a thousand keys at a time', async () => {
      const { store, dataDir } = await open();
      const uploads = createUploads(SETTINGS, { dataDir, logger: logged().logger });
      const kept = await uploads.keep([received(dataDir, 'cv', 'cv.txt', 'the file of a message')], FORM);
      if (!kept.ok) throw new Error('not kept');
      await store.submissions.receive({ name: 'Ada', email: 'ada@example.org', message: 'CV', held: undefined, form: 'quote', files: kept.records });
      // 1999 objects no row names, as a killed process leaves them, and the message's: 2000 keys.
      const month = join(filesFolder(dataDir), '2020-01');
      mkdirSync(month, { recursive: true });
      for (let index = 0; index < 1999; index++) writeFileSync(join(month, `orphan${String(index).padStart(16, '0')}`), 'x');
      const asked: number[] = [];
      const records = {
        anyRecorded: () => store.files.anyRecorded(),
        recordedKeys: (keys: readonly string[]) => {
          asked.push(keys.length);
          return store.files.recordedKeys(keys);
        },
      };
      const now = new Date(Date.now() + 2 * 60 * 60 * 1000);
      await expect(removeOrphans(uploads.storage, records, now)).resolves.toBe(1999);
      expect(asked).toEqual([1000, 1000]);
      expect(stored(dataDir)).toEqual([kept.records[0]!.storageKey]);
    });
  });
});

/**
 * Runs `use` against an S3 endpoint on 127.0.0.1 that accepts connections and then neither reads
 * nor answers (a store that hangs), with S3_TIMEOUT_SECONDS as `timeoutMs`; its sockets are given
 * to count them, and everything is closed after.
 */
async function withHungStore(timeoutMs: number, use: (s3: S3Settings, sockets: Socket[]) => Promise<void>): Promise<void> {
  const sockets: Socket[] = [];
  const hung = createServer((socket) => {
    socket.pause();
    sockets.push(socket);
  });
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  try {
    const endpoint = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
    await use({ endpoint, bucket: 'forms-files', region: 'us-east-1', accessKeyId: 'key', secretAccessKey: 'secret', timeoutMs }, sockets);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => hung.close(resolve));
  }
}
