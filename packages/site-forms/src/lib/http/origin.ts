import type { IncomingRequest } from './form.ts';
import { isIP } from 'node:net';
import { texts } from '../i18n/texts.ts';
import { type Failure, failure } from './outcome.ts';

/** Methods that change something, and so are subject to the origin policy. */
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What a post from another website is told (and the page without JavaScript shows). */
export const FOREIGN_ORIGIN_MESSAGE = texts.refusals.foreignOrigin;

/** What a request addressed to another site's name is told (DNS rebinding, a stray proxy). */
export const MISDIRECTED_MESSAGE = texts.refusals.misdirected;

/** How the site's public address is known: named by `PUBLIC_URL`, or read from the request through trusted proxies. */
export type PublicAddressSettings = {
  /** The site's origin as visitors type it (`PUBLIC_URL`), or undefined to take it from each request. */
  publicUrl: string | undefined;
  /** How many reverse proxies sit in front (`TRUST_PROXY`); their `X-Forwarded-*` headers are believed. */
  trustProxy: number;
};

/** Everything the origin policy needs to know. */
export type OriginSettings = PublicAddressSettings & { allowedOrigins: readonly string[] };

/** The verdict on a request's `Origin`. */
export type OriginVerdict =
  | { kind: 'misdirected' }
  | { kind: 'no-origin' }
  | { kind: 'same-origin' }
  | { kind: 'allowed'; origin: string }
  | { kind: 'forbidden'; origin: string };

// A host as it may appear in Host or X-Forwarded-Host: a name or IPv4, or a bracketed IPv6, and a port.
const HOST_PATTERN = /^(?:\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::\d{1,5})?$/i;

/**
 * The origin the visitor's browser addressed, such as `https://www.example.com`: `PUBLIC_URL`
 * when set; else, with `TRUST_PROXY` ≥ 1, the scheme and host the trusted proxy reports
 * (`X-Forwarded-Proto`, `X-Forwarded-Host` or else `Host`); else `http://` and the `Host` header.
 * Undefined when the host is missing or malformed. Cookies are `Secure` when this is https.
 */
export function publicOrigin(headers: Headers, settings: PublicAddressSettings): string | undefined {
  if (settings.publicUrl) return settings.publicUrl;
  const host = requestHost(headers, settings.trustProxy);
  if (host === undefined) return undefined;
  const forwardedProto = forwardedValue(headers.get('x-forwarded-proto'), settings.trustProxy)?.toLowerCase();
  const scheme = forwardedProto === 'https' || forwardedProto === 'http' ? forwardedProto : 'http';
  return originOf(`${scheme}://${host}`);
}

/**
 * Whether a request is addressed to this site: always when `PUBLIC_URL` is unset; when it
 * is set, only its host name, an IP address or `localhost` (what an operator's own curl uses).
 * Hint: a DNS-rebinding page reaches the server under the attacker's name, which this refuses.
 */
export function isAddressedToSite(headers: Headers, settings: PublicAddressSettings): boolean {
  if (!settings.publicUrl) return true;
  const host = requestHost(headers, settings.trustProxy);
  if (host === undefined) return false;
  const name = host
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  return name === new URL(settings.publicUrl).hostname || name === 'localhost' || isIP(name) !== 0;
}

/**
 * Judges a request's address and `Origin` header: a request addressed to another site is
 * misdirected; then an absent `Origin` (curl, servers) and the site's own pass, an origin in
 * `ALLOWED_ORIGINS` passes with CORS, any other is refused.
 * Hint: a browser always sends `Origin` on a cross-site post, so a missing one is not a browser attack.
 */
export function judgeOrigin(request: IncomingRequest, settings: OriginSettings): OriginVerdict {
  if (!isAddressedToSite(request.headers, settings)) return { kind: 'misdirected' };
  const origin = request.headers.get('origin');
  if (origin === null) return { kind: 'no-origin' };
  if (origin === publicOrigin(request.headers, settings)) return { kind: 'same-origin' };
  if (settings.allowedOrigins.includes(origin)) return { kind: 'allowed', origin };
  return { kind: 'forbidden', origin };
}

/** The CORS headers for an allowed foreign origin. */
export function corsHeaders(origin: string): Record<string, string> {
  return { 'access-control-allow-origin': origin, vary: 'Origin' };
}

/** What the origin policy says of a request: refuse it, answer its preflight, or go on with these headers. */
export type OriginPolicy = { refuse: Failure; origin?: string } | { preflight: Record<string, string> } | { headers: Record<string, string> };

/**
 * Applies the origin policy to a request to a route: a refusal (an outcome, rendered like
 * the handler's, with the refused origin when one was), the headers of a preflight's 204, or
 * the headers to add to the answer.
 */
export function applyOriginPolicy(request: IncomingRequest, settings: OriginSettings): OriginPolicy {
  const verdict = judgeOrigin(request, settings);
  if (verdict.kind === 'misdirected') return { refuse: failure(421, MISDIRECTED_MESSAGE) };
  const preflight = request.method === 'OPTIONS' && request.headers.has('access-control-request-method');
  if (verdict.kind === 'forbidden' && (preflight || UNSAFE_METHODS.has(request.method))) {
    return { refuse: failure(403, FOREIGN_ORIGIN_MESSAGE), origin: verdict.origin };
  }
  const headers = verdict.kind === 'allowed' ? corsHeaders(verdict.origin) : { vary: 'Origin' };
  if (preflight) {
    return {
      preflight: {
        ...headers,
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': 'Content-Type, Accept',
        'access-control-max-age': '600',
      },
    };
  }
  return { headers };
}

/** The host the request was sent to: the trusted proxy's `X-Forwarded-Host`, else `Host`; undefined when malformed. */
function requestHost(headers: Headers, trustProxy: number): string | undefined {
  const host = forwardedValue(headers.get('x-forwarded-host'), trustProxy) ?? headers.get('host') ?? '';
  return HOST_PATTERN.test(host) ? host : undefined;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * The value the outermost trusted proxy wrote in an `X-Forwarded-*` header: like
 * `X-Forwarded-For`, the `trustProxy`-th entry from the right, since the left is the client's.
 */
function forwardedValue(header: string | null, trustProxy: number): string | undefined {
  if (trustProxy <= 0 || header === null) return undefined;
  const entries = header
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return entries[Math.max(0, entries.length - trustProxy)];
}
