import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { accepts, discard, displayName, readUpload, type UploadRead } from '../../../packages/site-forms/src/lib/files/multipart.ts';
import { defineForm } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import type { IncomingRequest } from '../../../packages/site-forms/src/lib/http/form.ts';

/** The temp files left in an incoming folder; none when no file made it. */
const leftIn = (incoming: string): string[] => (existsSync(incoming) ? readdirSync(incoming) : []);

/**
 * The reader of posts with files at its edges: busboy's limits, the parts it counts, names and
 * types at their bounds, a body cut or slow, and a post that is not multipart at all.
 */
const folders: string[] = [];
const tempFolder = () => {
  const made = mkdtempSync(join(tmpdir(), 'files-limits-'));
  folders.push(made);
  return made;
};
const incomingFolder = () => join(tempFolder(), '.incoming');
afterAll(() => {
  for (const made of folders) rmSync(made, { recursive: true, force: true });
});

const BOUNDARY = 'b0undary';
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

/** One part of a raw multipart body: a field, or a file when `filename` is given (as it is sent, quotes and all). */
type Part = { name: string; filename?: string; content: string | Buffer };

function multipart(parts: readonly Part[], { close = true } = {}): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"`}`;
    const type = part.filename === undefined ? '' : 'Content-Type: application/octet-stream\r\n';
    pieces.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`), Buffer.from(part.content), Buffer.from('\r\n'));
  }
  if (close) pieces.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(pieces);
}

/** A Web request as the tests and an owner's Astro server hand it over; the body in pieces of `piece` bytes when given. */
function post(body: Buffer | null, headers: Record<string, string> = { 'content-type': MULTIPART }, piece?: number): Request {
  let stream: ReadableStream<Uint8Array> | null = null;
  if (body && piece) {
    let at = 0;
    stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= body.length) return controller.close();
        controller.enqueue(body.subarray(at, at + piece));
        at += piece;
      },
    });
  }
  return new Request('http://localhost/api/forms/quote', { method: 'POST', body: stream ?? body, headers, duplex: 'half' } as RequestInit);
}

const form = defineForm({
  name: 'quote',
  title: 'A quote',
  fields: [
    { name: 'name', type: 'text', label: 'Name' },
    { name: 'photos', type: 'file', label: 'Photos', accept: ['image/png'], maxSize: 1000, maxFiles: 2 },
    { name: 'notes', type: 'file', label: 'Notes', maxSize: 100_000 },
  ],
});

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a0a80000000049454e44ae426082',
  'hex',
);

/** The files of a read that succeeded, as the caller sees them; the temp files are removed. */
async function filesOf(read: UploadRead) {
  if (!read.ok) throw new Error(`refused: ${read.failure.status} ${read.failure.error}`);
  const files = read.files.map(({ field, name, size, type }) => ({ field, name, size, type }));
  await discard(read.files);
  return files;
}

const TOO_LARGE = (kilobytes: number) => ({ kind: 'failure', status: 413, error: `The form is too large; the limit is ${kilobytes} KB` });
const UNREADABLE = { kind: 'failure', status: 400, error: 'The form could not be read' };

describe('a post that is not multipart', () => {
  test('a urlencoded post is read as every form is, with no files and no errors', async () => {
    const read = await readUpload(post(Buffer.from('name=Ada&name=Eve'), { 'content-type': 'application/x-www-form-urlencoded' }), form, incomingFolder(), {
      maxTotalBytes: 5_000,
    });
    expect(read).toEqual({ ok: true, fields: { name: 'Ada' }, files: [], errors: {} });
  });

  test('a post of another type is refused as every form refuses it', async () => {
    const read = await readUpload(post(Buffer.from('{}'), { 'content-type': 'application/json' }), form, incomingFolder(), { maxTotalBytes: 5_000 });
    expect(read.ok || read.failure.status).toBe(415);
  });
});

describe('the headers of a post with files', () => {
  test('a compressed body is refused with a 415 before a byte is read', async () => {
    const incoming = incomingFolder();
    const body = multipart([{ name: 'notes', filename: 'a.txt', content: 'hello' }]);
    const read = await readUpload(post(body, { 'content-type': MULTIPART, 'content-encoding': 'gzip' }), form, incoming, { maxTotalBytes: 5_000 });
    expect(read).toEqual({ ok: false, failure: { kind: 'failure', status: 415, error: 'Send the form without a Content-Encoding' } });
    expect(existsSync(incoming)).toBe(false);
  });

  test('a media type in capitals and with a space before its parameters is still multipart', async () => {
    const body = multipart([{ name: 'notes', filename: 'a.txt', content: 'hello' }]);
    const read = await readUpload(post(body, { 'content-type': `Multipart/Form-Data ; boundary=${BOUNDARY}` }), form, incomingFolder(), {
      maxTotalBytes: 5_000,
    });
    expect(await filesOf(read)).toEqual([{ field: 'notes', name: 'a.txt', size: 5, type: 'text/plain' }]);
  });

  test('multipart without a boundary is unreadable', async () => {
    const read = await readUpload(post(Buffer.from('--x--\r\n'), { 'content-type': 'multipart/form-data' }), form, incomingFolder(), { maxTotalBytes: 5_000 });
    expect(read).toEqual({ ok: false, failure: UNREADABLE });
  });

  test('a declared length of exactly the files and the fields together is read; one byte more is refused unread', async () => {
    const body = multipart([{ name: 'notes', filename: 'a.txt', content: 'hello' }]);
    const limits = { maxTotalBytes: 5_000, fieldsBytes: 1_000 };
    const exact = await readUpload(post(body, { 'content-type': MULTIPART, 'content-length': '6000' }), form, incomingFolder(), limits);
    expect((await filesOf(exact)).map((file) => file.name)).toEqual(['a.txt']);
    const over = await readUpload(post(body, { 'content-type': MULTIPART, 'content-length': '6001' }), form, incomingFolder(), limits);
    expect(over).toEqual({ ok: false, failure: { kind: 'failure', status: 413, error: 'The files are too large together; the limit is 5 kB' } });
  });

  test('a post with no body at all is unreadable', async () => {
    const read = await readUpload(post(null), form, incomingFolder(), { maxTotalBytes: 5_000 });
    expect(read).toEqual({ ok: false, failure: UNREADABLE });
  });
});

describe('the fields of a post with files', () => {
  test('the first value of a name is kept, as a browser sends it', async () => {
    const body = multipart([
      { name: 'name', content: 'Ada' },
      { name: 'name', content: 'Eve' },
    ]);
    const read = await readUpload(post(body), form, incomingFolder(), { maxTotalBytes: 5_000 });
    expect(read.ok && read.fields).toEqual({ name: 'Ada' });
  });

  test('fields of exactly their limit together are read; one byte more is a 413', async () => {
    // 4 bytes of name and 2044 of value: 2048, the limit.
    const limits = { maxTotalBytes: 5_000, fieldsBytes: 2048 };
    const exact = await readUpload(post(multipart([{ name: 'name', content: 'x'.repeat(2044) }])), form, incomingFolder(), limits);
    expect(exact.ok && (exact.fields.name as string).length).toBe(2044);
    const split = multipart([
      { name: 'name', content: 'x'.repeat(1100) },
      { name: 'note', content: 'y'.repeat(941) },
    ]);
    const over = await readUpload(post(split), form, incomingFolder(), limits);
    expect(over.ok || over.failure).toEqual(TOO_LARGE(2));
  });

  test('more than 200 fields are a 413', async () => {
    const parts = Array.from({ length: 201 }, (_, index) => ({ name: `f${index}`, content: 'x' }));
    const read = await readUpload(post(multipart(parts)), form, incomingFolder(), { maxTotalBytes: 5_000 });
    expect(read.ok || read.failure).toEqual(TOO_LARGE(64));
    const fine = await readUpload(post(multipart(parts.slice(1))), form, incomingFolder(), { maxTotalBytes: 5_000 });
    expect(fine.ok && Object.keys(fine.fields)).toHaveLength(200);
  });

  test('a body that ends before its closing boundary is unreadable', async () => {
    const incoming = incomingFolder();
    const body = multipart([{ name: 'notes', filename: 'a.txt', content: 'hello' }], { close: false });
    const read = await readUpload(post(body), form, incoming, { maxTotalBytes: 5_000 });
    expect(read).toEqual({ ok: false, failure: UNREADABLE });
    expect(leftIn(incoming)).toEqual([]);
  });

  test('a body that ends inside a file while the first file waits for its check is unreadable, and no error escapes', async () => {
    // The file's stream is paused while the disk's check runs; busboy destroys it with "Unexpected
    // end of form" when the body ends meanwhile: unheard, that error was an uncaught exception.
    const escaped: unknown[] = [];
    const listener = (error: unknown) => escaped.push(error);
    process.prependListener('uncaughtException', listener);
    try {
      const incoming = incomingFolder();
      const body = multipart([{ name: 'notes', filename: 'a.txt', content: 'hello' }], { close: false });
      const slowCheck = () => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 50));
      const read = await readUpload(post(body), form, incoming, { maxTotalBytes: 5_000, beforeFirstFile: slowCheck });
      expect(read).toEqual({ ok: false, failure: UNREADABLE });
      expect(escaped).toEqual([]);
      expect(leftIn(incoming)).toEqual([]);
    } finally {
      process.off('uncaughtException', listener);
    }
  });
});

describe('the files a post may carry', () => {
  test("one file part more than the form's fields take together (their maxFiles, plus one) is a 413", async () => {
    // photos takes 2 and notes 1: 3 files, and one part more is still read (and refused at its field).
    const png = (name: string) => ({ name: 'photos', filename: name, content: PNG });
    const four = await readUpload(post(multipart([png('a.png'), png('b.png'), png('c.png'), png('d.png')])), form, incomingFolder(), {
      maxTotalBytes: 5_000,
    });
    expect(four.ok && four.errors).toEqual({ photos: ['Photos: send at most 2 files'] });
    if (four.ok) await discard(four.files);
    const incoming = incomingFolder();
    const five = await readUpload(post(multipart([png('a.png'), png('b.png'), png('c.png'), png('d.png'), png('e.png')])), form, incoming, {
      maxTotalBytes: 5_000,
    });
    expect(five).toEqual({ ok: false, failure: TOO_LARGE(64) });
    expect(leftIn(incoming)).toEqual([]);
  });

  test('400 parts are a 413 (busboy counts to its limit), though neither the fields nor the files alone are past theirs', async () => {
    const wide = defineForm({
      name: 'wide',
      title: 'Wide',
      fields: Array.from({ length: 11 }, (_, index) => ({ name: `f${index}`, type: 'file' as const, label: `F${index}`, maxFiles: 20 })),
    });
    const fields = Array.from({ length: 200 }, (_, index) => ({ name: `t${index}`, content: 'x' }));
    // Inputs left empty, as a browser sends them: parts that count, with nothing to keep.
    const files = Array.from({ length: 200 }, (_, index) => ({ name: `f${index % 10}`, filename: '', content: '' }));
    const read = await readUpload(post(multipart([...fields, ...files])), wide, incomingFolder(), { maxTotalBytes: 5_000 });
    expect(read.ok || read.failure).toEqual(TOO_LARGE(64));
    const fine = await readUpload(post(multipart([...fields, ...files.slice(1)])), wide, incomingFolder(), { maxTotalBytes: 5_000 });
    expect(fine.ok && fine.files).toEqual([]);
  });

  test('a file of exactly its maxSize is kept; the files of exactly the total are kept', async () => {
    const exact = Buffer.concat([PNG, Buffer.alloc(1000 - PNG.length)]);
    const read = await readUpload(
      post(
        multipart([
          { name: 'photos', filename: 'a.png', content: exact },
          { name: 'notes', filename: 'b.txt', content: 'z'.repeat(500) },
        ]),
      ),
      form,
      incomingFolder(),
      { maxTotalBytes: 1500 },
    );
    expect(await filesOf(read)).toEqual([
      { field: 'photos', name: 'a.png', size: 1000, type: 'image/png' },
      { field: 'notes', name: 'b.txt', size: 500, type: 'text/plain' },
    ]);
  });

  test('a file part with an empty name (an input left empty) is not kept', async () => {
    const incoming = incomingFolder();
    const read = await readUpload(post(multipart([{ name: 'notes', filename: '', content: '' }])), form, incoming, { maxTotalBytes: 5_000 });
    expect(read.ok && read.files).toEqual([]);
    // One whose name is a path without a file at its end, with bytes, is no browser's: refused, nothing kept.
    for (const filename of ['..', 'some/folder/']) {
      const path = await readUpload(post(multipart([{ name: 'notes', filename, content: 'x' }])), form, incoming, { maxTotalBytes: 5_000 });
      expect(path).toEqual({ ok: false, failure: UNREADABLE });
    }
    expect(leftIn(incoming)).toEqual([]);
  });

  test('a name in UTF-8 is read as UTF-8', async () => {
    const read = await readUpload(post(multipart([{ name: 'notes', filename: 'Maße für Küche.txt', content: 'hello' }])), form, incomingFolder(), {
      maxTotalBytes: 5_000,
    });
    expect((await filesOf(read)).map((file) => file.name)).toEqual(['Maße für Küche.txt']);
  });

  test('a file larger than a write buffer, sent in pieces, is written whole', async () => {
    const big = Buffer.alloc(90_000, 'abcdefghij');
    const read = await readUpload(post(multipart([{ name: 'notes', filename: 'long.txt', content: big }]), undefined, 40_000), form, incomingFolder(), {
      maxTotalBytes: 200_000,
    });
    if (!read.ok) throw new Error(read.failure.error);
    expect(readFileSync(read.files[0]!.path)).toEqual(big);
    expect(await filesOf(read)).toEqual([{ field: 'notes', name: 'long.txt', size: 90_000, type: 'text/plain' }]);
  });

  test('a second post into the same incoming folder is read as the first was', async () => {
    const incoming = join(tempFolder(), 'files', '.incoming');
    for (const name of ['one.txt', 'two.txt']) {
      const read = await readUpload(post(multipart([{ name: 'notes', filename: name, content: name }])), form, incoming, { maxTotalBytes: 5_000 });
      expect((await filesOf(read)).map((file) => file.name)).toEqual([name]);
    }
  });
});

describe('every byte of a body counts (issue 39 item 16)', () => {
  /**
   * A body that opens `head` and then sends bytes without end, made only as the reader pulls it:
   * answers the stream and how many bytes were pulled, so a test sees how far a read went.
   */
  function endless(head: string): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
    let pulled = 0;
    const chunk = Buffer.alloc(64 * 1024, 'z');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(Buffer.from(head));
      },
      pull(controller) {
        // 200 MB at most, as the attack sent: a read that takes it all is the failure, not a hang.
        if (pulled >= 200 * 1024 * 1024) return controller.close();
        pulled += chunk.length;
        controller.enqueue(chunk);
      },
    });
    return { stream, pulled: () => pulled };
  }
  const chunked = (stream: ReadableStream<Uint8Array>) =>
    new Request('http://localhost/api/forms/quote', { method: 'POST', body: stream, headers: { 'content-type': MULTIPART }, duplex: 'half' } as RequestInit);
  const opening = (disposition: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; ${disposition}\r\nContent-Type: application/octet-stream\r\n\r\n`;

  test('a file in a field that takes no file ends the read with a 400 at once, its bytes not read on', async () => {
    const incoming = incomingFolder();
    const body = endless(opening('name="name"; filename="big.bin"'));
    await expect(readUpload(chunked(body.stream), form, incoming, { maxTotalBytes: 5_000 })).resolves.toEqual({ ok: false, failure: UNREADABLE });
    expect(body.pulled()).toBeLessThan(1024 * 1024);
    expect(leftIn(incoming)).toEqual([]);
  });

  test('a part with an empty file name that carries bytes ends the read with a 400 at once', async () => {
    const body = endless(opening('name="notes"; filename=""'));
    await expect(readUpload(chunked(body.stream), form, incomingFolder(), { maxTotalBytes: 5_000 })).resolves.toEqual({ ok: false, failure: UNREADABLE });
    expect(body.pulled()).toBeLessThan(1024 * 1024);
  });

  test("a file past its field's maxFiles is counted against the total as it arrives", async () => {
    const png = (name: string) => ({ name: 'photos', filename: name, content: PNG });
    const large = { name: 'photos', filename: 'c.png', content: Buffer.concat([PNG, Buffer.alloc(6_000)]) };
    const read = await readUpload(post(multipart([png('a.png'), png('b.png'), large])), form, incomingFolder(), { maxTotalBytes: 5_000 });
    expect(read).toEqual({ ok: false, failure: { kind: 'failure', status: 413, error: 'The files are too large together; the limit is 5 kB' } });
  });
});

