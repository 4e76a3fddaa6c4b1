import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { storedFiles as stored, useFilesSite } from '../support/files-site.ts';
import { type ClamdServer, clamdAvailable, EICAR, startClamd } from '../support/clamd.ts';
import { type S3Server, startS3 } from '../support/s3.ts';
import type { Site } from '../support/site.ts';

// Files with a message (issue 31) over HTTP to a built server whose contact form has two file
// fields (tests/fixtures/files.forms.config.ts): what is accepted is stored, row and object; what
// is refused leaves nothing, neither a row nor an object nor a temp file.

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a0a80000000049454e44ae426082',
  'hex',
);
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const TEXT = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'The broken part, photographed from both sides.' };

const start = useFilesSite('files');

function send(site: Site, files: Array<[field: string, bytes: Buffer | string, name: string]>, fields: Record<string, string> = TEXT): Promise<Response> {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  for (const [field, bytes, name] of files) body.append(field, new Blob([typeof bytes === 'string' ? bytes : new Uint8Array(bytes)]), name);
  return fetch(`${site.url}/api/contact`, { method: 'POST', body });
}

type FileRow = { id: string; submission_id: number; field: string; name: string; size: number; type: string; storage_key: string };

function rows(site: Site): { messages: number; files: FileRow[] } {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    const messages = (db.prepare('SELECT count(*) AS n FROM submissions').get() as { n: number }).n;
    return { messages, files: db.prepare('SELECT * FROM files ORDER BY position').all() as FileRow[] };
  } finally {
    db.close();
  }
}

