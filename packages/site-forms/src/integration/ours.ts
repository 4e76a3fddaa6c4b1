/**
 * Which requests in an owner's Astro server are the integration's (decision 0190): those Astro's
 * router took to a route the integration injected, and the near misses under /api that no route
 * claims. Every other route is the owner's, whatever its path.
 */
import type { Target } from '../lib/pipeline/routes.ts';

/** The route Astro renders when no route matches a request (the owner's 404 page, or Astro's own). */
export const NOT_FOUND_ROUTE = '/404';

/**
 * Whether a request is ours to answer: Astro's router took it to a route we injected (`ours`,
 * by pattern: a page of ours, or an address of the API, which the pipeline then finds exactly or
 * as a near miss), or to no route at all while its path is a near miss under /api (a JSON 404
 * rather than a page). A route of the owner's is theirs under /api, /admin or /thank-you too.
 * Hint: by Astro's route data (`context.routePattern`), never by the path: the router has
 * already chosen between an owner's `/admin/orders` and our `/admin/[...rest]`.
 */
export function isOurs(routePattern: string, target: Target, ours: ReadonlySet<string>): boolean {
  if (ours.has(routePattern)) return true;
  return routePattern === NOT_FOUND_ROUTE && target.kind !== 'elsewhere';
}
