import { randomUUID } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { join } from 'node:path';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import busboy from 'busboy';
import { DEFAULT_FILE_MAX_SIZE, type FieldDefinition, type FormDefinition, type FormErrors } from '../forms/definition.ts';
import { BODY_LIMIT_BYTES, declaredPast, type FormFields, type IncomingRequest, markReadWhole, readForm, rememberForm } from '../http/form.ts';
import { type Failure, failure } from '../http/outcome.ts';
import { language, texts } from '../i18n/texts.ts';
import { formatSize } from './size.ts';

/** A file of a post, written to its temp file as it arrived: its size counted, its type read from its bytes. */
export type ReceivedFile = {
  field: string;
  /** The visitor's name for it, cleaned for display; never a path. */
  name: string;
  size: number;
  /** The MIME type its bytes show (`file-type`), `text/plain` or `text/csv` for text, else `application/octet-stream`. */
  type: string;
  /** The temp file under `.incoming`, named by us. */
  path: string;
};

/**
 * What reading a post with files gave: its fields, its files (in temp files the caller must
 * `discard` once done), and the files refused at their field (a type not accepted); or the
 * failure to answer with, every temp file already removed.
 */
export type UploadRead =
  | { ok: true; fields: FormFields; files: ReceivedFile[]; errors: FormErrors }
  | { ok: false; failure: Failure; fields?: FormFields | undefined };

/**
 * The limits of one post with files: its files together, its other fields together (BODY_LIMIT_BYTES,
 * as a post without files), and the time it may take to arrive whole (UPLOAD_TIMEOUT_SECONDS).
 */
export type UploadLimits = {
  maxTotalBytes: number;
  fieldsBytes?: number;
  timeoutMs?: number | undefined;
  /**
   * Asked once, as the first file arrives (its bytes wait meanwhile): a failure to answer with
   * instead of writing it (a disk below UPLOAD_DISK_MIN_FREE_BYTES), or undefined to go on.
   * Hint: asked at the first file, not before the read, so a post without files never meets it.
   */
  beforeFirstFile?: (() => Promise<Failure | undefined>) | undefined;
};

/**
 * The bytes of a body beyond its fields and counted files that a read allows: the parts' headers
 * and boundaries (400 parts at most) and the chunks the parser holds before it tells a file's bytes.
 */
const UNCOUNTED_ROOM = 256 * 1024;

/** How much of a file's start is kept in memory, to tell its type from its signature and text from bytes. */
const HEAD_BYTES = 8 * 1024;

/**
 * How many bytes of a file may wait for the disk before its reading pauses: the socket's 64 kB
 * chunks then go to the disk while the next ones arrive, several at a time (one `writev`) when
 * the disk lags, instead of a pause and a wait after every chunk (the 16 kB default). 20 uploads
 * at once hold 5 MB at most; 1 MB gave no more speed in the bench and more memory.
 */
const WRITE_BUFFER_BYTES = 256 * 1024;

/**
 * Reads a form post with files as a stream (busboy): each file goes to a temp file under
 * `incoming` as it arrives, counted; past its field's `maxSize` or the post's `maxTotalBytes`
 * the read stops with a 413 naming the field (or the total), and no file is kept; so does a post
 * still arriving after `timeoutMs`, with a 408 that closes the connection, whoever owns the server
 * (ours, or an owner's own Astro server with the integration). A post that is not multipart has no
 * files and is read as every form is.
 * Hint: the visitor's file name is only ever shown; a temp file is named by a random UUID.
 */
