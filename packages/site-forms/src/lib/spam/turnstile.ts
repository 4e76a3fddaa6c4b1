import { OUTSIDE_TIMEOUT_MS, type OutsideCheck, postUrlEncoded } from './outside.ts';

// The field's name is one of the reserved ones a form's field may not take: it lives with them.
export { TURNSTILE_FIELD } from '../forms/reserved.ts';

/** Where Cloudflare answers siteverify; tests point the client at a fake on 127.0.0.1. */
export const TURNSTILE_BASE_URL = 'https://challenges.cloudflare.com';

/** Cloudflare Turnstile's server-side check of a widget token. */
export interface TurnstileClient {
  /** Asks siteverify whether `token` came from a browser that passed; `spam: true` when it did not. */
  verify(token: string, remoteIp?: string): Promise<OutsideCheck>;
}

/** The error codes that say the key is wrong rather than the visitor (Cloudflare's documentation). */
const SECRET_ERRORS = new Set(['missing-input-secret', 'invalid-input-secret']);

/** The error codes that judge the token: forged, expired or already used. */
const TOKEN_ERRORS = new Set(['missing-input-response', 'invalid-input-response', 'timeout-or-duplicate']);

/** Creates the siteverify client for one secret key. */
export function createTurnstileClient({
  secret,
  baseUrl = TURNSTILE_BASE_URL,
  timeoutMs = OUTSIDE_TIMEOUT_MS,
}: {
  secret: string;
  baseUrl?: string;
  timeoutMs?: number;
}): TurnstileClient {
  const url = `${baseUrl}/turnstile/v0/siteverify`;
  return {
    async verify(token, remoteIp) {
      // No token at all: the widget never ran, which is an answer by itself; Cloudflare need not be asked.
      if (!token) return { ok: true, spam: true };
      const body: Record<string, string> = { secret, response: token };
      if (remoteIp) body.remoteip = remoteIp;
      const answer = await postUrlEncoded(url, body, timeoutMs);
      if (!answer.ok) return { ok: false, detail: answer.detail };
      return classifyTurnstileAnswer(answer.status, answer.text);
    },
  };
}

/** Maps one siteverify answer to a signal, or to none when it says nothing about the visitor. */
export function classifyTurnstileAnswer(status: number, text: string): OutsideCheck {
  if (status !== 200) return { ok: false, detail: `HTTP ${status}` };
  let body: { success?: unknown; 'error-codes'?: unknown };
  try {
    body = JSON.parse(text) ?? {};
  } catch {
    return { ok: false, detail: 'HTTP 200 that is not JSON' };
  }
  if (body.success === true) return { ok: true, spam: false };
  const codes = Array.isArray(body['error-codes']) ? body['error-codes'].filter((c): c is string => typeof c === 'string') : [];
  if (codes.some((code) => SECRET_ERRORS.has(code))) return { ok: false, detail: `refused the key (${codes.join(', ')})`, check: 'TURNSTILE_SECRET_KEY' };
  if (body.success === false && codes.some((code) => TOKEN_ERRORS.has(code))) return { ok: true, spam: true };
  return { ok: false, detail: `no verdict (${codes.join(', ') || 'no error code'})` };
}
