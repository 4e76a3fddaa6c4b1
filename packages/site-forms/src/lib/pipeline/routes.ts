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
import { withKey } from '../api/auth.ts';
import { listForms } from '../api/v1/forms.ts';
import { getMessage, listMessages, messageCommand } from '../api/v1/messages.ts';
import { eraseSubscriberByKey, listSubscribers } from '../api/v1/subscribers.ts';
import { CONFIRM_PAGES, FORM_PAGES, type FormPages, NEWSLETTER_LINK_PAGES, ownerFormPages } from './form-view.ts';

/** A route's handler: the request and the services in, an outcome out; it never writes an answer itself. */
export type RouteHandler = (request: IncomingRequest, services: Services, context: HandlerContext) => Outcome | Promise<Outcome>;

/**
 * What the pipeline found about a request: the client's address, whether a person's browser
 * posted the form itself (it gets pages), and the values of a templated route's parameters
 * (`{id}` in its path), each decoded once; none for an exact path.
 */
export type HandlerContext = { ip: string; person: boolean; params: RouteParams };

/** A templated route's parameters by name, read-only (frozen), decoded once: `/api/v1/messages/12` gives `{ id: '12' }`. */
export type RouteParams = Readonly<Record<string, string>>;

/** The parameters of an exact path: none, one frozen object for every request. */
export const NO_PARAMS: RouteParams = Object.freeze({});

/**
 * One address the pipeline answers, with its own policy.
 * Hint: `kind` says who calls it and how its answers are rendered: `api` answers JSON
 * only; `form` takes posts from the site's forms, answered in JSON to scripts and with
 * pages (`pages`) to a person whose browser posted the form itself.
 */
