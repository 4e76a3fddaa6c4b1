import { handleContact } from '../contact/handle.ts';
import { handleHealth } from '../health.ts';
import { failure, methodNotAllowed } from '../http.ts';
import { handleNewsletter } from '../newsletter/handle.ts';
import type { Services } from '../services.ts';

type ApiHandler = (request: Request, services: Services) => Response | Promise<Response>;

/**
 * The API, as a table: the same handlers the Astro routes in src/pages/api call, for the
 * fast path of our server that answers `/api/*` without the framework (decision 0005).
 */
export const API_ROUTES: Record<string, Partial<Record<string, ApiHandler>>> = {
  '/api/newsletter': { POST: handleNewsletter },
  '/api/contact': { POST: handleContact },
  '/api/health': { GET: (_, { db, provider }) => handleHealth({ db, providerName: provider.name }) },
};

/** The path of a request as the route table and the guard key it: without a trailing slash. */
export function apiPath(url: URL): string {
  return url.pathname.replace(/(.)\/$/, '$1');
}

/** Answers an `/api/*` request from the table: its handler, or 404/405 in JSON. */
export function routeApi(request: Request, services: Services): Response | Promise<Response> {
  const routes = API_ROUTES[apiPath(new URL(request.url))];
  if (!routes) return failure(404, 'Not found');
  const handler = routes[request.method];
  return handler ? handler(request, services) : methodNotAllowed(Object.keys(routes));
}
