import { createHmac, timingSafeEqual } from 'node:crypto';

/** How long a person has to press "Send my message" on the confirmation page. */
export const CONFIRMATION_TTL_MS = 24 * 3600 * 1000;

/**
 * The token of a confirmation page: which held message, until when, and a signature with the
 * site's signing secret (`<id>.<expires, Unix seconds>.<base64url HMAC-SHA256>`).
 * Hint: it is single-use because confirming moves the message out of `spam` once; a second
 * press finds it already on its way.
 */
export function signConfirmation(id: number, secret: string, now: number): string {
  const expires = Math.floor((now + CONFIRMATION_TTL_MS) / 1000);
  return `${id}.${expires}.${mac(`${id}.${expires}`, secret)}`;
}

/** The message a confirmation token stands for, or `undefined` when it is malformed, forged or expired. */
export function readConfirmation(token: unknown, secret: string, now: number): number | undefined {
  if (typeof token !== 'string') return undefined;
  const match = /^([1-9]\d{0,15})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return undefined;
  const [, id, expires, signature] = match as unknown as [string, string, string, string];
  const expected = Buffer.from(mac(`${id}.${expires}`, secret));
  if (!timingSafeEqual(expected, Buffer.from(signature))) return undefined;
  if (Number(expires) * 1000 <= now) return undefined;
  return Number(id);
}

function mac(payload: string, secret: string): string {
  // A purpose of its own, so that no other signature made with the secret passes for one.
  return createHmac('sha256', secret).update(`contact-confirmation:${payload}`).digest('base64url');
}
