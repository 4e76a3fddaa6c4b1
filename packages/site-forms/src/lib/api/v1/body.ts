import type { IncomingRequest } from '../../http/form.ts';
import { type Failure, failure } from '../../http/outcome.ts';

// The JSON bodies /api/v1 takes (issue 42): small objects, `application/json` in UTF-8, read whole
// within a limit of their own. Decision 0282.

/** The largest JSON body an /api/v1 route reads. */
export const API_BODY_LIMIT_BYTES = 4 * 1024;

/** The `code` of the API's own refusals beside those of `withKey` (api/auth.ts). */
export type ApiRefusalCode = 'not_found' | 'bad_request' | 'unsupported_type';

/** A refusal of an /api/v1 handler, in English (programs read it), with its `code`. */
export function apiFailure(status: 400 | 404 | 415, code: ApiRefusalCode, error: string): Failure {
  return failure(status, error, { code });
}

/** A JSON object sent to an /api/v1 route, or the refusal to answer: 415 for another type, 400 for too large or not an object. */
export async function readJsonObject(request: IncomingRequest): Promise<{ ok: true; value: Record<string, unknown> } | { ok: false; failure: Failure }> {
  const type = (request.headers.get('content-type') ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type !== 'application/json') return { ok: false, failure: apiFailure(415, 'unsupported_type', 'Send the body as application/json.') };
  const coding = (request.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
  if (coding !== 'identity') return { ok: false, failure: apiFailure(415, 'unsupported_type', 'Send the body without a Content-Encoding.') };
  const tooLarge = { ok: false as const, failure: apiFailure(400, 'bad_request', `The body is larger than ${API_BODY_LIMIT_BYTES} bytes.`) };
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > API_BODY_LIMIT_BYTES) return tooLarge;
  const bytes = request.readBody ? await request.readBody(API_BODY_LIMIT_BYTES) : await readWhole(request, API_BODY_LIMIT_BYTES);
  if (bytes === 'too-large') return tooLarge;
  if (bytes === 'unreadable') return { ok: false, failure: apiFailure(400, 'bad_request', 'The body could not be read.') };
  try {
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return { ok: true, value: value as Record<string, unknown> };
  } catch {
    // Not UTF-8, or not JSON: the same answer.
  }
  return { ok: false, failure: apiFailure(400, 'bad_request', 'The body must be a JSON object.') };
}

/** A Web request's body (the tests' `Request`), up to `limit` bytes. */
async function readWhole(request: IncomingRequest, limit: number): Promise<Uint8Array | 'too-large' | 'unreadable'> {
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
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
  } catch {
    return 'unreadable';
  }
  return Buffer.concat(chunks);
}
