import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createServices, type Services } from '../../../packages/site-forms/src/lib/app/services.ts';
import { requireConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { type Reply, runPipeline } from '../../../packages/site-forms/src/lib/pipeline/pipeline.ts';
import { findTarget } from '../../../packages/site-forms/src/lib/pipeline/routes.ts';

/**
 * A file's signed link (`/api/files/<id>`) through the pipeline in process: the real services over
 * SQLite and the file folder in a temporary DATA_DIR, a message with its file kept as the uploads keep it.
 */
let services: Services;
let dataDir: string;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'file-link-'));
  services = createServices(requireConfig({ DATA_DIR: dataDir }), createLogger({ level: 'error', write: () => {} }));
});

afterEach(async () => {
  await services.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const FILE_ID = 'AbCdEfGhIjKlMnOpQrStUvWx';
const MISSING_ID = 'ZyXwVuTsRqPoNmLkJiHgFeDc';

/** Keeps a message with one file whose row names `storageKey`; its bytes are stored only when `bytes` is given. */
async function keepFile(storageKey: string, bytes?: string): Promise<void> {
  if (bytes !== undefined) {
    const upload = join(dataDir, 'upload.tmp');
    writeFileSync(upload, bytes);
    await services.files.storage.put(storageKey, upload, bytes.length, 'text/plain');
  }
  await services.store.submissions.receive({
    name: 'Ada',
    email: 'ada@example.org',
    message: 'The drawing of the part.',
    held: undefined,
    form: 'quote',
    files: [{ id: FILE_ID, field: 'drawing', name: 'part.txt', size: 11, type: 'text/plain', storageKey }],
  });
}

function get(path: string): Promise<Reply> {
  const target = findTarget(new URL(path, 'http://site.test').pathname);
  if (target.kind === 'elsewhere') throw new Error(`not a pipeline path: ${path}`);
  return runPipeline({ request: new Request(`http://site.test${path}`, { headers: { host: 'site.test' } }), target, socketAddress: '192.0.2.1', services });
}

async function text(stream: AsyncIterable<Uint8Array> | undefined): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream ?? []) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const REFUSED = { kind: 'answer', status: 403, body: '{"success":false,"error":"This download link has expired or is not valid."}' };
const NOT_FOUND = { kind: 'answer', status: 404, body: '{"success":false,"error":"Not found"}' };

describe('which paths are a file’s link', () => {
  test('/api/files/ and an id of 16 to 64 letters, digits, - or _ is the link’s route; anything else under /api is a near miss', () => {
    expect(findTarget(`/api/files/${FILE_ID}`)).toMatchObject({ kind: 'route', route: { path: '/api/files/', kind: 'api' } });
    expect(findTarget(`/api/files/${'a'.repeat(64)}`)).toMatchObject({ kind: 'route', route: { path: '/api/files/' } });
    expect(findTarget('/api/files/short')).toEqual({ kind: 'near-miss', path: '/api/files/short' });
    expect(findTarget(`/api/files/${'a'.repeat(65)}`)).toEqual({ kind: 'near-miss', path: `/api/files/${'a'.repeat(65)}` });
    // Eleven characters, then an id: only under /api/files/ is it a file's.
    expect(findTarget(`/downloads/${FILE_ID}`)).toEqual({ kind: 'elsewhere' });
  });
});

describe('a file’s signed link', () => {
  test('a valid link answers the file’s bytes as an attachment', async () => {
    await keepFile('2026-11/aaaaaaaaaaaaaaaaaaaaaaaa', 'hello world');
    const reply = await get(await services.files.links.sign(FILE_ID));
    expect(reply).toMatchObject({
      kind: 'answer',
      status: 200,
      body: null,
      headers: {
        'content-type': 'application/octet-stream',
        'content-disposition': `attachment; filename="part.txt"; filename*=UTF-8''part.txt`,
        'content-length': '11',
      },
    });
    expect(await text((reply as { stream?: AsyncIterable<Uint8Array> }).stream)).toBe('hello world');
  });

  test('a link without its expiry or its signature, or with another file’s signature, is refused alike', async () => {
    await keepFile('2026-11/aaaaaaaaaaaaaaaaaaaaaaaa', 'hello world');
    const link = new URL(await services.files.links.sign(FILE_ID), 'http://site.test');
    const expires = link.searchParams.get('expires')!;
    const signature = link.searchParams.get('signature')!;
    await expect(get(`/api/files/${FILE_ID}?signature=${signature}`)).resolves.toMatchObject(REFUSED);
    await expect(get(`/api/files/${FILE_ID}?expires=${expires}`)).resolves.toMatchObject(REFUSED);
    const other = new URL(await services.files.links.sign(MISSING_ID), 'http://site.test');
    await expect(get(`/api/files/${FILE_ID}?expires=${expires}&signature=${other.searchParams.get('signature')}`)).resolves.toMatchObject(REFUSED);
    await expect(get(`/api/files/${FILE_ID}?expires=1&signature=${'0'.repeat(64)}`)).resolves.toMatchObject(REFUSED);
  });

  test('a valid link to a file no message has is not found', async () => {
    await keepFile('2026-11/aaaaaaaaaaaaaaaaaaaaaaaa', 'hello world');
    await expect(get(await services.files.links.sign(MISSING_ID))).resolves.toMatchObject(NOT_FOUND);
  });

  test('a valid link to a file whose bytes the storage no longer has is not found', async () => {
    await keepFile('2026-11/bbbbbbbbbbbbbbbbbbbbbbbb');
    await expect(get(await services.files.links.sign(FILE_ID))).resolves.toMatchObject(NOT_FOUND);
  });
});

describe('a file’s signed link after the owner acted on its message (issue 39 item 15)', () => {
  /** The id of the message `keepFile` stored last. */
  async function lastMessage(): Promise<number> {
    const row = await services.store.sql.get<{ id: number | string }>('SELECT max(id) AS id FROM submissions');
    return Number(row!.id);
  }

  test('a link to a file of a deleted message is not found at once, before the sweep removes the file', async () => {
    await keepFile('2026-11/aaaaaaaaaaaaaaaaaaaaaaaa', 'hello world');
    const link = await services.files.links.sign(FILE_ID);
    await services.store.messages.remove(await lastMessage(), new Date());
    await expect(get(link)).resolves.toMatchObject(NOT_FOUND);
  });

  test('a link to a file of a message the owner marked as spam is not found; one the filter holds still opens for the owner', async () => {
    await keepFile('2026-11/aaaaaaaaaaaaaaaaaaaaaaaa', 'hello world');
    const link = await services.files.links.sign(FILE_ID);
    await expect(get(link)).resolves.toMatchObject({ kind: 'answer', status: 200 });
    await services.store.messages.hold(await lastMessage(), new Date());
    await expect(get(link)).resolves.toMatchObject(NOT_FOUND);
  });

  test('a link to a file of a message deleted during its send is not found at once, though the row waits for the send to end', async () => {
    await keepFile('2026-11/aaaaaaaaaaaaaaaaaaaaaaaa', 'hello world');
    const link = await services.files.links.sign(FILE_ID);
    const now = new Date();
    await expect(services.store.outbox.claim(now, new Date(now.getTime() + 60_000))).resolves.toMatchObject({ id: await lastMessage() });
    await services.store.messages.remove(await lastMessage(), now);
    await expect(services.store.sql.get('SELECT requested FROM submissions WHERE id = ?', [await lastMessage()])).resolves.toEqual({ requested: 'delete' });
    await expect(get(link)).resolves.toMatchObject(NOT_FOUND);
  });

  test('a link to a file of a message the filter held (a `contact.held` alert) opens', async () => {
    await services.store.submissions.receive({
      name: 'Ada',
      email: 'ada@example.org',
      message: 'The drawing of the part.',
      held: ['links'],
      form: 'quote',
      files: [{ id: FILE_ID, field: 'drawing', name: 'part.txt', size: 11, type: 'text/plain', storageKey: '2026-11/aaaaaaaaaaaaaaaaaaaaaaaa' }],
    });
    const upload = join(dataDir, 'upload.tmp');
    writeFileSync(upload, 'hello world');
    await services.files.storage.put('2026-11/aaaaaaaaaaaaaaaaaaaaaaaa', upload, 11, 'text/plain');
    await expect(get(await services.files.links.sign(FILE_ID))).resolves.toMatchObject({ kind: 'answer', status: 200 });
  });
});
