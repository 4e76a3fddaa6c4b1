import type { Redis } from 'ioredis';
import type { KeyActor, KeyScope } from '../access/permissions.ts';
import { clientKey, hashClient } from '../http/client-ip.ts';
import type { IncomingRequest } from '../http/form.ts';
import { failure, type Failure, type Outcome } from '../http/outcome.ts';
import { describeError, type Logger } from '../log.ts';
import { consume, createSharedLimiter, type LimitVerdict, type Limiter } from '../rate-limit.ts';
import type { Sql } from '../sql/sql.ts';
import { type ApiKeys, createApiKeys } from './keys.ts';

/** A request's path without its query, whether `url` is absolute or a path. */
function pathOf(url: string): string {
  const path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  const end = path.search(/[?#]/);
  return end === -1 ? path : path.slice(0, end);
}

// Bearer authentication of /api/v1 (issue 42): `withKey` around each handler, the one place a
// program's key is read, counted and checked. Decision 0277.

/** The realm every challenge names (RFC 6750). */
const REALM = 'Bearer realm="site-forms"';

/** Failed authentications a client may make in the window; the next request is 429, before any lookup. */
export const FAILED_AUTHENTICATIONS_PER_CLIENT = 30;

/** The window of the failed authentications, in seconds. */
export const FAILED_AUTHENTICATION_WINDOW_SECONDS = 15 * 60;

/** The API's own limits: per key and minute (API_RATE_LIMIT_PER_MINUTE), and failed authentications per client. */
export interface ApiLimits {
  /** Whether the client may still try a key: refused after 30 failures in 15 minutes; counts nothing. */
  mayTry(clientKey: string): Promise<LimitVerdict>;
  /** Counts a failed authentication of the client (a key sent that was malformed, unknown or revoked). */
  failed(clientKey: string): Promise<void>;
  /** Counts one request of a key against its budget a minute. */
  request(keyId: number): Promise<LimitVerdict>;
}

/** What the API needs of the services: its keys and its limits. */
export type ApiAccess = { keys: ApiKeys; limits: ApiLimits };

/**
 * The API's keys and limits, in memory or shared through `redis` like the forms' limits (so that
 * several instances count a key once). Hint: `RATE_LIMIT_MAX=0` leaves them on: a key's budget
 * is its own setting, and a program is never a visitor to let through in development.
 */
export function createApiAccess(sql: Sql, config: { apiRateLimitPerMinute: number }, logger: Logger, redis?: Redis): ApiAccess {
  const perKey = createSharedLimiter({ keyPrefix: 'site-forms:api-key', points: config.apiRateLimitPerMinute, duration: 60 }, redis);
  const failures = createSharedLimiter(
    { keyPrefix: 'site-forms:api-auth-failed', points: FAILED_AUTHENTICATIONS_PER_CLIENT, duration: FAILED_AUTHENTICATION_WINDOW_SECONDS },
    redis,
  );
  return {
    keys: createApiKeys(sql),
    limits: {
      mayTry: (key) => peek(failures, key, FAILED_AUTHENTICATIONS_PER_CLIENT, logger),
      async failed(key) {
        await consume(failures, key, logger);
      },
      request: (id) => consume(perKey, String(id), logger),
    },
  };
}

/** Whether `key` has points left, without taking one; a store failure lets the request through, as `consume` does. */
async function peek(limiter: Limiter, key: string, points: number, logger: Logger): Promise<LimitVerdict> {
  try {
    const used = await limiter.get(key);
    // A window that has ended may still be in memory until its timer fires: over, whatever it counted.
    if (!used || used.consumedPoints < points || used.msBeforeNext <= 0) return { ok: true };
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(used.msBeforeNext / 1000)) };
  } catch (error) {
    logger.error('rate_limit.failed', { error: describeError(error) });
    return { ok: true };
  }
}

/** What an API handler is told: the pipeline's context and the key that called. */
export type KeyContext<C> = C & { actor: KeyActor };

