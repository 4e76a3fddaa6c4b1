import { clientIp, clientKey, hashClient } from '../client-ip.ts';
import { failure, INTERNAL_ERROR, json, tooManyRequests } from '../http.ts';
import { describeError } from '../log.ts';
import { applyOriginPolicy } from '../origin.ts';
import type { LimitedRoute } from '../rate-limit.ts';
import type { Services } from '../services.ts';
import { apiPath } from './routes.ts';

/** The form endpoints: limited per client, and logged one line per request. */
const FORM_ROUTES: Record<string, LimitedRoute> = { '/api/newsletter': 'newsletter', '/api/contact': 'contact' };

const STATUS_TEXT: Record<number, string> = {
  404: 'Not found',
  405: 'Method not allowed',
  413: 'The form is too large',
};

/** What `guardApi` needs to know of one request. */
export type ApiRequest = {
  request: Request;
  /** The address of the socket the request came on. */
  socketAddress: string;
  services: Pick<Services, 'config' | 'limits' | 'logger'>;
  /** Produces the endpoint's answer once the request passed the guard. */
  route: () => Response | Promise<Response>;
};

/**
 * Everything every `/api/*` request goes through, whichever server path it takes: our
 * origin policy, limits per client, one log line per form request, and a JSON answer with
 * `success: false` for anything that would otherwise be HTML, plain text or a stack trace.
 * Hint: a browser navigation (no JavaScript) may answer with a page or a redirect; those pass.
 */
export async function guardApi({ request, socketAddress, services, route }: ApiRequest, options: { allowPages?: boolean } = {}): Promise<Response> {
  const { config, limits, logger } = services;
  const started = performance.now();
  const url = new URL(request.url);
  const pathname = apiPath(url);
  const ip = clientIp(socketAddress, request.headers.get('x-forwarded-for'), config.trustProxy);
  const formRoute = request.method === 'POST' ? FORM_ROUTES[pathname] : undefined;

  let response: Response;
  try {
    response = await guarded();
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

  async function guarded(): Promise<Response> {
    const policy = applyOriginPolicy(request, config);
    if ('respond' in policy) return forPeople(policy.respond);

    let answer: Response;
    const verdict = formRoute ? await limits.checkClient(formRoute, clientKey(ip)) : { ok: true as const };
    if (!verdict.ok) {
      answer = await forPeople(tooManyRequests(verdict.retryAfterSeconds));
    } else {
      const routed = await route();
      answer =
        isJson(routed) || (options.allowPages && isPageOrRedirect(routed))
          ? routed
          : json(routed.status >= 400 ? routed.status : 500, { success: false, error: STATUS_TEXT[routed.status] ?? INTERNAL_ERROR });
    }
    for (const [name, value] of Object.entries(policy.headers)) answer.headers.set(name, value);
    return answer;
  }

  /** A refusal of the guard's own, as a page when a person posted the form without JavaScript. */
  async function forPeople(refusal: Response): Promise<Response> {
    if (!options.allowPages || !formRoute) return refusal;
    const { error } = (await refusal.clone().json()) as { error?: string };
    return refusalPage(refusal, error ?? INTERNAL_ERROR, formRoute === 'contact' ? '/contact/' : '/');
  }
}

/**
 * A small page for a person whose form post was refused before it reached the form's
 * endpoint (too many attempts, another website): same status and headers, a link back.
 */
function refusalPage(refusal: Response, message: string, back: string): Response {
  const escaped = message.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Error: form not sent</title></head><body><main><h1>Your form was not sent</h1><p role="alert">${escaped}</p><p><a href="${back}">Back to the form</a></p></main></body></html>`;
  const headers = new Headers(refusal.headers);
  headers.set('content-type', 'text/html; charset=utf-8');
  return new Response(html, { status: refusal.status, headers });
}

function isJson(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').startsWith('application/json');
}

function isPageOrRedirect(response: Response): boolean {
  return (response.status >= 300 && response.status < 400) || (response.headers.get('content-type') ?? '').startsWith('text/html');
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