export async function readUpload(request: IncomingRequest, form: FormDefinition, incoming: string, limits: UploadLimits): Promise<UploadRead> {
  const contentType = request.headers.get('content-type') ?? '';
  if (contentType.split(';', 1)[0]!.trim().toLowerCase() !== 'multipart/form-data') {
    const read = await readForm(request);
    return read.ok ? { ok: true, fields: read.fields, files: [], errors: {} } : read;
  }
  const fieldsBytes = limits.fieldsBytes ?? BODY_LIMIT_BYTES;
  if (declaredPast(request.headers.get('content-length'), limits.maxTotalBytes + fieldsBytes))
    return { ok: false, failure: totalTooLarge(limits.maxTotalBytes) };
  if ((request.headers.get('content-encoding') ?? 'identity').trim().toLowerCase() !== 'identity')
    return { ok: false, failure: failure(415, texts.refusals.formEncoding) };
  const fileFields = new Map(form.fields.filter((field) => field.type === 'file').map((field) => [field.name, field]));
  const body = bodyStream(request);
  const files: ReceivedFile[] = [];
  const writing = new Set<WriteStream>();
  // Every temp file's close: a file still opening when the read stops is removed only once it is closed.
  const closed: Promise<unknown>[] = [];
  const result = await new Promise<UploadRead>((resolve) => {
    let settled = false;
    const fields: FormFields = Object.create(null);
    const counts = new Map<string, number>();
    const errors: FormErrors = {};
    const pending: Promise<void>[] = [];
    let total = 0;
    let fieldTotal = 0;
    let parser: busboy.Busboy;
    let deadline: NodeJS.Timeout | undefined;
    const stop = (answer: Failure) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      body.unpipe(parser);
      for (const stream of writing) stream.destroy();
      // What was typed before the refusal, so a person's page shows it again (issue 39 item 8).
      resolve({ ok: false, failure: answer, ...(Object.keys(fields).length > 0 && { fields }) });
    };
    // Every byte of every part counts, kept or not: a part thrown away is no way past the total (issue 39 item 16).
    const count = (bytes: number): boolean => {
      total += bytes;
      if (total <= limits.maxTotalBytes) return true;
      stop(totalTooLarge(limits.maxTotalBytes));
      return false;
    };
    let firstFile: Promise<Failure | undefined> | undefined;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        defParamCharset: 'utf8',
        limits: {
          fieldNameSize: 100,
          fieldSize: fieldsBytes,
          fields: 200,
          files: [...fileFields.values()].reduce((sum, field) => sum + (field.maxFiles ?? 1), 0) + 1,
          parts: 400,
          headerPairs: 20,
        },
      });
    } catch {
      return resolve({ ok: false, failure: failure(400, texts.refusals.formUnreadable) });
    }
    // A slow link may take minutes for its files, but not for ever (issue 31 item 7, decision 0185).
    if (limits.timeoutMs !== undefined) deadline = setTimeout(() => stop(timedOut()), limits.timeoutMs);
    parser.on('field', (name, value, info) => {
      fieldTotal += Buffer.byteLength(name) + Buffer.byteLength(value);
      if (info.valueTruncated || info.nameTruncated || fieldTotal > fieldsBytes)
        return stop(failure(413, texts.refusals.tooLarge(Math.floor(fieldsBytes / 1024))));
      if (!Object.hasOwn(fields, name)) fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      // A body that ends inside a file destroys the file's stream with busboy's error: heard here,
      // or it would be an uncaught exception in the owner's process.
      stream.on('error', () => stop(failure(400, texts.refusals.formUnreadable)));
      if (settled) return void stream.resume();
      const field = fileFields.get(name);
      // A file where the form takes none is no browser's post: refused at once, its bytes not read on.
      if (!field) return stop(failure(400, texts.refusals.formUnreadable));
      // An input left empty: a browser sends a part with no name and no bytes; one with bytes is refused at its first.
      if (info.filename === undefined || info.filename === '') {
        stream.on('data', () => stop(failure(400, texts.refusals.formUnreadable)));
        return;
      }
      const filename = info.filename;
      const number = (counts.get(name) ?? 0) + 1;
      counts.set(name, number);
      if (number > (field.maxFiles ?? 1)) {
        errors[name] = [texts.validation.tooManyFiles(field.label, field.maxFiles ?? 1)];
        // Not kept, but its bytes still count against the total.
        stream.on('data', (chunk: Buffer) => void count(chunk.length));
        return;
      }
      // Its bytes wait until the first file may be written; the read's end waits for this file.
      stream.pause();
      firstFile ??= readyForFiles(incoming, limits.beforeFirstFile);
      pending.push(
        firstFile.then((refusal) => {
          if (refusal) return stop(refusal);
          if (settled) return void stream.resume();
          return keep(name, field, stream, filename);
        }),
      );
    });
    /** Writes a file to its temp file as it arrives, counted against its field's maxSize and the total; settles once it is written and typed. */
    const keep = (name: string, field: FieldDefinition, stream: Readable, filename: string): Promise<void> => {
      const path = join(incoming, randomUUID());
      const out = createWriteStream(path, { flags: 'wx', highWaterMark: WRITE_BUFFER_BYTES });
      writing.add(out);
      closed.push(once(out, 'close').catch(() => {}));
      const file: ReceivedFile = { field: name, name: displayName(filename), size: 0, type: 'application/octet-stream', path };
      files.push(file);
      const head: Buffer[] = [];
      let headSize = 0;
      const maxSize = field.maxSize ?? DEFAULT_FILE_MAX_SIZE;
      stream.on('data', (chunk: Buffer) => {
        file.size += chunk.length;
        if (file.size > maxSize) return stop(failure(413, fileTooLarge(field, maxSize), { field: name }));
        if (!count(chunk.length)) return;
        if (headSize < HEAD_BYTES) {
          head.push(chunk.subarray(0, HEAD_BYTES - headSize));
          headSize += Math.min(chunk.length, HEAD_BYTES - headSize);
        }
        if (!out.write(chunk)) {
          stream.pause();
          out.once('drain', () => stream.resume());
        }
      });
      const written = new Promise<void>((done) => {
        stream.once('end', () => out.end());
        out.once('close', () => {
          writing.delete(out);
          done();
        });
        out.once('error', () => stop(failure(503, texts.refusals.uploadsUnavailable, { headers: { 'retry-after': '60' } })));
      }).then(async () => {
        if (settled) return;
        file.type = await typeOf(file, Buffer.concat(head));
        if (field.accept && !accepts(field.accept, file)) {
          errors[name] = [...(errors[name] ?? []), texts.validation.fileType(field.label, field.accept.join(', '))];
        }
      });
      stream.resume();
      return written;
    };
    const limitHit = () => stop(failure(413, texts.refusals.tooLarge(Math.floor(fieldsBytes / 1024))));
    parser.on('partsLimit', limitHit);
    parser.on('filesLimit', limitHit);
    parser.on('fieldsLimit', limitHit);
    parser.on('error', () => stop(failure(400, texts.refusals.formUnreadable)));
    parser.on('close', () => {
      // The parser saw the closing boundary: the body was read to its end.
      markReadWhole(request);
      void Promise.all(pending).then(() => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve({ ok: true, fields, files, errors });
      });
    });
    // The body's own bytes, counted as they come: a field's are told only once it has ended, so a
    // 200 MB field would be read whole; past the fields' limit (and room for the parts' headers
    // and what the parser holds) beside the files counted, the read stops (issue 39 item 16).
    let bodyBytes = 0;
    body.on('data', (chunk: Buffer) => {
      bodyBytes += chunk.length;
      if (bodyBytes - total > fieldsBytes + UNCOUNTED_ROOM) stop(failure(413, texts.refusals.tooLarge(Math.floor(fieldsBytes / 1024))));
    });
    // A body that breaks off (the client went away, the request timed out) leaves nothing behind.
    body.on('error', () => stop(failure(400, texts.refusals.formUnreadable)));
    body.on('aborted', () => stop(failure(400, texts.refusals.formUnreadable)));
    body.pipe(parser);
  });
  if (!result.ok) {
    await Promise.all(closed);
    await discard(files);
  }
  // The body is read: whoever asks for the form again (the pipeline, for `_next`) gets these fields.
  rememberForm(request, result.ok ? { ok: true, fields: result.fields } : { ok: false, failure: result.failure });
  return result;
}