/** An /api/v1 handler, called only with a live key of the route's scope. */
export type KeyHandler<S, C> = (request: IncomingRequest, services: S, context: KeyContext<C>) => Outcome | Promise<Outcome>;

/**
 * Wraps an /api/v1 handler: the key of `Authorization: Bearer <key>` is checked at every request
 * (no cache: a revocation holds at once on every instance), counted against its budget, and held
 * against the route's scope; the handler gets the key as `actor`. Refusals, in this order: 429
 * for a client past 30 failed authentications (before any lookup), 401 for no key (`missing_key`)
 * or a malformed, unknown or revoked one (`invalid_key`, counted as a failure), 429 for a key past
 * its budget, 403 for a read key on a write route (`insufficient_scope`).
 * Hint: a session cookie is never read here, so the API has no CSRF surface.
 */
export function withKey<S extends { api: ApiAccess; logger: Logger }, C extends { ip: string }>(
  handler: KeyHandler<S, C>,
  options: { scope: KeyScope },
): (request: IncomingRequest, services: S, context: C) => Promise<Outcome> {
  return async (request, services, context) => {
    const { keys, limits } = services.api;
    const client = clientKey(context.ip);
    const allowed = await limits.mayTry(client);
    if (!allowed.ok) return refusal(429, 'rate_limited', TEXTS.tooManyFailures, { 'retry-after': String(allowed.retryAfterSeconds) });
    const sent = bearerOf(request.headers.get('authorization'));
    if (sent === undefined) return refusal(401, 'missing_key', TEXTS.missingKey, { 'www-authenticate': REALM });
    const actor = sent === null ? undefined : await keys.find(sent, new Date());
    if (!actor) {
      await limits.failed(client);
      services.logger.warn('api.key_refused', { client: hashClient(context.ip) });
      return refusal(401, 'invalid_key', TEXTS.invalidKey, { 'www-authenticate': `${REALM}, error="invalid_token"` });
    }
    const budget = await limits.request(actor.id);
    if (!budget.ok) return refusal(429, 'rate_limited', TEXTS.tooManyRequests, { 'retry-after': String(budget.retryAfterSeconds) });
    if (options.scope === 'write' && actor.keyScope !== 'write')
      return refusal(403, 'insufficient_scope', TEXTS.insufficientScope, { 'www-authenticate': `${REALM}, error="insufficient_scope"` });
    const outcome = await handler(request, services, { ...context, actor });
    // One line a request that reached its handler: what a key did, never the key itself nor the query (which may hold a form's name).
    services.logger.info('api.request', {
      method: request.method,
      route: pathOf(request.url),
      status: 'status' in outcome ? outcome.status : 200,
      key: actor.id,
      keyName: actor.name,
      client: hashClient(context.ip),
    });
    return outcome;
  };
}

/** The API's errors, in English whatever the site's language: programs and their authors read them. */
const TEXTS = {
  missingKey: 'This address needs an API key: send it as Authorization: Bearer <key>.',
  invalidKey: 'The API key is not valid: it is unknown, revoked or malformed.',
  insufficientScope: 'This key may only read: this request needs a key that may write.',
  tooManyRequests: 'Too many requests with this key: try again after the seconds Retry-After gives.',
  tooManyFailures: 'Too many failed authentications from this address: try again after the seconds Retry-After gives.',
};

/** The `code` of a refusal of the API, for programs to switch on (docs/api/openapi.yaml `ApiFailure`). */
export type ApiFailureCode = 'missing_key' | 'invalid_key' | 'insufficient_scope' | 'rate_limited';

function refusal(status: number, code: ApiFailureCode, error: string, headers: Record<string, string>): Failure {
  return failure(status, error, { code, headers });
}

/**
 * The credentials of `Authorization: Bearer <credentials>` (the scheme in any case, RFC 9110):
 * `undefined` without the header, `null` when it is another scheme or empty.
 */
function bearerOf(header: string | null): string | null | undefined {
  if (header === null) return undefined;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match ? match[1]! : null;
}
