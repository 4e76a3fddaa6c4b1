/**
 * The integration's middleware (decision 0165): in an owner's Astro server, every request to a
 * route the integration injected, or a near miss under /api that no route claims, goes down the
 * same road as under `npm start` (`runPipeline`), and a refused post's page is rendered by the
 * form's own route with the view in `locals`. Our answers and pages carry the security headers
 * and the 421 check of `PUBLIC_URL`; the owner's own routes, whatever their path, are left as
 * they are, but for Astro's origin check (decision 0190). It runs after the owner's own
 * middleware (`order: 'post'`, decision 0191).
 */
import { defineMiddleware } from 'astro:middleware';
import ownerOptions from 'virtual:site-forms/options';
import type { APIContext, MiddlewareNext } from 'astro';
import type { Services } from '../lib/app/services.ts';
import { leavesBodyUnread } from '../lib/http/form.ts';
import { setMount, withinMount } from '../lib/http/mount.ts';
import { isAddressedToSite, MISDIRECTED_MESSAGE } from '../lib/http/origin.ts';
import type { Answer } from '../lib/http/outcome.ts';
import { securityHeadersFor, withInlineSources } from '../lib/http/security-headers.ts';
import { runPipeline } from '../lib/pipeline/pipeline.ts';
import { findTarget } from '../lib/pipeline/routes.ts';
import { crossSiteRefusal, isCrossSiteFormPost } from './origin-check.ts';
import { isOurs } from './ours.ts';

/** The routes the integration injected, by their pattern in Astro's route data: the pages and the API's addresses. */
const OUR_ROUTES: ReadonlySet<string> = new Set(ownerOptions.routes);

// The prefix of our routes in this server (decision 0230): what the links and redirects we make put on.
setMount(ownerOptions.mount);

/** The answer of each request to our routes; the owner's pages pass through. */
export const onRequest = defineMiddleware(async (context, next) => {
  // Our own server (src/server/dispatch.ts) has run the pipeline already and hands the page its `locals`.
  if (context.locals.services) return next();
  // A page built ahead (the thank-you pages, the owner's static ones) is a file: no request to read, no database to open.
  if (context.isPrerendered) return next();
  // The request-target as sent, not Astro's decoded path: `/%61pi/contact` or `/api//contact` is a
  // near miss (a JSON 404), never the route Astro's router would take it for.
  // Under a prefix, only what is under it is ours to find: the rest is the owner's, at whatever path.
  const within = withinMount(rawTarget(context.request.url), ownerOptions.mount);
  const target = within === undefined ? ({ kind: 'elsewhere' } as const) : findTarget(within);
  if (!isOurs(context.routePattern, target, OUR_ROUTES)) return ownersPage(context, next);
  // Loaded on the first request that is ours, never at build time: prerendering opens no database.
  const { services } = await import('./server.ts');
  const headers = securityHeadersOf(services);
  if (!isAddressedToSite(context.request.headers, services.config)) {
    return dressed(new Response(JSON.stringify({ success: false, error: MISDIRECTED_MESSAGE }), { status: 421, headers: JSON_TYPE }), headers);
  }
  context.locals.services = services;
  if (target.kind === 'elsewhere') return dressedPage(await next(), context, headers);
  const reply = await runPipeline({ request: context.request, target, socketAddress: clientAddress(context), services });
  // A body a reader left half-read: the connection closes with the answer, so a client's next
  // request never goes out on a socket that still carries the rest (issue 39 item 19).
  const own = leavesBodyUnread(context.request) ? { ...headers, connection: 'close' } : headers;
  switch (reply.kind) {
    case 'answer':
      return dressed(toResponse(reply, context.request.method), own);
    // The form's own route (refusal.astro, or the admin's page) renders the view, at this address.
    case 'form-view':
      context.locals.formView = reply;
      return dressedPage(await next(), context, own);
    case 'admin-refusal':
      context.locals.adminRefusal = reply;
      return dressedPage(await next(), context, own);
    case 'admin-shown':
      context.locals.adminShown = reply;
      return dressedPage(await next(), context, own);
    default:
      return reply satisfies never;
  }
});

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/**
 * An owner's route: untouched, but for the check Astro would have made itself (a cross-site form
 * post refused, as `security.checkOrigin` does), which the integration turns off for the whole
 * site so that our routes apply our own origin policy instead; not when the owner turned it off.
 * Hint: Astro offers no way to leave its check on for some routes only: it runs before every
 * middleware, ours included, and again before each page (decisions 0190, 0229).
 */
function ownersPage(context: APIContext, next: MiddlewareNext): Promise<Response> | Response {
  if (ownerOptions.checkOrigin && isCrossSiteFormPost(context.request, context.url)) return crossSiteRefusal(context.request);
  return next();
}

/** The security headers of this configuration, built once per process. */
let securityHeaders: Readonly<Record<string, string>> | undefined;
function securityHeadersOf(services: Services): Readonly<Record<string, string>> {
  securityHeaders ??= securityHeadersFor(services.config);
  return securityHeaders;
}

/**
 * A page of ours, rendered by Astro: read whole first, since the owner's layout tells what it needs
 * only once it has rendered (src/layouts/LayoutAttempt.astro), and dressed with a CSP that allows
 * the layout's own inline styles and scripts, each by its hash (issue 39 item 5, decision 0197).
 * Anything else (a file of a message) passes as a stream.
 */
async function dressedPage(response: Response, context: APIContext, headers: Readonly<Record<string, string>>): Promise<Response> {
  if (!(response.headers.get('content-type') ?? '').startsWith('text/html') || response.body === null) return dressed(response, headers);
  const html = await response.text();
  const page = new Response(html, { status: response.status, statusText: response.statusText, headers: new Headers(response.headers) });
  const inline = context.locals.layoutInline;
  const policy = headers['content-security-policy'];
  if (!inline || !policy) return dressed(page, headers);
  return dressed(page, { ...headers, 'content-security-policy': withInlineSources(policy, inline) });
}

/** The answer with the security headers that it does not set itself. */
function dressed(response: Response, headers: Readonly<Record<string, string>>): Response {
  // A redirect made by `Response.redirect` has headers that cannot change: a copy then.
  const own = canChange(response);
  for (const [name, value] of Object.entries(headers)) if (!own.headers.has(name)) own.headers.set(name, value);
  return own;
}

function canChange(response: Response): Response {
  try {
    response.headers.set('x-content-type-options', 'nosniff');
    return response;
  } catch {
    return new Response(response.body, response);
  }
}

/** The pipeline's answer as a Web `Response`, a stream (an export) as a stream. */
function toResponse(answer: Answer, method: string): Response {
  const headers = new Headers(answer.headers);
  if (answer.stream) {
    const iterator = answer.stream[Symbol.asyncIterator]();
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await iterator.next();
        if (done) controller.close();
        else controller.enqueue(typeof value === 'string' ? encoder.encode(value) : value);
      },
      async cancel() {
        await iterator.return?.();
      },
    });
    return new Response(body, { status: answer.status, headers });
  }
  const bodyless = method === 'HEAD' || answer.status === 204 || answer.status === 304;
  return new Response(bodyless ? null : answer.body, { status: answer.status, headers });
}

/** The client's address as the adapter knows it; empty when it knows none (the pipeline then reads it as unknown). */
function clientAddress(context: APIContext): string {
  try {
    return context.clientAddress;
  } catch {
    return '';
  }
}

/** The path and query of a request's URL as the client sent them (the adapter builds `request.url` from Node's `req.url`, undecoded). */
function rawTarget(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  return start === -1 ? '/' : url.slice(start);
}
