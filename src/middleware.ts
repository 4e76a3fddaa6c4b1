import { defineMiddleware } from 'astro:middleware';
import { clientIp, clientKey, hashClient } from './lib/client-ip.ts';
import { failure, INTERNAL_ERROR, json, tooManyRequests } from './lib/http.ts';
import { describeError } from './lib/log.ts';
import { isDocumentNavigation } from './lib/navigation.ts';
import { applyOriginPolicy } from './lib/origin.ts';
import type { LimitedRoute } from './lib/rate-limit.ts';
import { services } from './lib/services.ts';

/** The form endpoints: limited per client, and logged one line per request. */
const FORM_ROUTES: Record<string, LimitedRoute> = { '/api/newsletter': 'newsletter', '/api/contact': 'contact' };

const STATUS_TEXT: Record<number, string> = {
  404: 'Not found',
  405: 'Method not allowed',
  413: 'The form is too large',
};

/**
 * Guards `/api/*`: our origin policy instead of Astro's checkOrigin, limits per client,
 * one log line per form request, and a JSON answer with `success: false` for anything
 * that would otherwise be HTML, plain text or a stack trace.
 */
export const onRequest = defineMiddleware(async (context, next) => {
  const { pathname } = context.url;
  if (!pathname.startsWith('/api/')) return next();

  const started = performance.now();
  const { config, limits, logger } = services();
  const ip = clientIp(context.clientAddress, context.request.headers.get('x-forwarded-for'), config.trustProxy);
  const formRoute = context.request.method === 'POST' ? FORM_ROUTES[pathname.replace(/\/$/, '')] : undefined;

  let response: Response;
  try {
    response = await guard();
  } catch (error) {
    logger.error('api.unexpected_error', { route: pathname, error: describeError(error) });
    response = failure(500, INTERNAL_ERROR);
  }
  if (formRoute) {
    logger.info('form.request', {
      route: pathname,
      status: response.status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      outcome: outcomeOf(response.status),
      client: hashClient(ip),
    });
  }
  return response;

  async function guard(): Promise<Response> {
    const policy = applyOriginPolicy(context.request, context.url.origin, config.allowedOrigins);
    if ('respond' in policy) return policy.respond;

    let answer: Response;
    const verdict = formRoute ? await limits.checkClient(formRoute, clientKey(ip)) : { ok: true as const };
    if (!verdict.ok) {
      answer = tooManyRequests(verdict.retryAfterSeconds);
    } else {
      const routed = await next();
      // A form posted by the browser itself (no JavaScript) gets the redirect or page its
      // route made for a person, never JSON (docs/decisions/0030-no-javascript-path.md).
      answer = isJson(routed) || (formRoute && isDocumentNavigation(context.request))
        ? routed
        : json(routed.status >= 400 ? routed.status : 500, { success: false, error: STATUS_TEXT[routed.status] ?? INTERNAL_ERROR });
    }
    for (const [name, value] of Object.entries(policy.headers)) answer.headers.set(name, value);
    return answer;
  }
});

function isJson(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').startsWith('application/json');
}

/** A word for the log from the status; the statuses of the endpoints are unambiguous. */
function outcomeOf(status: number): string {
  const words: Record<number, string> = {
    200: 'accepted',
    303: 'accepted',
    400: 'invalid',
    403: 'forbidden-origin',
    413: 'too-large',
    415: 'unsupported-type',
    429: 'rate-limited',
    500: 'error',
    502: 'provider-misconfigured',
    503: 'provider-unavailable',
  };
  return words[status] ?? `status-${status}`;
}
