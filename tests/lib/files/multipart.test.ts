import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { defineForm } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import { discard, readUpload } from '../../../packages/site-forms/src/lib/files/multipart.ts';

/** The temp files left in an incoming folder; none when no file made it. */
const leftIn = (incoming: string): string[] => (existsSync(incoming) ? readdirSync(incoming) : []);

const folders: string[] = [];
const incomingFolder = () => {
  const made = mkdtempSync(join(tmpdir(), 'files-incoming-'));
  folders.push(made);
  return join(made, '.incoming');
};
afterAll(() => {
  for (const made of folders) rmSync(made, { recursive: true, force: true });
});

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a0a80000000049454e44ae426082',
  'hex',
);
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

/** A zip of `entries` stored uncompressed, in their order, as an office suite may write one. */
function storedZip(entries: Array<[name: string, bytes: Buffer]>): Buffer<ArrayBuffer> {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, bytes] of entries) {
    const fileName = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc32(bytes), 14);
    local.writeUInt32LE(bytes.length, 18);
    local.writeUInt32LE(bytes.length, 22);
    local.writeUInt16LE(fileName.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc32(bytes), 16);
    central.writeUInt32LE(bytes.length, 20);
    central.writeUInt32LE(bytes.length, 24);
    central.writeUInt16LE(fileName.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, fileName, bytes);
    centrals.push(central, fileName);
    offset += local.length + fileName.length + bytes.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const form = defineForm({
  name: 'quote',
  title: 'A quote',
  fields: [
    { name: 'name', type: 'text', label: 'Name' },
    { name: 'photos', type: 'file', label: 'Photos', accept: ['image/png', 'image/jpeg'], maxSize: 1000, maxFiles: 2 },
    { name: 'drawing', type: 'file', label: 'Drawing', accept: ['.pdf', 'text/plain'] },
  ],
});

function post(body: FormData | ReadableStream<Uint8Array>, headers: Record<string, string> = {}): Request {
  return new Request('http://localhost/api/forms/quote', { method: 'POST', body, headers, duplex: 'half' } as RequestInit);
}

const limits = { maxTotalBytes: 5_000 };

