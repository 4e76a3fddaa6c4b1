import { defineMiddleware } from 'astro:middleware';
import { formViews } from './lib/pipeline/handoff.ts';
import { toResponse } from './lib/pipeline/outcome.ts';
import { isFormView } from './lib/pipeline/page.ts';
import { runPipeline } from './lib/pipeline/pipeline.ts';
import { findTarget } from './lib/pipeline/routes.ts';
import { services } from './lib/services.ts';

/**
 * Astro's side of the one road (decision 0040). Our server runs the pipeline itself and
 * only hands Astro a form's page to render; under `astro dev`, where our server does not
 * run, every request to a route or a near miss goes through the same pipeline here.
 */
export const onRequest = defineMiddleware(async (context, next) => {
  const handedOver = formViews().getStore();
  if (handedOver) {
    context.locals.formView = handedOver;
    return next();
  }
  const url = new URL(context.request.url);
  const target = findTarget(url.pathname + url.search);
  if (target.kind === 'elsewhere') return next();
  const reply = await runPipeline({ request: context.request, target, socketAddress: socketAddressOf(context), services: services() });
  if (!isFormView(reply)) return toResponse(reply);
  context.locals.formView = reply;
  return next();
});

/** The client's address; Astro refuses to give it on a path it would prerender (`//api/x` under `astro dev`). */
function socketAddressOf(context: { clientAddress: string }): string {
  try {
    return context.clientAddress;
  } catch {
    return '';
  }
}