export type Route = {
  /**
   * The exact path, or a pattern whose `{name}` segments take one segment each (an API route's
   * value, `/api/v1/messages/{id}`, issue 42): the same syntax as OpenAPI's paths.
   */
  path: string;
  /** What a templated route's parameter must look like, by name (anchored: `/^[0-9]+$/`; the g and y flags are refused); a value that does not fit is no match (a near miss). */
  params?: Readonly<Record<string, RegExp>>;
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

/** A message's id in a path: digits, at most 15 (every id below 2^53). */
const MESSAGE_ID = { id: /^[1-9][0-9]{0,14}$/ };

/** The /api/v1 routes, each handler behind `withKey` with the scope it needs (api/auth.ts). */
const API_V1_ROUTES: readonly Route[] = [
  { path: '/api/v1/messages', kind: 'api', methods: { GET: withKey(listMessages, { scope: 'read' }) } },
  {
    path: '/api/v1/messages/{id}',
    params: MESSAGE_ID,
    kind: 'api',
    methods: { GET: withKey(getMessage, { scope: 'read' }), DELETE: withKey(messageCommand('delete-message'), { scope: 'write' }) },
  },
  { path: '/api/v1/messages/{id}/spam', params: MESSAGE_ID, kind: 'api', methods: { POST: withKey(messageCommand('mark-spam'), { scope: 'write' }) } },
  { path: '/api/v1/messages/{id}/not-spam', params: MESSAGE_ID, kind: 'api', methods: { POST: withKey(messageCommand('release'), { scope: 'write' }) } },
  { path: '/api/v1/subscribers', kind: 'api', methods: { GET: withKey(listSubscribers, { scope: 'read' }) } },
  { path: '/api/v1/subscribers/erase', kind: 'api', methods: { POST: withKey(eraseSubscriberByKey, { scope: 'write' }) } },
  { path: '/api/v1/forms', kind: 'api', methods: { GET: withKey(listForms, { scope: 'read' }) } },
];

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
  // The REST API for programs (issue 42, decision 0282): a key in `Authorization: Bearer`, read or write, limited to its forms.
  ...API_V1_ROUTES,
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

/**
 * The route table as `findTarget` searches it: exact paths in a Map, first and alone on the hot
 * path; the templated routes grouped by their number of segments, tried only for a path that is
 * no exact route and lies under a first segment of the table (/api), where a near miss is looked
 * for anyway, so that a page's request costs what it cost before any pattern existed.
 */
export type RouteTable = {
  exact: ReadonlyMap<string, Route>;
  patterns: ReadonlyMap<number, readonly Pattern[]>;
  /** The first segment of every route (`/api`): anything under one is the pipeline's, a route or a near miss. */
  prefixes: readonly string[];
};

/** A templated route, split: a literal segment as it must be sent, a parameter by name with its check. */
type Pattern = { route: Route; segments: ReadonlyArray<string | { name: string; check: RegExp | undefined }> };

const PARAMETER = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/**
 * Builds the table `findTarget` searches from routes; throws at start on a pattern it could not
 * answer safely.
 * Hint: a parameter is a whole segment (`{id}`, never `m{id}`), the first segment is literal
 * (it names the prefix), and a templated route answers JSON only (`kind: 'api'`): a form's pages
 * and drafts, and the admin's posts, are keyed on their exact path.
 */
export function routeTable(routes: readonly Route[]): RouteTable {
  const exact = new Map<string, Route>();
  const patterns = new Map<number, Pattern[]>();
  const shapes = new Set<string>();
  for (const route of routes) {
    const refuse = (why: string) => new Error(`The route ${route.path}: ${why}.`);
    const names = new Set<string>();
    const segments = route.path
      .split('/')
      .slice(1)
      .map((segment, index) => {
        if (!segment.includes('{') && !segment.includes('}')) return segment;
        const name = PARAMETER.exec(segment)?.[1];
        if (name === undefined) throw refuse(`"${segment}" is no parameter: a parameter is a whole segment, {name}`);
        if (index === 0) throw refuse('its first segment must be literal');
        if (names.has(name)) throw refuse(`the parameter {${name}} is named twice`);
        names.add(name);
        const check = route.params?.[name];
        // `test()` of a g or y regex starts where the last one stopped: one request would change the next one's answer.
        if (check?.global || check?.sticky) throw refuse(`the check of {${name}} keeps state between requests (the g or y flag)`);
        return { name, check };
      });
    for (const name of Object.keys(route.params ?? {})) if (!names.has(name)) throw refuse(`it checks {${name}}, which its path does not have`);
    if (names.size === 0) {
      exact.set(route.path, route);
      continue;
    }
    if (route.kind !== 'api') throw refuse('a templated route answers JSON only (kind "api")');
    const shape = segments.map((segment) => (typeof segment === 'string' ? segment : '{}')).join('/');
    if (shapes.has(shape)) throw refuse('another templated route has the same shape');
    shapes.add(shape);
    const group = patterns.get(segments.length) ?? [];
    group.push({ route, segments });
    patterns.set(segments.length, group);
  }
  // Not the admin's: /admin/* is also where its pages live, which must stay Astro's.
  const prefixes = [...new Set(routes.filter((route) => route.kind !== 'admin').map((route) => `/${route.path.split('/')[1]}`))];
  return { exact, patterns, prefixes };
}

const TABLE = routeTable(ROUTES);

/**
 * Where a request goes: a route of the table, a near miss (a path that is not exactly a
 * route but that a decoder, a proxy or a lenient router could take for one, or anything
 * else under a route's first segment, /api), or elsewhere (the pages, for Astro and the static files).
 * A templated route comes with its parameters.
 */
export type Target = { kind: 'route'; route: Route; params?: RouteParams } | { kind: 'near-miss'; path: string } | { kind: 'elsewhere' };

/**
 * Finds the target of a raw request-target (`req.url`, or a URL's path and query), once.
 * Hint: only an exact path is a route, or a path that fits a templated route segment for
 * segment (its literal segments exactly, each parameter one non-empty segment, decoded once).
 * The lenient form (decoded, slashes collapsed, dot segments resolved, lower case) only tells a
 * near miss from a page, so that `//api/contact` or `/%61pi/contact` is a JSON 404 rather than
 * a page or a route. `table` is the app's own unless a test gives one.
 */
export function findTarget(rawTarget: string, table: RouteTable = TABLE): Target {
  const path = pathOf(rawTarget);
  const route = table.exact.get(path) ?? (isFileLinkPath(path) ? FILE_LINK_ROUTE : undefined);
  if (route) return { kind: 'route', route, params: NO_PARAMS };
  const lenient = lenientPath(path);
  if (!table.prefixes.some((prefix) => lenient === prefix || lenient.startsWith(`${prefix}/`))) return { kind: 'elsewhere' };
  // Only now the templated routes: a path under /api that is no exact route.
  const templated = table.patterns.size > 0 ? matchPattern(table.patterns, path) : undefined;
  return templated ?? { kind: 'near-miss', path };
}

/** The templated route a path fits, with its parameters; none when no pattern takes every segment as it was sent. */
function matchPattern(patterns: RouteTable['patterns'], path: string): Target | undefined {
  if (!path.startsWith('/')) return undefined;
  const sent = path.split('/');
  for (const pattern of patterns.get(sent.length - 1) ?? []) {
    const params = paramsOf(pattern, sent);
    if (params) return { kind: 'route', route: pattern.route, params };
  }
  return undefined;
}

/** A pattern's parameters from the segments as sent (`sent[0]` is the empty one before the first slash), or nothing when one does not fit. */
function paramsOf(pattern: Pattern, sent: readonly string[]): RouteParams | undefined {
  const params: Record<string, string> = {};
  for (const [index, segment] of pattern.segments.entries()) {
    const raw = sent[index + 1]!;
    if (typeof segment === 'string') {
      if (raw !== segment) return undefined;
      continue;
    }
    // Decoded once, after the split: `%2F` is part of the value, never a separator, and `%252F` stays `%2F`.
    const value = decodedSegment(raw);
    if (value === undefined || (segment.check && !segment.check.test(value))) return undefined;
    params[segment.name] = value;
  }
  return Object.freeze(params);
}

/** A parameter's value: an empty segment, a malformed escape and a dot segment (which a lenient router resolves) are none. */
function decodedSegment(raw: string): string | undefined {
  if (raw === '') return undefined;
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  return value === '.' || value === '..' ? undefined : value;
}

/**
 * A request's path as a log line shows it: at most 200 characters, and the token of a sign-in
 * link (`/admin/welcome/sfl_…`, people/links.ts) cut, since whoever reads the log could follow it.
 */
export function loggedPath(path: string): string {
  return path.replace(/sfl_[\w-]+/g, 'sfl_…').slice(0, 200);
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
