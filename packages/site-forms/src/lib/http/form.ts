import { isUtf8 } from 'node:buffer';
import { texts } from '../i18n/texts.ts';
import { type Failure, failure } from './outcome.ts';
import { readPlainMultipart } from './plain-multipart.ts';

/**
 * What the pipeline, the guard and the handlers read of a request: its method, URL and
 * headers, and its body only through `readForm`. A Web `Request` is one (the tests); our
 * dispatcher, under `npm start` and `npm run dev` alike, builds a plain one over the Node
 * request (src/server/dispatch.ts), since undici's `Request` (an AbortSignal, a second copy
 * of the headers) cost more than the parsing.
 */
export type IncomingRequest = {
  readonly method: string;
  readonly url: string;
  readonly headers: Headers;
  readonly body?: ReadableStream<Uint8Array> | null;
  /**
   * How our server reads the body from the Node request, without a Web stream (once; a second
   * call gets the first's answer). A Web `Request` has none: its `body` stream is read instead.
   */
  readonly readBody?: BodyReader | undefined;
  /** The body as our server holds it, a Node stream, for a post with files read as it arrives (src/lib/files/multipart.ts). */
  readonly stream?: (() => import('node:stream').Readable) | undefined;
};

/** The largest form body the endpoints read, in bytes (a route with files adds their total: `bodyLimitOf`, src/lib/pipeline/body-limit.ts); the adapter is set to the same. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** The fields of a form: the first value given for each name, as a browser sends it. */
export type FormFields = Record<string, string | File>;

/** The answer of `readForm`: the fields, or the failure to answer with instead. */
export type FormResult = { ok: true; fields: FormFields } | { ok: false; failure: Failure };

const FORM_TYPES = ['multipart/form-data', 'application/x-www-form-urlencoded'];

/** Each request's form as first read, so the pipeline can read `_next` after the handler without parsing twice. */
const READ = new WeakMap<IncomingRequest, { limit: number | 'any'; result: Promise<FormResult> }>();

/** The requests whose body a reader has read to its end (src/lib/files/multipart.ts marks its own). */
const READ_WHOLE = new WeakSet<IncomingRequest>();

/** Says that a request's body was read to its end: its connection may carry the next request. */
export function markReadWhole(request: IncomingRequest): void {
  READ_WHOLE.add(request);
}

/**
 * Whether a reader took a request's body and stopped before its end (a file past its limit): the
 * rest is left on the connection, which must then close with the answer (issue 39 item 19).
 * Hint: a body no reader touched (refused from its headers) is not one: Node's server reads it
 * away itself after the answer and keeps the connection, and closing would cut a client still
 * sending it (a `fetch` whose small post is refused for its origin fails with EPIPE).
 */
export function leavesBodyUnread(request: IncomingRequest): boolean {
  if (READ_WHOLE.has(request) || request.body?.locked !== true) return false;
  const length = request.headers.get('content-length');
  return request.headers.has('transfer-encoding') || (length !== null && length !== '0');
}

/**
 * Keeps what another reader made of a request's form (the reader of posts with files,
 * src/lib/files/multipart.ts), so a later `readForm` of the same request answers it, whatever its
 * limit, instead of reading a body that reader has taken (issue 39 item 1).
 */
export function rememberForm(request: IncomingRequest, result: FormResult): void {
  READ.set(request, { limit: 'any', result: Promise.resolve(result) });
}

/**
 * Reads a form post as browsers send it, refusing other content types (415), bodies past
 * the limit (413) and bodies that do not parse (400) with the JSON shape of the spec.
 * Hint: the body is read with our own byte count so the limit holds without a Content-Length;
 * a second read of the same request with the same limit gets the first's answer.
 */
export function readForm(request: IncomingRequest, limit = BODY_LIMIT_BYTES): Promise<FormResult> {
  const read = READ.get(request);
  if (read && (read.limit === limit || read.limit === 'any')) return read.result;
  const result = parseFormOf(request, limit);
  READ.set(request, { limit, result });
  return result;
}

