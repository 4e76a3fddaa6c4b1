import { request } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { storedFiles as stored, useFilesSite } from '../support/files-site.ts';
import { nginxAvailable, startTlsProxy, type TlsProxy } from '../support/nginx.ts';
import type { Site } from '../support/site.ts';

// Uploads on slow links (issue 31): a post with files has UPLOAD_TIMEOUT_SECONDS, every other
// request keeps the short whole-request limit (REQUEST_TIMEOUT_SECONDS), both set small here; and
// through nginx with deploy/nginx.conf, a post of several MB arrives and one past its
// client_max_body_size is refused in JSON. The contact form has file fields
// (tests/fixtures/files.forms.config.ts: `drawing` takes plain text up to 10 MB).

const TEXT = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'The drawing of the broken part.' };
const BOUNDARY = 'slowlinkboundary';
const MULTIPART = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, accept: 'application/json' };

const start = useFilesSite('timeouts');

/** A multipart body with the text fields and one plain-text `drawing` of `size` bytes. */
function multipart(size: number): Buffer {
  const parts = Object.entries(TEXT).map(([name, value]) => `--${BOUNDARY}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  return Buffer.concat([
    Buffer.from(`${parts.join('')}--${BOUNDARY}\r\ncontent-disposition: form-data; name="drawing"; filename="plan.txt"\r\ncontent-type: text/plain\r\n\r\n`),
    Buffer.alloc(size, 'a'),
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

type Dribbled = { status: number; headers: string; body: string; chunksSent: number };

/**
 * Sends a post as a slow link does: the headers, then the body in `chunks` pieces, one every
 * `everyMs`; answers what came back once the server closed the connection or answered in full.
 */
function dribble(site: Site, path: string, headers: Record<string, string>, body: Buffer, chunks: number, everyMs: number): Promise<Dribbled> {
  const { port } = new URL(site.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const received: Buffer[] = [];
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const size = Math.ceil(body.length / chunks);
    const next = () => {
      if (sent >= chunks || socket.destroyed) return;
      socket.write(body.subarray(sent * size, (sent + 1) * size));
      sent += 1;
      timer = setTimeout(next, everyMs);
    };
    socket.once('connect', () => {
      const head = Object.entries({ host: `127.0.0.1:${port}`, 'content-length': String(body.length), connection: 'close', ...headers })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n`);
      next();
    });
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    // A server that cuts the connection may reset it while the client still writes.
    socket.on('error', () => {});
    socket.once('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(received).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
      if (!status || !length) return reject(new Error(`no answer: ${JSON.stringify(text)}`));
      // The first answer only (the server writes no second one on a connection it cuts).
      resolve({ status, headers: head.toLowerCase(), body: Buffer.from(rest.join('\r\n\r\n')).subarray(0, length).toString('utf8'), chunksSent: sent });
    });
  });
}

function rows(site: Site): { messages: number; files: number } {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    return { messages: count('submissions'), files: count('files') };
  } finally {
    db.close();
  }
}

