import { readBoundedText } from '../bounded-text.ts';

/**
 * What an outside check (Turnstile, Akismet) answered: a signal for the verdict, or none
 * with the reason why, so that an outage or a wrong key never holds or loses a message.
 */
export type OutsideCheck = { ok: true; spam: boolean } | { ok: false; detail: string; check?: string };

/** How long one outside check may take before it counts as no answer. */
export const OUTSIDE_TIMEOUT_MS = 5_000;

/** The HTTP answer of an outside service, read whole, or why there was none. */
export type WireAnswer = { ok: true; status: number; headers: Headers; text: string } | { ok: false; detail: string };

/**
 * Posts a form-encoded body and reads the answer as text, within `timeoutMs`.
 * Hint: redirects are not followed: the body carries a secret, which must reach only the
 * configured address.
 */
export async function postUrlEncoded(url: string, body: Record<string, string>, timeoutMs: number): Promise<WireAnswer> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // Read inside the try: a reset half-way through the body is no answer too.
    return { ok: true, status: response.status, headers: response.headers, text: await readBoundedText(response) };
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    return { ok: false, detail: name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : 'no answer (connection failed)' };
  }
}
