/** The largest request body the endpoints read, in bytes; the adapter is set to the same. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** The message every unexpected failure answers with (SPEC.md 4.2). */
export const INTERNAL_ERROR = 'Internal server error';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** A JSON answer; every answer of `/api/*` goes through here. */
export function json(status: number, body: { success: boolean } & Record<string, unknown>, headers?: HeadersInit): Response {
  const response = new Response(JSON.stringify(body), { status, headers: JSON_HEADERS });
  if (headers) for (const [name, value] of new Headers(headers)) response.headers.set(name, value);
  return response;
}

/** `200 { "success": true }`: the work is done or durably stored. */
export function success(): Response {
  return json(200, { success: true });
}

/** A failure with the singular `error` string of SPEC.md 2.3. */
export function failure(status: number, error: string, headers?: HeadersInit): Response {
  return json(status, { success: false, error }, headers);
}

/** A contact validation failure with the plural `errors` object of SPEC.md 2.3. */
export function invalid(errors: Record<string, readonly string[] | undefined>): Response {
  return json(400, { success: false, errors });
}

/** The fields of a form: the first value given for each name, as a browser sends it. */
export type FormFields = Record<string, string | File>;

/** The answer of `readForm`: the fields, or the response to send instead. */
export type FormResult = { ok: true; fields: FormFields } | { ok: false; response: Response };

const FORM_TYPES = ['multipart/form-data', 'application/x-www-form-urlencoded'];

/**
 * Reads a form post as browsers send it, refusing other content types (415), bodies past
 * the limit (413) and bodies that do not parse (400) with the JSON shape of the spec.
 * Hint: the body is read with our own byte count so the limit holds without a Content-Length.
 */
export async function readForm(request: Request, limit = BODY_LIMIT_BYTES): Promise<FormResult> {
  const contentType = request.headers.get('content-type') ?? '';
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
  if (!FORM_TYPES.includes(mediaType)) {
    return refuse(failure(415, 'Send the form as multipart/form-data or application/x-www-form-urlencoded'));
  }
  const declared = Number(request.headers.get('content-length') ?? 'NaN');
  if (declared > limit) return refuse(tooLarge(limit));

  const body = await readBody(request, limit);
  if (body === 'too-large') return refuse(tooLarge(limit));
  if (body === 'unreadable') return refuse(failure(400, 'The form could not be read'));

  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch {
    return refuse(failure(400, 'The form could not be read'));
  }
  // No prototype: a field named __proto__ must stay a field.
  const fields: FormFields = Object.create(null);
  for (const [name, value] of form) {
    if (!Object.hasOwn(fields, name)) fields[name] = value;
  }
  return { ok: true, fields };
}

function refuse(response: Response): FormResult {
  return { ok: false, response };
}

function tooLarge(limit: number): Response {
  return failure(413, tooLargeMessage(limit));
}

/** The error of a 413, also sent by our server before any body is read. */
export function tooLargeMessage(limit = BODY_LIMIT_BYTES): string {
  return `The form is too large; the limit is ${Math.floor(limit / 1024)} KB`;
}

async function readBody(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer> | 'too-large' | 'unreadable'> {
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        void reader.cancel().catch(() => {});
        return 'too-large';
      }
      chunks.push(value);
    }
  } catch (error) {
    // The adapter enforces the same limit by failing the stream.
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

/** 405 for a method an endpoint does not take, naming the ones it does. */
export function methodNotAllowed(allowed: readonly string[]): Response {
  return failure(405, `Use ${allowed.join(' or ')} for this address`, { allow: allowed.join(', ') });
}

/** 429 with `Retry-After`, for a client or an address past its limit. */
export function tooManyRequests(retryAfterSeconds: number): Response {
  const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
  return failure(429, `Too many attempts. Please try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, {
    'retry-after': String(retryAfterSeconds),
  });
}