describe('the type read from the bytes of a file', () => {
  async function typeOf(content: Buffer | string, filename = 'notes.txt', piece?: number): Promise<string> {
    const body = multipart([{ name: 'notes', filename, content }]);
    const read = await readUpload(post(body, undefined, piece), form, incomingFolder(), { maxTotalBytes: 200_000 });
    return (await filesOf(read))[0]!.type;
  }

  test('an empty file is bytes, not text', async () => {
    await expect(typeOf('')).resolves.toBe('application/octet-stream');
  });

  test('text named .csv is text/csv; a name that only has .csv inside is text/plain', async () => {
    await expect(typeOf('a,b\n1,2\n', 'Table.CSV')).resolves.toBe('text/csv');
    await expect(typeOf('a,b\n1,2\n', 'table.csv.txt')).resolves.toBe('text/plain');
  });

  test('a small file with a byte that is not UTF-8, or that ends in half a character, is bytes', async () => {
    await expect(typeOf(Buffer.from('abc\xffdef', 'latin1'))).resolves.toBe('application/octet-stream');
    await expect(typeOf(Buffer.concat([Buffer.from('caf'), Buffer.from([0xc3])]))).resolves.toBe('application/octet-stream');
  });

  test('a long text whose first 8 KB end in the middle of a character is still text', async () => {
    // 8191 bytes of ASCII, then "é" (2 bytes) across the 8 KB mark, then more text.
    await expect(typeOf(`${'a'.repeat(8191)}é${'b'.repeat(2000)}`)).resolves.toBe('text/plain');
  });

  test('a long text whose first 8 KB end after three bytes of a four-byte character is still text', async () => {
    await expect(typeOf(`${'a'.repeat(8189)}😀${'b'.repeat(2000)}`)).resolves.toBe('text/plain');
  });

  test('a long file with a byte that is not UTF-8 early on is bytes', async () => {
    await expect(typeOf(Buffer.concat([Buffer.from('a'.repeat(100)), Buffer.from([0xff]), Buffer.from('b'.repeat(10_000))]))).resolves.toBe(
      'application/octet-stream',
    );
  });

  test('only the first 8 KB are read for text, however the file arrives', async () => {
    // A control character past the first 8 KB is not seen; one within them is.
    const late = `${'a'.repeat(10_000)}\u0001${'b'.repeat(100)}`;
    await expect(typeOf(late, 'notes.txt', 1000)).resolves.toBe('text/plain');
    const next = `${'a'.repeat(8192)}\u0001${'b'.repeat(100)}`;
    await expect(typeOf(next, 'notes.txt', 1000)).resolves.toBe('text/plain');
    const early = `${'a'.repeat(5000)}\u0001${'b'.repeat(6000)}`;
    await expect(typeOf(early, 'notes.txt', 1000)).resolves.toBe('application/octet-stream');
  });
});