/**
 * The fields a post with files sends before its first file, read to show a refused post's form
 * again with what was typed (a 413 from the declared length, a 403, a 429): nothing past the first
 * file with a name, nor past `fieldsBytes` of the body, is read; none when the post is not multipart.
 * Hint: a browser sends the fields in the form's order, so the text fields above a file field
 * come first; the rest of the body is left unread, and the server closes the connection.
 */
export async function readFieldsAhead(request: IncomingRequest, fieldsBytes = BODY_LIMIT_BYTES): Promise<FormFields> {
  const fields: FormFields = Object.create(null);
  const contentType = request.headers.get('content-type') ?? '';
  if (contentType.split(';', 1)[0]!.trim().toLowerCase() !== 'multipart/form-data') return fields;
  if ((request.headers.get('content-encoding') ?? 'identity').trim().toLowerCase() !== 'identity') return fields;
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: { 'content-type': contentType }, defParamCharset: 'utf8', limits: { fieldSize: fieldsBytes, fields: 200, parts: 400 } });
  } catch {
    return fields;
  }
  const body = bodyStream(request);
  await new Promise<void>((resolve) => {
    let read = 0;
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      body.unpipe(parser);
      body.off('data', counted);
      resolve();
    };
    const counted = (chunk: Buffer) => {
      read += chunk.length;
      if (read > fieldsBytes) done();
    };
    parser.on('field', (name, value) => {
      if (!settled && !Object.hasOwn(fields, name)) fields[name] = value;
    });
    parser.on('file', (_name, stream, info) => {
      stream.on('error', done);
      if (info.filename) return done();
      stream.resume();
    });
    for (const event of ['close', 'error', 'partsLimit', 'fieldsLimit']) parser.on(event, done);
    body.on('error', done);
    body.on('aborted', done);
    body.on('data', counted);
    body.pipe(parser);
  });
  rememberForm(request, { ok: true, fields });
  return fields;
}