async function parseFormOf(request: IncomingRequest, limit: number): Promise<FormResult> {
  const contentType = request.headers.get('content-type') ?? '';
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
  if (!FORM_TYPES.includes(mediaType)) {
    return refuse(failure(415, texts.refusals.formType));
  }
  // Browsers never compress a form; a body labelled gzip that we read as it is would be one
  // thing to a filter in front that decompresses it and another here.
  const coding = (request.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
  if (coding !== 'identity') return refuse(failure(415, texts.refusals.formEncoding));
  // Asked before the read, as the guard asks it with the route's limit: a reader on its own (the admin's) refuses a 10 MB post unread too.
  if (declaredPast(request.headers.get('content-length'), limit)) return refuse(tooLarge(limit));
  // A form in another charset would be read as UTF-8 and stored silently altered (é as U+FFFD).
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return refuse(failure(400, NOT_UTF8));

  const body = request.readBody ? await request.readBody(limit) : await readBody(request, limit);
  if (body === 'too-large') return refuse(tooLarge(limit));
  if (body === 'unreadable') return refuse(failure(400, texts.refusals.formUnreadable));

  let form: Iterable<[string, string | File]>;
  if (mediaType === 'multipart/form-data') {
    if (!isUtf8(body)) return refuse(failure(400, NOT_UTF8));
    // A browser's text fields are read straight from the bytes; any other shape by the runtime's parser.
    const plain = readPlainMultipart(Buffer.from(body.buffer, body.byteOffset, body.byteLength), contentType);
    if (plain) form = plain;
    else {
      try {
        form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
      } catch {
        return refuse(failure(400, texts.refusals.formUnreadable));
      }
    }
  } else {
    // Parsed here as `Response.formData()` parses it (the bytes as UTF-8, a BOM kept, through
    // URLSearchParams), without a Web stream and a second copy of the bytes.
    const text = urlencodedText(body);
    if (text === undefined) return refuse(failure(400, NOT_UTF8));
    form = new URLSearchParams(text);
  }
  // No prototype: a field named __proto__ must stay a field.
  const fields: FormFields = Object.create(null);
  for (const [name, value] of form) {
    if (!Object.hasOwn(fields, name)) fields[name] = value;
  }
  return { ok: true, fields };
}

/** Reads a request's body, up to `limit` bytes, from where our server holds it (`IncomingRequest.readBody`). */
export type BodyReader = (limit: number) => Promise<Uint8Array<ArrayBuffer> | 'too-large' | 'unreadable'>;

/** The text of an urlencoded form, or `undefined` when it, or a percent-escape run in it, is not UTF-8. */
function urlencodedText(body: Uint8Array): string | undefined {
  if (!isUtf8(body)) return undefined;
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  if (!text.includes('%')) return text;
  try {
    // A lone `%` (curl -d "100% sure") stays a percent sign, as the parser keeps it.
    for (const part of text.split('&')) decodeURIComponent(part.replace(/%(?![0-9a-f]{2})/gi, '%25'));
    return text;
  } catch {
    return undefined;
  }
}

/** The error for a form that is not UTF-8: refused rather than stored with its letters replaced. */
export const NOT_UTF8 = texts.refusals.notUtf8;

function refuse(failure: Failure): FormResult {
  return { ok: false, failure };
}

function tooLarge(limit: number): Failure {
  return failure(413, tooLargeMessage(limit));
}

/**
 * Whether a request's declared Content-Length is past `limit`: the one comparison of a declared
 * length, asked before a byte is read (the pipeline's guard, src/lib/pipeline/body-limit.ts, and the readers).
 * Hint: no length, or one that is no number, is not past it: the read then counts the bytes.
 */
export function declaredPast(contentLength: string | null | undefined, limit: number): boolean {
  return Number(contentLength ?? 'NaN') > limit;
}

/** The error of a 413, also sent by our server before any body is read. */
export function tooLargeMessage(limit = BODY_LIMIT_BYTES): string {
  return texts.refusals.tooLarge(Math.floor(limit / 1024));
}

async function readBody(request: IncomingRequest, limit: number): Promise<Uint8Array<ArrayBuffer> | 'too-large' | 'unreadable'> {
  if (!request.body) {
    markReadWhole(request);
    return new Uint8Array();
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        markReadWhole(request);
        break;
      }
      size += value.byteLength;
      if (size > limit) {
        void reader.cancel().catch(() => {});
        return 'too-large';
      }
      chunks.push(value);
    }
  } catch (error) {
    // A stream that fails on a limit of its own (the adapter's, when it carried posts) was too large, not unreadable.
    return /limit/i.test(String(error)) ? 'too-large' : 'unreadable';
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
