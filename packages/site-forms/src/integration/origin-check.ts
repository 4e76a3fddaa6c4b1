/**
 * Astro's own origin check (`security.checkOrigin`), for the owner's routes: the integration turns
 * Astro's off for the whole site, so that our routes apply our origin policy, and makes this one
 * for every route that is not ours (decisions 0190, 0229).
 * Hint: a copy, as Astro exports its check nowhere public and runs it before every middleware
 * (withastro/astro#14944); tests/lib/owner-origin-check.test.ts holds it to Astro's own decision,
 * request by request, so an upgrade of Astro that changes its check fails there.
 */

/** The methods Astro's check lets through. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The content types a form can send across sites without asking first (CORS's simple requests). */
const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];

/** Whether Astro's check would refuse `request` to a page rendered on demand at `url`. */
export function isCrossSiteFormPost(request: Request, url: URL): boolean {
  if (SAFE_METHODS.has(request.method)) return false;
  const sameOrigin = request.headers.get('origin') === url.origin;
  const type = request.headers.get('content-type');
  if (type === null) return !sameOrigin;
  return FORM_TYPES.some((form) => type.toLowerCase().includes(form)) && !sameOrigin;
}

/** Astro's answer to a refused request, word for word. */
export function crossSiteRefusal(request: Request): Response {
  return new Response(`Cross-site ${request.method} form submissions are forbidden`, { status: 403 });
}