/** Whether files may be written now: the caller's own check (the disk's room), then the incoming folder, made when missing; a failure to answer with if not. */
async function readyForFiles(incoming: string, check: UploadLimits['beforeFirstFile']): Promise<Failure | undefined> {
  const refusal = await check?.();
  if (refusal) return refusal;
  try {
    await mkdir(incoming, { recursive: true });
    return undefined;
  } catch {
    return failure(503, texts.refusals.uploadsUnavailable, { headers: { 'retry-after': '60' } });
  }
}

/** Removes the temp files of a post: after it is stored, and after any refusal. */
export async function discard(files: readonly Pick<ReceivedFile, 'path'>[]): Promise<void> {
  await Promise.all(files.map((file) => rm(file.path, { force: true })));
}

/** The body as a Node stream: our server's request itself, or a Web Request's stream (the tests). */
function bodyStream(request: IncomingRequest): Readable {
  if (request.stream) return request.stream();
  if (request.body) return Readable.fromWeb(request.body as import('node:stream/web').ReadableStream<Uint8Array>);
  return Readable.from([]);
}

/** A post still arriving at its time limit: the rest is not waited for, so the connection closes with the answer. */
function timedOut(): Failure {
  return failure(408, texts.refusals.uploadTimedOut, { headers: { connection: 'close' } });
}

function totalTooLarge(maxTotalBytes: number): Failure {
  return failure(413, texts.refusals.uploadTooLarge(formatSize(maxTotalBytes, language)));
}

function fileTooLarge(field: FieldDefinition, maxSize: number): string {
  return texts.validation.fileTooLarge(field.label, formatSize(maxSize, language));
}

