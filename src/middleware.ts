import type { MiddlewareHandler, MiddlewareNext } from 'astro';
import { defineMiddleware } from 'astro:middleware';
import { adminRefusals, isAdminRefusal } from './lib/admin/route.ts';
import { formViews } from './lib/pipeline/handoff.ts';
import { toResponse } from './lib/pipeline/outcome.ts';
import { isFormView } from './lib/pipeline/page.ts';
import { runPipeline } from './lib/pipeline/pipeline.ts';
import { findTarget } from './lib/pipeline/routes.ts';
import { securityHeadersFor } from './lib/security-headers.ts';
import { services } from './lib/services.ts';

/**
 * Astro's side of the one road (decision 0040). Our server runs the pipeline itself and
 * only hands Astro a form's page to render; under `astro dev`, where our server does not
 * run, every request to a route or a near miss goes through the same pipeline here.
 */
export const onRequest = defineMiddleware(async (context, next) => {
  const response = await answer(context, next);
  // Our server sets the security headers on every answer (src/server/front.ts); under
  // `astro dev` there is no such server, so they are set here too, relaxed for Vite. The
  // mode, not import.meta.env.DEV, which a build run with NODE_ENV=test (vitest) also sets.
  if (import.meta.env.MODE === 'development') {
    for (const [name, value] of Object.entries(securityHeadersFor(services().config, { development: true }))) response.headers.set(name, value);
  }
  return response;
});

async function answer(context: Parameters<MiddlewareHandler>[0], next: MiddlewareNext): Promise<Response> {
  const handedOver = formViews().getStore();
  if (handedOver) {
    context.locals.formView = handedOver;
    return next();
  }
  const refused = adminRefusals().getStore();
  if (refused) {
    context.locals.adminRefusal = refused;
    return next();
  }
  const url = new URL(context.request.url);
  const target = findTarget(url.pathname + url.search);
  if (target.kind === 'elsewhere') return next();
  // A near miss under `astro dev` is rendered on the prerendered 404 route, whose request Astro
  // guards (reading its headers prints a warning per request): it gets a request without them.
  const request = context.isPrerendered ? new Request(context.request.url, { method: context.request.method }) : context.request;
  const reply = await runPipeline({ request, target, socketAddress: socketAddressOf(context), services: services() });
  if (isAdminRefusal(reply)) {
    context.locals.adminRefusal = reply;
    return next();
  }
  if (!isFormView(reply)) return toResponse(reply);
  context.locals.formView = reply;
  return next();
}

/** The client's address; Astro refuses to give it on a path it would prerender (`//api/x` under `astro dev`). */
function socketAddressOf(context: { clientAddress: string }): string {
  try {
    return context.clientAddress;
  } catch {
    return '';
  }
}
