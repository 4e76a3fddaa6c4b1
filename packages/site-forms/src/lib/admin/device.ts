import type { IncomingRequest } from '../http/form.ts';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PasswordHash } from './password.ts';

/** How long a browser that signed in keeps its place in the sign-in queue: a year. */
export const DEVICE_MAX_AGE_SECONDS = 365 * 24 * 3600;

/**
 * A browser that signed in before: a signed cookie (`<random id>.<HMAC-SHA256>`) that lets it
 * keep its place in the password check's queue when a flood from many addresses fills it.
 * Hint: the key comes from the password's hash, so changing the password forgets every device;
 * the cookie signs nobody in by itself.
 */
export type Devices = {
  /** Whether the request carries a device cookie this site signed. */
  known(request: IncomingRequest, secure: boolean): boolean;
  /** The `Set-Cookie` value of a new device cookie. */
  cookie(secure: boolean): string;
};

/**
 * The device cookies of one password hash (its salt and key; a random pair for an admin without
 * ADMIN_PASSWORD_HASH, whose device cookies are then forgotten at each start until issue 42 step
 * S3b keys them from a stored secret).
 */
export function createDevices(hash: Pick<PasswordHash, 'salt' | 'key'>): Devices {
  const key = createHmac('sha256', 'site-forms-admin-device').update(hash.salt).update(hash.key).digest();
  const sign = (id: string) => createHmac('sha256', key).update(`device:${id}`).digest('base64url');
  return {
    known(request, secure) {
      const value = readCookie(request, deviceCookieName(secure));
      const match = value && /^([\w-]{22})\.([\w-]{43})$/.exec(value);
      if (!match) return false;
      return timingSafeEqual(Buffer.from(sign(match[1]!)), Buffer.from(match[2]!));
    },
    cookie(secure) {
      const id = randomBytes(16).toString('base64url');
      return `${deviceCookieName(secure)}=${id}.${sign(id)}; Path=/; Max-Age=${DEVICE_MAX_AGE_SECONDS}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
    },
  };
}

/** The cookie's name: `__Host-` on https, as the session's. */
export function deviceCookieName(secure: boolean): string {
  return secure ? '__Host-admin_device' : 'admin_device';
}

function readCookie(request: IncomingRequest, name: string): string | undefined {
  for (const pair of (request.headers.get('cookie') ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}