/** A file name as the owner may read it: its last segment (a browser may send a path), without control characters, at most 200 characters. */
export function displayName(raw: string): string {
  const last = raw.split(/[\\/]/).pop() ?? '';
  const clean = last.replace(/[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069]/g, '').trim();
  return [...clean].slice(0, 200).join('') || 'file';
}

/**
 * The file's type from its own bytes: from its head in memory when the head settles it, else from
 * the temp file, read from its start (decision 0245): a zip's kind (.docx, .docm, .xlsx, .odt, or
 * a plain archive) is told by entries that may lie past the head, where file-type would guess a
 * Word document from a `word/` entry alone, and a TIFF's directory is most often at its end. What
 * `file-type` recognises; text it cannot tell (UTF-8 with no control characters but tab and line
 * breaks) is `text/csv` when named .csv, else `text/plain`; anything else is `application/octet-stream`.
 */
async function typeOf(file: ReceivedFile, head: Buffer): Promise<string> {
  const detector = await loadFileType().catch(() => undefined);
  const whole = file.size <= head.length;
  let found = detector && (await detector.fileTypeFromBuffer(head).catch(() => undefined));
  if (detector && !whole && (found === undefined || head.subarray(0, 4).equals(ZIP_SIGNATURE))) {
    found = await detector.fileTypeFromFile(file.path).catch(() => undefined);
  }
  if (found) return found.mime;
  if (file.size > 0 && looksLikeText(head, !whole)) return /\.csv$/i.test(file.name) ? 'text/csv' : 'text/plain';
  return 'application/octet-stream';
}

/** A zip's local file header: the head alone cannot say what kind of zip it is. */
const ZIP_SIGNATURE = Buffer.from('PK\x03\x04', 'latin1');

/**
 * `file-type`, loaded with the first file: a server whose forms take none never holds its ~3 MB
 * (issue 41 item 4). A load that failed is tried again with the next file.
 */
let fileType: Promise<typeof import('file-type')> | undefined;
const loadFileType = () =>
  (fileType ??= import('file-type').catch((error: unknown) => {
    fileType = undefined;
    throw error;
  }));

function looksLikeText(head: Buffer, cut: boolean): boolean {
  // A character cut at the end of the head is not a fault of the file.
  let sample = head;
  if (cut) for (let trim = 0; trim < 4 && !isUtf8(sample); trim++) sample = head.subarray(0, head.length - trim - 1);
  return isUtf8(sample) && !/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(sample.toString('utf8'));
}

/** The extensions a type read from the bytes answers to, beyond its own name (`.jpg` for image/jpeg). */
const EXTENSIONS: Readonly<Record<string, readonly string[]>> = {
  'image/jpeg': ['.jpg', '.jpeg'],
  'image/png': ['.png'],
  'image/gif': ['.gif'],
  'image/webp': ['.webp'],
  'image/heic': ['.heic'],
  'image/tiff': ['.tif', '.tiff'],
  'application/pdf': ['.pdf'],
  'application/zip': ['.zip'],
  'text/plain': ['.txt'],
  'text/csv': ['.csv'],
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': ['.docx'],
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': ['.xlsx'],
  'application/vnd.oasis.opendocument.text': ['.odt'],
  'application/vnd.oasis.opendocument.spreadsheet': ['.ods'],
  'application/x-cfb': ['.doc', '.xls'],
};

/** Whether a field's `accept` takes a file of the type its bytes showed: by MIME type, a wildcard, or an extension of that type (never the visitor's name alone). */
export function accepts(accept: readonly string[], file: Pick<ReceivedFile, 'type'>): boolean {
  const type = file.type;
  return accept.some((entry) =>
    entry.startsWith('.') ? (EXTENSIONS[type] ?? []).includes(entry) : entry.endsWith('/*') ? type.startsWith(entry.slice(0, -1)) : entry === type,
  );
}