describe('files over the built server, in the local folder', () => {
  let site: Site;
  beforeAll(async () => {
    site = await start();
  }, 60_000);

  test('the contact page offers each file field as a file input: what it accepts, several files where the field takes more', async () => {
    const html = await (await fetch(`${site.url}/contact`)).text();
    const inputs = [...html.matchAll(/<input[^>]*type="file"[^>]*>/g)].map((match) => match[0]);
    expect(inputs).toHaveLength(2);
    const [photos, drawing] = inputs as [string, string];
    expect([/name="photos"/.test(photos), /accept="image\/png,image\/jpeg"/.test(photos), /\smultiple\b/.test(photos)]).toEqual([true, true, true]);
    expect([/name="drawing"/.test(drawing), /accept="\.pdf,text\/plain"/.test(drawing), /\smultiple\b/.test(drawing), /\svalue=/.test(drawing)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(html).toMatch(/<form[^>]*enctype="multipart\/form-data"/);
  });

  test('a post with files is stored: the message, a row per file, the bytes under DATA_DIR/files; no temp file is left', async () => {
    const response = await send(site, [
      ['photos', PNG, 'front.png'],
      ['photos', PNG, '../../back.png'],
      ['drawing', PDF, 'plan.pdf'],
    ]);
    expect([response.status, await response.json()]).toEqual([200, { success: true }]);
    const { messages, files } = rows(site);
    expect(messages).toBe(1);
    expect(files.map(({ field, name, size, type }) => ({ field, name, size, type }))).toEqual([
      { field: 'photos', name: 'front.png', size: PNG.length, type: 'image/png' },
      { field: 'photos', name: 'back.png', size: PNG.length, type: 'image/png' },
      { field: 'drawing', name: 'plan.pdf', size: PDF.length, type: 'application/pdf' },
    ]);
    expect(new Set(files.map((file) => file.submission_id)).size).toBe(1);
    expect(stored(site)).toEqual(files.map((file) => file.storage_key).sort());
    expect(readFileSync(join(site.dataDir, 'files', files[2]!.storage_key))).toEqual(PDF);
  });

  test('refused posts leave nothing: a file past its maxSize (413 naming the field), a type not accepted, too many files', async () => {
    const before = rows(site);
    const big = await send(site, [['photos', Buffer.concat([PNG, Buffer.alloc(3000)]), 'big.png']]);
    expect([big.status, await big.json()]).toEqual([413, { success: false, error: 'Photos: a file is larger than 2 kB' }]);
    const wrong = await send(site, [['drawing', PNG, 'plan.pdf']]);
    expect([wrong.status, await wrong.json()]).toEqual([
      400,
      { success: false, errors: { drawing: ['Drawing: this kind of file is not accepted (accepted: .pdf, text/plain)'] } },
    ]);
    const many = await send(site, [
      ['photos', PNG, 'a.png'],
      ['photos', PNG, 'b.png'],
      ['photos', PNG, 'c.png'],
    ]);
    expect([many.status, await many.json()]).toEqual([400, { success: false, errors: { photos: ['Photos: send at most 2 files'] } }]);
    // A field's own error beside a file: the message is not stored, and neither is the file.
    const invalid = await send(site, [['photos', PNG, 'a.png']], { ...TEXT, email: 'not an address' });
    expect(invalid.status).toBe(400);
    expect(rows(site)).toEqual(before);
    expect(stored(site)).toEqual(before.files.map((file) => file.storage_key).sort());
  });

  test('a post without files to the form still works, and a slow upload cut off leaves no temp file', async () => {
    const plain = await send(site, []);
    expect(plain.status).toBe(200);
    const before = stored(site);
    // Half a file, then the client goes away.
    const socket = connect(Number(new URL(site.url).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const boundary = 'cutoff';
    const part = `--${boundary}\r\nContent-Disposition: form-data; name="drawing"; filename="plan.pdf"\r\nContent-Type: application/pdf\r\n\r\n${PDF.toString()}`;
    socket.write(
      `POST /api/contact HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 100000\r\n\r\n${part}`,
    );
    await waitFor(() => stored(site).some((path) => path.startsWith('.incoming/')));
    socket.destroy();
    await waitFor(() => !stored(site).some((path) => path.startsWith('.incoming/')));
    expect(stored(site)).toEqual(before);
  });

  test('a slow upload is cut at UPLOAD_TIMEOUT_SECONDS, and its temp file goes', async () => {
    // A server of its own with a short limit: the default (300 s) is for slow links (decision 0185).
    const site = await start({ UPLOAD_TIMEOUT_SECONDS: '2' });
    const before = stored(site);
    const socket = connect(Number(new URL(site.url).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    const closed = new Promise((resolve) => socket.once('close', resolve));
    const boundary = 'slow';
    const part = `--${boundary}\r\nContent-Disposition: form-data; name="drawing"; filename="plan.pdf"\r\nContent-Type: application/pdf\r\n\r\n${PDF.toString()}`;
    socket.write(
      `POST /api/contact HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 100000\r\n\r\n${part}`,
    );
    await waitFor(() => stored(site).some((path) => path.startsWith('.incoming/')));
    // Nothing more is sent: the server cuts the request when its time is up.
    await closed;
    expect(answer.split('\r\n', 1)[0]).toBe('HTTP/1.1 408 Request Timeout');
    await waitFor(() => !stored(site).some((path) => path.startsWith('.incoming/')));
    expect(stored(site)).toEqual(before);
  }, 60_000);
});

test('below UPLOAD_DISK_MIN_FREE_BYTES an upload is a 503 with Retry-After before anything is read', async () => {
  const site = await start({ UPLOAD_DISK_MIN_FREE_BYTES: String(Number.MAX_SAFE_INTEGER) });
  const response = await send(site, [['photos', PNG, 'a.png']]);
  expect([response.status, response.headers.get('retry-after'), await response.json()]).toEqual([
    503,
    '60',
    { success: false, error: 'Files cannot be received right now. Please try again in a few minutes.' },
  ]);
  expect(rows(site).messages).toBe(0);
  expect(stored(site)).toEqual([]);
}, 60_000);

test('uploads meet the rate limit before they are read, and a declared length past the total is refused from the header', async () => {
  const site = await start({ RATE_LIMIT_MAX: '1', UPLOAD_MAX_TOTAL_BYTES: '100000' });
  expect((await send(site, [['drawing', PDF, 'plan.pdf']])).status).toBe(200);
  const second = await send(site, [['drawing', PDF, 'again.pdf']]);
  expect(second.status).toBe(429);
  expect(rows(site).files.map((file) => file.name)).toEqual(['plan.pdf']);
  expect(stored(site).filter((path) => path.startsWith('.incoming/'))).toEqual([]);
  const declared = await new Promise<string>((resolve) => {
    const socket = connect(Number(new URL(site.url).port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('close', () => resolve(answer));
    socket.write(
      'POST /api/contact HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: 200000\r\n\r\n',
    );
  });
  expect(declared.split('\r\n', 1)[0]).toBe('HTTP/1.1 413 Payload Too Large');
  expect(declared).toContain('{"success":false,"error":"The files are too large together; the limit is 100 kB"}');
}, 60_000);

describe('files in an S3-compatible store (s3rver)', () => {
  let s3: S3Server;
  beforeAll(async () => {
    s3 = await startS3('site-files');
  });
  afterAll(async () => {
    await s3?.stop();
  });

  test('the object is in the bucket, nothing under DATA_DIR/files but the empty temp folder', async () => {
    const site = await start({ S3_ENDPOINT: s3.endpoint, S3_BUCKET: 'site-files', S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER' });
    const response = await send(site, [['drawing', PDF, 'plan.pdf']]);
    expect(response.status).toBe(200);
    const [file] = rows(site).files;
    expect(stored(site)).toEqual([]);
    const inBucket = readdirSync(join(s3.directory, 'site-files'), { recursive: true }) as string[];
    expect(inBucket.some((path) => path.startsWith(file!.storage_key))).toBe(true);
  }, 60_000);
});

describe.skipIf(!clamdAvailable)('files scanned by a real clamd', () => {
  let clamd: ClamdServer;
  beforeAll(async () => {
    clamd = await startClamd();
  }, 60_000);
  afterAll(async () => {
    await clamd?.stop();
  });

  test('the EICAR file is refused at its field and logged once without its content; a clean file is stored', async () => {
    const site = await start({ CLAMD_SOCKET: clamd.socket });
    const infected = await send(site, [['drawing', EICAR, 'notes.txt']]);
    expect([infected.status, await infected.json()]).toEqual([
      400,
      { success: false, errors: { drawing: ['Drawing: this file was refused by the virus scan'] } },
    ]);
    expect(rows(site).messages).toBe(0);
    expect(stored(site)).toEqual([]);
    const lines = site.logs.filter((line) => typeof line === 'object' && line.event === 'upload.infected');
    expect(lines).toEqual([expect.objectContaining({ field: 'drawing', signature: 'Eicar-Test-Signature.UNOFFICIAL', size: EICAR.length })]);
    expect(JSON.stringify(site.logs)).not.toContain('EICAR-STANDARD');
    const clean = await send(site, [['drawing', 'Just a note.\n', 'notes.txt']]);
    expect(clean.status).toBe(200);
    expect(rows(site).files.map((file) => file.type)).toEqual(['text/plain']);
  }, 60_000);

  test('clamd down is a 503 with Retry-After, never a silent pass: nothing is stored', async () => {
    // A socket no clamd listens on.
    const site = await start({ CLAMD_SOCKET: join(tmpdir(), `no-clamd-${process.pid}.sock`) });
    const response = await send(site, [['drawing', PDF, 'plan.pdf']]);
    expect([response.status, response.headers.get('retry-after')]).toEqual([503, '60']);
    expect(rows(site).messages).toBe(0);
    expect(stored(site)).toEqual([]);
  }, 60_000);
});

async function waitFor(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
