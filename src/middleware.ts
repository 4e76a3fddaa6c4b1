import { defineMiddleware } from 'astro:middleware';
import { failure, INTERNAL_ERROR, json } from './lib/http.ts';
import { describeError } from './lib/log.ts';
import { applyOriginPolicy } from './lib/origin.ts';
import { services } from './lib/services.ts';

const STATUS_TEXT: Record<number, string> = {
  404: 'Not found',
  405: 'Method not allowed',
  413: 'The form is too large',
};

/**
 * Guards `/api/*`: our origin policy instead of Astro's checkOrigin, and a JSON answer
 * with `success: false` for anything that would otherwise be HTML, plain text or a stack.
 */
export const onRequest = defineMiddleware(async (context, next) => {
  if (!context.url.pathname.startsWith('/api/')) return next();

  try {
    const { config } = services();
    const policy = applyOriginPolicy(context.request, context.url.origin, config.allowedOrigins);
    if ('respond' in policy) return policy.respond;

    const response = await next();
    const answer = isJson(response) ? response : json(response.status >= 400 ? response.status : 500, {
      success: false,
      error: STATUS_TEXT[response.status] ?? INTERNAL_ERROR,
    });
    for (const [name, value] of Object.entries(policy.headers)) answer.headers.set(name, value);
    return answer;
  } catch (error) {
    safeLogger()?.error('api.unexpected_error', { route: context.url.pathname, error: describeError(error) });
    return failure(500, INTERNAL_ERROR);
  }
});

function isJson(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').startsWith('application/json');
}

function safeLogger() {
  try {
    return services().logger;
  } catch {
    return undefined;
  }
}
