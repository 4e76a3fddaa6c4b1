import { defineMiddleware } from 'astro:middleware';
import { guardApi } from './lib/api/guard.ts';
import { isDocumentNavigation } from './lib/navigation.ts';
import { services } from './lib/services.ts';

/**
 * Puts every `/api/*` request through the guard of src/lib/api/guard.ts (origin policy,
 * limits, logs, JSON answers). Our server answers most of them before Astro; this covers
 * `astro dev` and the browser navigations that our server hands on to Astro.
 */
export const onRequest = defineMiddleware((context, next) => {
  if (!context.url.pathname.startsWith('/api/')) return next();
  return guardApi(
    { request: context.request, socketAddress: context.clientAddress, services: services(), route: () => next() },
    // Without JavaScript, a form post gets a page or a redirect, not JSON.
    { allowPages: isDocumentNavigation(context.request) },
  );
});