describe('reading a post with files as a stream', () => {
  test('each file goes to a temp file named by us, counted, its type read from its bytes; the fields are read too', async () => {
    const incoming = incomingFolder();
    const data = new FormData();
    data.set('name', 'Ada');
    data.append('photos', new Blob([PNG]), '../../etc/passwd');
    data.append('drawing', new Blob([PDF]), 'C:\\Users\\ada\\plan.pdf');
    const read = await readUpload(post(data), form, incoming, limits);
    if (!read.ok) throw new Error(read.failure.error);
    expect(read.fields.name).toBe('Ada');
    expect(read.errors).toEqual({});
    expect(read.files.map(({ field, name, size, type }) => ({ field, name, size, type }))).toEqual([
      { field: 'photos', name: 'passwd', size: PNG.length, type: 'image/png' },
      { field: 'drawing', name: 'plan.pdf', size: PDF.length, type: 'application/pdf' },
    ]);
    // Named by a UUID in the incoming folder, never by the visitor's name.
    for (const file of read.files) expect(file.path).toMatch(new RegExp(`^${incoming}/[0-9a-f-]{36}$`));
    expect(readFileSync(read.files[0]!.path)).toEqual(PNG);
    await discard(read.files);
    expect(leftIn(incoming)).toEqual([]);
  });

  test("a file past its field's maxSize stops the read with a 413 naming the field, and no temp file is left", async () => {
    const incoming = incomingFolder();
    const data = new FormData();
    data.append('photos', new Blob([PNG, Buffer.alloc(1000)]), 'big.png');
    const read = await readUpload(post(data), form, incoming, limits);
    expect(read).toEqual({ ok: false, failure: { kind: 'failure', status: 413, error: 'Photos: a file is larger than 1 kB', field: 'photos' } });
    expect(leftIn(incoming)).toEqual([]);
  });

  test('files past the total of a post are a 413 for the total, and none is kept', async () => {
    const incoming = incomingFolder();
    const data = new FormData();
    data.append('photos', new Blob([PNG]), 'a.png');
    data.append('drawing', new Blob([Buffer.alloc(6_000, 65)]), 'long.txt');
    const read = await readUpload(post(data), form, incoming, limits);
    expect(read.ok || read.failure).toMatchObject({ status: 413, error: 'The files are too large together; the limit is 5 kB' });
    expect(leftIn(incoming)).toEqual([]);
  });

  test('a declared length past the limits is refused before a byte is read', async () => {
    const incoming = incomingFolder();
    const data = new FormData();
    data.append('photos', new Blob([PNG]), 'a.png');
    const read = await readUpload(post(data, { 'content-length': String(5_000 + 64 * 1024 + 1) }), form, incoming, limits);
    expect(read.ok || read.failure.status).toBe(413);
  });

  test('a file whose bytes are not of an accepted type is refused at its field, whatever its name says', async () => {
    const data = new FormData();
    data.append('photos', new Blob([PDF]), 'holiday.png');
    data.append('drawing', new Blob([PNG]), 'plan.pdf');
    const read = await readUpload(post(data), form, incomingFolder(), limits);
    if (!read.ok) throw new Error(read.failure.error);
    expect(read.errors).toEqual({
      photos: ['Photos: this kind of file is not accepted (accepted: image/png, image/jpeg)'],
      drawing: ['Drawing: this kind of file is not accepted (accepted: .pdf, text/plain)'],
    });
    await discard(read.files);
  });

  test('plain UTF-8 text is text/plain; bytes no signature knows are application/octet-stream', async () => {
    const data = new FormData();
    data.append('drawing', new Blob(['Maße: 2 × 3 m\nFarbe: grün\n']), 'notes.pdf');
    const text = await readUpload(post(data), form, incomingFolder(), limits);
    if (!text.ok) throw new Error(text.failure.error);
    expect([text.files[0]!.type, text.errors]).toEqual(['text/plain', {}]);
    const binary = new FormData();
    binary.append('drawing', new Blob([Buffer.from([0, 1, 2, 3, 254, 255, 0, 7])]), 'plan.pdf');
    const bytes = await readUpload(post(binary), form, incomingFolder(), limits);
    if (!bytes.ok) throw new Error(bytes.failure.error);
    expect([bytes.files[0]!.type, Object.keys(bytes.errors)]).toEqual(['application/octet-stream', ['drawing']]);
    await discard([...text.files, ...bytes.files]);
  });

  test('more files than maxFiles are refused at the field; an input left empty sends no file', async () => {
    const data = new FormData();
    for (const name of ['a.png', 'b.png', 'c.png']) data.append('photos', new Blob([PNG]), name);
    data.append('drawing', new Blob([]), '');
    const read = await readUpload(post(data), form, incomingFolder(), limits);
    if (!read.ok) throw new Error(read.failure.error);
    expect(read.errors).toEqual({ photos: ['Photos: send at most 2 files'] });
    expect(read.files.map((file) => file.name)).toEqual(['a.png', 'b.png']);
    await discard(read.files);
  });

  test('a file sent in a field that takes none is refused as unreadable, and not kept', async () => {
    const incoming = incomingFolder();
    const data = new FormData();
    data.append('name', new Blob([PNG]), 'sneaky.png');
    const read = await readUpload(post(data), form, incoming, limits);
    expect(read).toEqual({ ok: false, failure: { kind: 'failure', status: 400, error: 'The form could not be read' } });
    expect(leftIn(incoming)).toEqual([]);
  });

  test('fields past 64 KB together are a 413, as a post without files', async () => {
    const data = new FormData();
    data.set('name', 'x'.repeat(70 * 1024));
    const read = await readUpload(post(data), form, incomingFolder(), limits);
    expect(read.ok || read.failure).toMatchObject({ status: 413, error: 'The form is too large; the limit is 64 KB' });
  });

  test('a body that breaks off half-way is unreadable, and the file begun is removed', async () => {
    const incoming = incomingFolder();
    const boundary = 'xyz';
    const start = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="drawing"; filename="plan.pdf"\r\nContent-Type: application/pdf\r\n\r\n${'%PDF-1.4 '.repeat(50)}`,
    );
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(start);
      },
      pull(controller) {
        controller.error(new Error('connection reset'));
      },
    });
    const read = await readUpload(post(body, { 'content-type': `multipart/form-data; boundary=${boundary}` }), form, incoming, limits);
    expect(read.ok || read.failure).toMatchObject({ status: 400, error: 'The form could not be read' });
    expect(leftIn(incoming)).toEqual([]);
  });

  test('the type is read from the bytes that arrived, held in memory: the temp file is not read again (issue 41 item 5)', async () => {
    // The file's bytes reach its temp file; before the post ends, the temp file is rewritten in
    // place with a PNG of the same size. A type read again from the disk would be image/png; read
    // from the head kept in memory as the bytes arrived, it is the PDF that was sent.
    const incoming = incomingFolder();
    const boundary = 'xyz';
    const pdf = Buffer.concat([PDF, Buffer.alloc(500, 0x20)]);
    const start = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="drawing"; filename="plan.pdf"\r\nContent-Type: application/pdf\r\n\r\n`);
    let finish!: () => void;
    const rest = new Promise<void>((resolve) => (finish = resolve));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(Buffer.concat([start, pdf]));
      },
      async pull(controller) {
        await rest;
        controller.enqueue(Buffer.from(`\r\n--${boundary}--\r\n`));
        controller.close();
      },
    });
    const reading = readUpload(post(body, { 'content-type': `multipart/form-data; boundary=${boundary}` }), form, incoming, limits);
    // Until the whole file is on the disk (the read waits for the closing boundary meanwhile).
    const onDisk = () => leftIn(incoming).find((name) => statSync(join(incoming, name)).size === pdf.length);
    while (!onDisk()) await new Promise((resolve) => setTimeout(resolve, 5));
    writeFileSync(join(incoming, onDisk()!), Buffer.concat([PNG, Buffer.alloc(pdf.length - PNG.length)]));
    finish();
    const read = await reading;
    if (!read.ok) throw new Error(read.failure.error);
    expect([read.files.map((file) => file.type), read.errors]).toEqual([['application/pdf'], {}]);
    await discard(read.files);
  });

  test('a zip whose kind is told past the head is still read whole: a .docx with [Content_Types].xml after a large thumbnail', async () => {
    const incoming = incomingFolder();
    const docx = storedZip([
      ['docProps/thumbnail.jpeg', Buffer.alloc(20_000, 7)],
      [
        '[Content_Types].xml',
        Buffer.from(
          '<?xml version="1.0"?><Types><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
        ),
      ],
      ['word/document.xml', Buffer.from('<w:document/>')],
    ]);
    const data = new FormData();
    data.append('drawing', new Blob([docx]), 'letter.docx');
    const read = await readUpload(post(data), form, incoming, { maxTotalBytes: 100_000 });
    if (!read.ok) throw new Error(read.failure.error);
    expect(read.files.map((file) => file.type)).toEqual(['application/vnd.openxmlformats-officedocument.wordprocessingml.document']);
    await discard(read.files);
  });

  test('a zip whose first entry lies in word/ and runs past the head, with no [Content_Types].xml, is a plain zip, and a .docm is not a .docx', async () => {
    // The head alone makes file-type guess a Word document from a word/ entry (review of issue 41).
    const incoming = incomingFolder();
    const archive = storedZip([
      ['word/payload.bin', Buffer.alloc(20_000, 7)],
      ['run.exe', Buffer.from('MZ')],
    ]);
    const docm = storedZip([
      ['word/document.xml', Buffer.alloc(20_000, 0x20)],
      [
        '[Content_Types].xml',
        Buffer.from(
          '<?xml version="1.0"?><Types><Override PartName="/word/document.xml" ContentType="application/vnd.ms-word.document.macroEnabled.main+xml"/></Types>',
        ),
      ],
    ]);
    const types: string[] = [];
    for (const [bytes, name] of [
      [archive, 'letter.docx'],
      [docm, 'macro.docx'],
    ] as const) {
      const data = new FormData();
      data.append('drawing', new Blob([bytes]), name);
      const read = await readUpload(post(data), form, incoming, { maxTotalBytes: 100_000 });
      if (!read.ok) throw new Error(read.failure.error);
      types.push(...read.files.map((file) => file.type));
      await discard(read.files);
    }
    expect(types).toEqual(['application/zip', 'application/vnd.ms-word.document.macroenabled.12']);
  });

  test('a TIFF whose directory lies past the head (as libtiff writes one) is still an image/tiff', async () => {
    const incoming = incomingFolder();
    const tiff = Buffer.alloc(12_000 + 18);
    tiff.write('II', 0, 'latin1');
    tiff.writeUInt16LE(42, 2);
    tiff.writeUInt32LE(12_000, 4);
    // One entry (ImageWidth = 1), then no next directory.
    tiff.writeUInt16LE(1, 12_000);
    tiff.writeUInt16LE(256, 12_002);
    tiff.writeUInt16LE(3, 12_004);
    tiff.writeUInt32LE(1, 12_006);
    tiff.writeUInt16LE(1, 12_010);
    tiff.writeUInt32LE(0, 12_014);
    const data = new FormData();
    data.append('drawing', new Blob([tiff]), 'scan.tif');
    const read = await readUpload(post(data), form, incoming, { maxTotalBytes: 100_000 });
    if (!read.ok) throw new Error(read.failure.error);
    expect(read.files.map((file) => file.type)).toEqual(['image/tiff']);
    await discard(read.files);
  });

  test('a post still arriving at its time limit is a 408 that closes the connection, and the file begun is removed', async () => {
    // What an owner's own Astro server hands over (the integration): its server's timeouts are not ours.
    const incoming = incomingFolder();
    const boundary = 'xyz';
    const start = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="drawing"; filename="plan.txt"\r\nContent-Type: text/plain\r\n\r\n`);
    let sent = 0;
    // A slow link: a piece of the file every 20 ms, for ever.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(start);
      },
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        sent += 1;
        controller.enqueue(Buffer.alloc(100, 'a'));
      },
    });
    const read = await readUpload(post(body, { 'content-type': `multipart/form-data; boundary=${boundary}` }), form, incoming, { ...limits, timeoutMs: 300 });
    expect(read).toEqual({
      ok: false,
      failure: {
        kind: 'failure',
        status: 408,
        error: 'The files took too long to arrive. Please try again, on a faster connection or with smaller files.',
        headers: { connection: 'close' },
      },
    });
    // Some of the file had arrived and been written before the cut.
    expect(sent).toBeGreaterThan(3);
    expect(leftIn(incoming)).toEqual([]);
  }, 10_000);
});