describe('a body that breaks off', () => {
  test("a client that goes away during the upload leaves a 400 and nothing behind, on our server's own request stream", async () => {
    const incoming = incomingFolder();
    let resolveRead: (read: UploadRead) => void = () => {};
    const result = new Promise<UploadRead>((resolve) => {
      resolveRead = resolve;
    });
    const started = Promise.withResolvers<void>();
    const server = createServer((req: IncomingMessage) => {
      const request: IncomingRequest = {
        method: 'POST',
        url: 'http://localhost/api/forms/quote',
        headers: new Headers({ 'content-type': req.headers['content-type'] ?? '' }),
        // The first bytes reach the reader itself: the client goes away once the reader has its stream.
        stream: () => {
          req.once('data', () => started.resolve());
          return req;
        },
      };
      void readUpload(request, form, incoming, { maxTotalBytes: 200_000 }).then(resolveRead);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const client = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'content-type': MULTIPART, 'content-length': '100000' } });
      client.on('error', () => {});
      client.write(
        Buffer.concat([Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="notes"; filename="a.txt"\r\n\r\n`), Buffer.alloc(5000, 'a')]),
      );
      await started.promise;
      client.destroy();
      expect(await result).toEqual({ ok: false, failure: UNREADABLE });
      expect(leftIn(incoming)).toEqual([]);
    } finally {
      server.close();
    }
  });

  test("a whole post on our server's own request stream is read from that stream", async () => {
    const incoming = incomingFolder();
    const result = Promise.withResolvers<UploadRead>();
    const server = createServer((req, res) => {
      const request: IncomingRequest = {
        method: 'POST',
        url: 'http://localhost/api/forms/quote',
        headers: new Headers({ 'content-type': req.headers['content-type'] ?? '' }),
        stream: () => req,
      };
      void readUpload(request, form, incoming, { maxTotalBytes: 200_000 }).then((read) => {
        result.resolve(read);
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const body = multipart([{ name: 'notes', filename: 'a.txt', content: 'over the wire' }]);
      const client = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'content-type': MULTIPART } });
      client.end(body);
      await new Promise((resolve) => client.once('response', resolve));
      expect(await filesOf(await result.promise)).toEqual([{ field: 'notes', name: 'a.txt', size: 13, type: 'text/plain' }]);
    } finally {
      server.close();
    }
  });
});

describe('the helpers of the reader', () => {
  test("a visitor's file name: its last segment, no controls or direction marks, trimmed, at most 200 characters, never empty", () => {
    expect(displayName('  C:\\Users\\ada\\plan.pdf ')).toBe('plan.pdf');
    expect(displayName('a\u0000b\u202ec\u0007.txt')).toBe('abc.txt');
    expect(displayName(' \u0001 ')).toBe('file');
    expect(displayName('dir/')).toBe('file');
    expect(displayName('ü'.repeat(250))).toBe('ü'.repeat(200));
  });

  test('accept by wildcard takes the types under it, and no other', () => {
    expect(accepts(['image/*'], { type: 'image/png' })).toBe(true);
    expect(accepts(['image/*'], { type: 'application/pdf' })).toBe(false);
    expect(accepts(['application/*'], { type: 'audio/mpeg' })).toBe(false);
    expect(accepts(['image/*'], { type: 'x-image/png' })).toBe(false);
  });

  test('accept by type takes that type alone, not a longer one that starts alike', () => {
    expect(accepts(['image/heic'], { type: 'image/heic' })).toBe(true);
    expect(accepts(['image/heic'], { type: 'image/heic-sequence' })).toBe(false);
    expect(accepts(['.pdf'], { type: 'application/x-unknown' })).toBe(false);
  });

  test('discarding a temp file already gone is no failure', async () => {
    await expect(discard([{ path: join(tempFolder(), 'gone') }])).resolves.toBeUndefined();
  });
});
