import { failure } from './http.ts';

/** Methods that change something, and so are subject to the origin policy. */
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The verdict on a request's `Origin`. */
export type OriginVerdict = { kind: 'no-origin' } | { kind: 'same-origin' } | { kind: 'allowed'; origin: string } | { kind: 'forbidden'; origin: string };

/**
 * Judges a request's `Origin` header: absent (curl, servers) and same-origin pass, an
 * origin in `ALLOWED_ORIGINS` passes with CORS, any other is refused.
 * Hint: a browser always sends `Origin` on a cross-site post, so a missing one is not a browser attack.
 */
export function judgeOrigin(request: Request, siteOrigin: string, allowedOrigins: readonly string[]): OriginVerdict {
  const origin = request.headers.get('origin');
  if (origin === null) return { kind: 'no-origin' };
  if (origin === siteOrigin) return { kind: 'same-origin' };
  if (allowedOrigins.includes(origin)) return { kind: 'allowed', origin };
  return { kind: 'forbidden', origin };
}

/** The CORS headers for an allowed foreign origin. */
export function corsHeaders(origin: string): Record<string, string> {
  return { 'access-control-allow-origin': origin, vary: 'Origin' };
}

/**
 * Applies the origin policy to an `/api/*` request; answers the preflight or the
 * refusal itself, or returns the headers to add to the endpoint's answer.
 */
export function applyOriginPolicy(
  request: Request,
  siteOrigin: string,
  allowedOrigins: readonly string[],
): { respond: Response } | { headers: Record<string, string> } {
  const verdict = judgeOrigin(request, siteOrigin, allowedOrigins);
  const preflight = request.method === 'OPTIONS' && request.headers.has('access-control-request-method');
  if (verdict.kind === 'forbidden' && (preflight || UNSAFE_METHODS.has(request.method))) {
    return { respond: failure(403, 'Forms on this site cannot be posted from another website') };
  }
  const headers = verdict.kind === 'allowed' ? corsHeaders(verdict.origin) : { vary: 'Origin' };
  if (preflight) {
    return {
      respond: new Response(null, {
        status: 204,
        headers: {
          ...headers,
          'access-control-allow-methods': 'POST, OPTIONS',
          'access-control-allow-headers': 'Content-Type, Accept',
          'access-control-max-age': '600',
        },
      }),
    };
  }
  return { headers };
}
