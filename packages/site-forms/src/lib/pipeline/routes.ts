import type { IncomingRequest } from '../http/form.ts';
import { ADMIN_ACTIONS, type AdminAction } from '../admin/actions/index.ts';
import { formHandler, handleContact, handleContactConfirmation } from '../contact/contact-handlers.ts';
import { contactForm, ownerForms } from '../forms/registry.ts';
import { takesFiles } from '../forms/definition.ts';
import { handleHealth } from './health.ts';
import { handleFileLink, isFileLinkPath } from './file-link.ts';
import { FILE_LINK_PATH } from '../files/links.ts';
import { handleNewsletter, handleNewsletterConfirmation, handleUnsubscribe } from '../newsletter/newsletter-handlers.ts';
import type { LimitedRoute, OwnBudget } from '../rate-limit.ts';
import type { Services } from '../app/services.ts';
import type { Outcome } from '../http/outcome.ts';
import { CONFIRM_PAGES, FORM_PAGES, type FormPages, NEWSLETTER_LINK_PAGES, ownerFormPages } from './form-view.ts';

/** A route's handler: the request and the services in, an outcome out; it never writes an answer itself. */
export type RouteHandler = (request: IncomingRequest, services: Services, context: HandlerContext) => Outcome | Promise<Outcome>;

/** What the pipeline found about a request: the client's address, and whether a person's browser posted the form itself (it gets pages). */
export type HandlerContext = { ip: string; person: boolean };

/**
 * One address the pipeline answers, with its own policy.
 * Hint: `kind` says who calls it and how its answers are rendered: `api` answers JSON
 * only; `form` takes posts from the site's forms, answered in JSON to scripts and with
 * pages (`pages`) to a person whose browser posted the form itself.
 */
export type Route = {
  path: string;
  kind: 'api' | 'form' | 'admin';
  /** The handler of each method the route takes; any other method is a 405 naming these. */
  methods: Partial<Record<string, RouteHandler>>;
  /** The per-client budget its posts count against, and that puts one log line per request. */
  limit?: LimitedRoute;
  /** A budget of its own for `limit` (an owner's form may set one), instead of RATE_LIMIT_MAX's. */
  budget?: OwnBudget | undefined;
  /** Where a person without JavaScript goes after a post (form routes). */
  pages?: FormPages;
  /** Whether its posts may carry files (a form with a file field): its body may then be as large as UPLOAD_MAX_TOTAL_BYTES allows. */
  files?: boolean;
  /** The owner's action (admin routes): past the API's origin policy to the admin's own checks (decision 0102). */
  admin?: AdminAction;
};

/** The one route whose path ends in a value (a file's id), found by `isFileLinkPath` rather than by its exact path. */
const FILE_LINK_ROUTE: Route = { path: FILE_LINK_PATH, kind: 'api', methods: { GET: handleFileLink } };

/** The admin's form posts, one path each under /admin/actions/, where no page lives (decision 0104). */
const ADMIN_ROUTES: readonly Route[] = Object.entries(ADMIN_ACTIONS).map(([path, { action }]) => ({ path, kind: 'admin', methods: {}, admin: action }));