describe('a short limit for every request, a long one for uploads (REQUEST_TIMEOUT_SECONDS=1, UPLOAD_TIMEOUT_SECONDS=4)', () => {
  let site: Site;
  beforeAll(async () => {
    site = await start({ REQUEST_TIMEOUT_SECONDS: '1', UPLOAD_TIMEOUT_SECONDS: '4' });
  }, 60_000);

  test('a post to an address without files that dribbles its body past the short limit is cut: 408 in JSON, connection closed', async () => {
    const body = Buffer.from('email=ada%40example.com&consent=on&padding='.padEnd(400, 'x'));
    const answer = await dribble(site, '/api/newsletter', { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body, 40, 250);
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toEqual({ success: false, error: 'The request took too long to arrive. Please try again.' });
    expect(answer.headers).toMatch(/\r\nconnection: close/);
    // Cut at about 1 s: far from the 40 pieces (10 s) the client meant to send.
    expect(answer.chunksSent).toBeLessThan(20);
  }, 20_000);

  test('an upload that keeps sending past the short limit but within the upload limit completes and is stored', async () => {
    const before = rows(site);
    const body = multipart(20_000);
    const answer = await dribble(site, '/api/contact', MULTIPART, body, 8, 250);
    expect([answer.status, JSON.parse(answer.body)]).toEqual([200, { success: true }]);
    expect(answer.chunksSent).toBe(8);
    expect(rows(site)).toEqual({ messages: before.messages + 1, files: before.files + 1 });
    expect(stored(site).filter((path) => !path.startsWith('.incoming'))).toHaveLength(before.files + 1);
  }, 20_000);

  test('an upload still sending at the upload limit is cut: 408 in JSON, no temp file, no stored file, no message', async () => {
    const before = rows(site);
    const files = stored(site);
    const body = multipart(200_000);
    const answer = await dribble(site, '/api/contact', MULTIPART, body, 50, 250);
    expect([answer.status, JSON.parse(answer.body)]).toEqual([
      408,
      { success: false, error: 'The files took too long to arrive. Please try again, on a faster connection or with smaller files.' },
    ]);
    // Cut at about 4 s: far from the 50 pieces (12.5 s) the client meant to send.
    expect(answer.chunksSent).toBeLessThan(30);
    expect(rows(site)).toEqual(before);
    expect(stored(site)).toEqual(files);
  }, 30_000);

  test('an upload refused before its files are read gets no minutes for the rest: cut at the short limit after its answer', async () => {
    const foreign = { ...MULTIPART, origin: 'https://elsewhere.example', connection: 'keep-alive' };
    // Below 64 KB, so not the dispatcher's discarding of a large refused body either.
    const answer = await dribble(site, '/api/contact', foreign, multipart(20_000), 40, 250);
    expect([answer.status, JSON.parse(answer.body)]).toEqual([403, { success: false, error: 'Forms on this site cannot be posted from another website' }]);
    // Cut about 1 s after the answer: far from the upload limit (4 s, 16 pieces) and from the 40 pieces meant.
    expect(answer.chunksSent).toBeLessThan(12);
  }, 20_000);
});

/**
 * A post through the proxy over real TLS, its body in one go or in `pieces`, one every 250 ms (a slow
 * link); answers the status, the content type and the body.
 */
function viaProxy(proxy: TlsProxy, headers: Record<string, string>, body?: Buffer, pieces = 1): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL('/api/contact', proxy.url),
      { method: 'POST', ca: proxy.certificate, checkServerIdentity: () => undefined, headers: { accept: 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.once('end', () => {
          resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: text });
          req.destroy();
        });
      },
    );
    req.once('error', reject);
    // Only the headers: nginx answers from the declared length, before a byte of the body.
    if (!body) return void req.flushHeaders();
    const size = Math.ceil(body.length / pieces);
    const send = (piece: number) => {
      if (piece === pieces - 1) return void req.end(body.subarray(piece * size));
      req.write(body.subarray(piece * size, (piece + 1) * size));
      setTimeout(() => send(piece + 1), 250);
    };
    send(0);
  });
}

describe.skipIf(!nginxAvailable)('files through nginx with deploy/nginx.conf (the server: REQUEST_TIMEOUT_SECONDS=1, UPLOAD_TIMEOUT_SECONDS=2)', () => {
  let site: Site;
  let proxy: TlsProxy;
  beforeAll(async () => {
    site = await start({ TRUST_PROXY: '1', REQUEST_TIMEOUT_SECONDS: '1', UPLOAD_TIMEOUT_SECONDS: '2' });
    proxy = await startTlsProxy(site.url);
  }, 60_000);
  afterAll(async () => {
    await proxy?.stop();
  });

  test('a post with a 5 MB file (past nginx’s 1 MB default) reaches the server and is stored', async () => {
    const body = multipart(5 * 1024 * 1024);
    const answer = await viaProxy(proxy, { ...MULTIPART, 'content-length': String(body.length) }, body);
    expect([answer.status, JSON.parse(answer.body)]).toEqual([200, { success: true }]);
    const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
    try {
      expect(db.prepare('SELECT field, name, size, type FROM files').all()).toEqual([
        { field: 'drawing', name: 'plan.txt', size: 5_242_880, type: 'text/plain' },
      ]);
    } finally {
      db.close();
    }
  }, 60_000);

  test('an upload on a slow link, longer than the server’s UPLOAD_TIMEOUT_SECONDS, is waited for by nginx and stored', async () => {
    const body = multipart(100_000);
    // 16 pieces, one every 250 ms: about 4 s, twice the server's limit.
    const answer = await viaProxy(proxy, { ...MULTIPART, 'content-length': String(body.length) }, body, 16);
    expect([answer.status, JSON.parse(answer.body)]).toEqual([200, { success: true }]);
    const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
    try {
      expect(db.prepare('SELECT size FROM files ORDER BY rowid DESC LIMIT 1').get()).toEqual({ size: 100_000 });
    } finally {
      db.close();
    }
  }, 30_000);

  test('a post past client_max_body_size is refused by nginx in JSON with success: false, never its HTML page', async () => {
    const answer = await viaProxy(proxy, { ...MULTIPART, 'content-length': String(30 * 1024 * 1024) });
    expect(answer.status).toBe(413);
    expect(answer.type).toMatch(/^application\/json/);
    expect(JSON.parse(answer.body)).toMatchObject({ success: false });
    expect(answer.body).not.toMatch(/<html/i);
  }, 30_000);
});