/** Every address the pipeline answers; anything else under /api/ is a JSON 404 (decision 0040). */
export const ROUTES: readonly Route[] = [
  { path: '/api/newsletter', kind: 'form', limit: 'newsletter', pages: FORM_PAGES.newsletter, methods: { POST: handleNewsletter } },
  // Double opt-in: the confirmation page's button, and unsubscribing (one-click by RFC 8058, or the page's button).
  { path: '/api/newsletter/confirm', kind: 'form', pages: NEWSLETTER_LINK_PAGES, methods: { POST: handleNewsletterConfirmation } },
  { path: '/api/newsletter/unsubscribe', kind: 'form', pages: NEWSLETTER_LINK_PAGES, methods: { POST: handleUnsubscribe } },
  { path: '/api/contact', kind: 'form', limit: 'contact', pages: FORM_PAGES.contact, files: takesFiles(contactForm), methods: { POST: handleContact } },
  // The one button of the page that asks a person without JavaScript to confirm a held message.
  // A budget of its own, as the contact form's (RATE_LIMIT_MAX): each confirmation sends a message on (decision 0149).
  { path: '/api/contact/confirm', kind: 'form', limit: 'contact-confirm', pages: CONFIRM_PAGES, methods: { POST: handleContactConfirmation } },
  // The proof-of-work challenge the forms' script solves (issue 13); JSON with `success` like every answer here.
  { path: '/api/challenge', kind: 'api', methods: { GET: async (_, { spam }) => ({ kind: 'data', status: 200, body: await spam.service.challenge() }) } },
  { path: '/api/health', kind: 'api', methods: { GET: (_, { store, provider }) => handleHealth({ store, providerName: provider.name }) } },
  // A message's file by the signed, expiring link of webhooks and chat alerts (issue 31): `/api/files/<id>`, the id in the path.
  FILE_LINK_ROUTE,
  ...ADMIN_ROUTES,
  // The owner's forms (forms.config.ts): the contact form's road, each with its own budget and pages (decision 0131).
  ...ownerForms.map(
    (form): Route => ({
      path: `/api/forms/${form.name}`,
      kind: 'form',
      limit: `form:${form.name}`,
      budget: form.limit,
      pages: ownerFormPages(form),
      files: takesFiles(form),
      methods: { POST: formHandler(form) },
    }),
  ),
];

const BY_PATH = new Map(ROUTES.map((route) => [route.path, route]));
/** The first segment of every route (`/api`): anything under one is the pipeline's, a route or a near miss. */
// Not the admin's: /admin/* is also where its pages live, which must stay Astro's.
const PREFIXES = [...new Set(ROUTES.filter((route) => route.kind !== 'admin').map((route) => `/${route.path.split('/')[1]}`))];

/**
 * Where a request goes: a route of the table, a near miss (a path that is not exactly a
 * route but that a decoder, a proxy or a lenient router could take for one, or anything
 * else under a route's first segment, /api), or elsewhere (the pages, for Astro and the static files).
 */
export type Target = { kind: 'route'; route: Route } | { kind: 'near-miss'; path: string } | { kind: 'elsewhere' };

/**
 * Finds the target of a raw request-target (`req.url`, or a URL's path and query), once.
 * Hint: only an exact path is a route. The lenient form (decoded, slashes collapsed,
 * dot segments resolved, lower case) only tells a near miss from a page, so that
 * `//api/contact` or `/%61pi/contact` is a JSON 404 rather than a page or a route.
 */
export function findTarget(rawTarget: string): Target {
  const path = pathOf(rawTarget);
  const route = BY_PATH.get(path) ?? (isFileLinkPath(path) ? FILE_LINK_ROUTE : undefined);
  if (route) return { kind: 'route', route };
  const lenient = lenientPath(path);
  if (PREFIXES.some((prefix) => lenient === prefix || lenient.startsWith(`${prefix}/`))) return { kind: 'near-miss', path };
  return { kind: 'elsewhere' };
}

/** The path of a request-target as the client wrote it: origin-form, or the path of absolute-form. */
export function pathOf(rawTarget: string): string {
  let path = rawTarget;
  // Absolute-form (`POST http://host/api/contact`), which proxies may send: its path, untouched.
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(path);
  if (absolute) path = path.slice(absolute[0].length) || '/';
  const end = path.search(/[?#]/);
  return end === -1 ? path : path.slice(0, end);
}

/** What a lenient router might make of a path; only used to recognise near misses. */
function lenientPath(path: string): string {
  let decoded = path;
  // Twice-encoded tricks (`%2561`) decode in two rounds; a bounded loop, malformed escapes stop it.
  for (let round = 0; round < 3 && decoded.includes('%'); round++) {
    try {
      decoded = decodeURIComponent(decoded);
    } catch {
      break;
    }
  }
  const segments: string[] = [];
  for (const raw of decoded.replaceAll('\\', '/').split('/')) {
    const segment = raw.split(';', 1)[0]!.trim().toLowerCase();
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`;
}
