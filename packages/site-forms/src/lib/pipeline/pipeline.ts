import type { IncomingRequest } from '../http/form.ts';
import type { AdminAction } from '../admin/actions/index.ts';
import { clientIp, clientKey, hashClient } from '../http/client-ip.ts';
import { readForm } from '../http/form.ts';
import { readFieldsAhead } from '../files/multipart.ts';
import { texts } from '../i18n/texts.ts';
import { type AdminReply, renderAdminOutcome, runAdminRoute } from './admin-route.ts';
import { bodyLimitOf, refuseDeclared } from './body-limit.ts';
import { describeError } from '../log.ts';
import { isDocumentNavigation } from '../http/navigation.ts';
import { backLink, nextAddress, pageOfPost } from '../http/next.ts';
import { NEXT_FIELD } from '../forms/reserved.ts';
import { applyOriginPolicy } from '../http/origin.ts';
import type { Services } from '../app/services.ts';
import { type FormValues, failure, INTERNAL_ERROR, methodNotAllowed, type Outcome, renderJson, tooManyRequests } from '../http/outcome.ts';
import { draftOfView, type FormPages, type FormView, renderPage, viewOfDraft } from './form-view.ts';
import { type AnswerReply, answerReply, type Reply } from './reply.ts';
import { loggedPath, NO_PARAMS, type Route, type RouteHandler, type RouteParams, type Target } from './routes.ts';
import { ourPath } from '../http/mount.ts';

/** What the pipeline gives back, said by its `kind` (src/lib/pipeline/reply.ts). */
export type { Reply } from './reply.ts';

/** One request on its way through the pipeline. */
export type PipelineRequest = {
  request: IncomingRequest;
  /** Where `findTarget` sent it; the pipeline only takes what is not `elsewhere`. */
  target: Exclude<Target, { kind: 'elsewhere' }>;
  /** The address of the socket the request came on. */
  socketAddress: string;
  services: Services;
};

/**
 * The one road of every request to a route and every near miss, from our dispatcher
 * (src/server/dispatch.ts) under `npm start` and `npm run dev` alike: a near miss is a JSON 404 and a log line;
 * a route goes through the guard (origin policy, body size, limits), its handler, then the
 * renderer (JSON, or a page for a person), with one log line per form post.
 */
export async function runPipeline({ request, target, socketAddress, services }: PipelineRequest): Promise<Reply> {
  const { config, logger } = services;
  const ip = clientIp(socketAddress, request.headers.get('x-forwarded-for'), config.trustProxy);
  if (target.kind === 'near-miss') {
    logger.warn('request.near_miss', { method: request.method, path: loggedPath(target.path), client: hashClient(ip) });
    return answerReply(renderJson(failure(404, texts.refusals.notFound)));
  }

  // A templated route's values (`{id}`), for its handler; an exact path has none.
  const { route, params = NO_PARAMS } = target;
  if (route.admin) return runAdmin(route.admin, { request, ip, services });
  const started = performance.now();
  const handler = handlerFor(route, request.method);
  // A GET of a form's address with `?draft=`: where a refused post sent its person (decision 0133).
  const draftId = route.pages && !handler && (request.method === 'GET' || request.method === 'HEAD') ? draftOf(request) : undefined;
  // Asked once: a person whose browser posted a form gets pages, everyone else the JSON of the spec
  // (a script's GET of a draft's address is the endpoint's 405, as without `draft`).
  const person = (handler || draftId !== undefined) && route.pages && isDocumentNavigation(request);
  const pages = person ? route.pages : undefined;
  if (pages && draftId !== undefined) return showDraft({ id: draftId, route: route.path, client: clientKey(ip) }, pages, services);
  let reply: Reply;
  try {
    reply = await guardAndHandle(route, handler, { request, ip, services, pages, params });
  } catch (error) {
    logger.error('api.unexpected_error', { route: route.path, error: describeError(error) });
    reply = render(failure(500, INTERNAL_ERROR), pages);
  }
  // The owner's own pages, for a post from their site elsewhere (decision 0167); a script is told
  // the same page in its JSON, to go there itself (decision 0210).
  if (pages && handler) reply = await onward(reply, request, route.path, services);
  else if (handler && route.pages && reply.kind === 'answer' && reply.status === 200) reply = await nextForScript(reply, request, route.path, services);
  // The status the post was answered with, before a refusal's page becomes a redirect to it.
  const status = reply.status;
  if (pages && reply.kind === 'form-view') reply = await redirectToDraft(reply, { route: route.path, client: clientKey(ip) }, hashClient(ip), services);
  if (handler && route.limit) {
    logger.info('form.request', {
      route: route.path,
      status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      outcome: outcomeOf(status),
      client: hashClient(ip),
    });
  }
  return reply;
}

/**
 * A person's post from a page of the owner's own site (forms for any static site, decision 0167):
 * a success goes to the page its `_next` names, when that is on this site's or an allowed origin,
 * else to our thank-you page with the owner's page as `back`; a refusal's page carries `_next` on
 * and links back to the owner's page.
 * Hint: the form was read by the handler already (`readForm` answers the same read); a `_next`
 * that is not followed is logged without its value, which is the visitor's text.
 */
async function onward(reply: Reply, request: IncomingRequest, route: string, { config, logger }: Services): Promise<Reply> {
  const form = await readForm(request);
  const value = form.ok ? form.fields[NEXT_FIELD] : undefined;
  const next = nextAddress(value, config);
  if (value !== undefined && next === undefined) logger.warn('form.next_ignored', { route });
  const came = { referer: request.headers.get('referer') ?? undefined, origin: request.headers.get('origin') ?? undefined };
  if (reply.kind === 'form-view') {
    const back = backLink({ ...came, next }, config);
    return next || back ? { ...reply, next, back } : reply;
  }
  // Only a success is a 303 here: a refusal is still a page, made a redirect to its draft below.
  if (reply.kind !== 'answer' || reply.status !== 303) return reply;
  if (next) reply.headers.location = next;
  else {
    // Our own thank-you page, told the owner's page the form was on, to lead back there (decision 0211).
    const back = pageOfPost(came, config);
    const location = reply.headers.location;
    if (back && location?.startsWith('/') && !location.includes('?')) reply.headers.location = `${location}?back=${encodeURIComponent(back)}`;
  }
  return reply;
}

/**
 * A script's success (/forms.js on the owner's page, decision 0210): the page its `_next` names,
 * by the same rule as a person's, added to the JSON as `next` for the script to go to.
 * Hint: without `_next` (every post of our own pages) the answer stays the spec's, byte for byte.
 */
async function nextForScript(reply: AnswerReply, request: IncomingRequest, route: string, { config, logger }: Services): Promise<Reply> {
  const form = await readForm(request);
  const value = form.ok ? form.fields[NEXT_FIELD] : undefined;
  if (value === undefined || reply.body === null) return reply;
  const next = nextAddress(value, config);
  if (next === undefined) {
    logger.warn('form.next_ignored', { route });
    return reply;
  }
  return { ...reply, body: JSON.stringify({ ...(JSON.parse(reply.body) as object), next }) };
}

/** The `draft` parameter of a GET of a form's address: the id of a refused post's draft (decision 0133). */
function draftOf(request: IncomingRequest): string | undefined {
  return new URL(request.url).searchParams.get('draft') ?? undefined;
}

/**
 * Post/Redirect/Get for a refused post (decision 0133): the page to show is kept as a draft and
 * the person is sent to it with `303 See Other`, so reloading it shows the same page and posts
 * nothing. Hint: when nothing could be kept (the database refuses, too many drafts) the page is
 * shown at the address that was posted to, as before: the person still loses nothing they typed.
 */
async function redirectToDraft(view: FormView, key: { route: string; client: string }, logClient: string, { drafts, logger }: Services): Promise<Reply> {
  let id: string | undefined;
  try {
    id = await drafts.save({ ...key, content: draftOfView(view) });
  } catch (error) {
    // A warning: the store has already logged the outage itself, once (sql/state.ts).
    logger.warn('form.draft_not_kept', { route: key.route, reason: describeError(error), client: logClient });
    return view;
  }
  if (id === undefined) {
    // With the client, so that LOG_CLIENT_LINES sums up one client's flood in one line a minute.
    logger.warn('form.draft_not_kept', { route: key.route, reason: 'the drafts are full', client: logClient });
    return view;
  }
  // Relative, like the thanks' Location: never built from the Host header.
  const vary = view.headers.vary;
  return answerReply({
    status: 303,
    headers: { location: ourPath(`${key.route}?draft=${id}`), 'cache-control': 'no-store', ...(vary && { vary }) },
    body: null,
  });
}

/**
 * The GET a refused post was redirected to: the form's page again from its draft, with the
 * refusal's status; an unknown or expired draft (or another visitor's) leads to the empty form.
 * Hint: the id is never logged, so the log cannot open someone's draft.
 */
async function showDraft(key: { id: string; route: string; client: string }, pages: FormPages, { drafts, logger }: Services): Promise<Reply> {
  let view: FormView | undefined;
  try {
    const draft = await drafts.read(key);
    if (draft) view = viewOfDraft(draft, new Date());
  } catch (error) {
    logger.warn('form.draft_unreadable', { route: key.route, reason: describeError(error) });
  }
  return view ?? answerReply({ status: 303, headers: { location: pages.page, 'cache-control': 'no-store' }, body: null });
}

/** An admin post: its own checks and action (src/lib/pipeline/admin-route.ts), one log line, and never a stack trace to the owner. */
async function runAdmin(action: AdminAction, { request, ip, services }: Omit<Step, 'pages' | 'params'>): Promise<Reply> {
  let reply: AdminReply;
  try {
    reply = await runAdminRoute(action, request, ip, services);
  } catch (error) {
    services.logger.error('admin.unexpected_error', { action, error: describeError(error) });
    reply = renderAdminOutcome({
      kind: 'refused',
      status: 500,
      message: 'Something went wrong on the server. Reload the page to see what was done, then try again.',
    });
  }
  if (request.method === 'POST') services.logger.info('admin.request', { action, status: reply.status, client: hashClient(ip) });
  return reply;
}

type Step = { request: IncomingRequest; ip: string; services: Services; pages: FormPages | undefined; params: RouteParams };

/** The guard keyed on the route, then its handler (found once, by `runPipeline`): each refusal is an outcome like the handler's own. */
async function guardAndHandle(route: Route, handler: RouteHandler | undefined, { request, ip, services, pages, params }: Step): Promise<Reply> {
  const policy = applyOriginPolicy(request, services.config);
  if ('preflight' in policy) return answerReply({ status: 204, headers: policy.preflight, body: null });
  if ('refuse' in policy) {
    // The owner's own site missing from ALLOWED_ORIGINS shows here first; with the client, so that
    // LOG_CLIENT_LINES=limited writes one line a client and minute whatever the flood (decision 0212).
    if (policy.origin) services.logger.warn('form.origin_refused', { route: route.path, origin: policy.origin.slice(0, 200), client: hashClient(ip) });
    return render(await withTypedValues(policy.refuse, request, pages, route), pages);
  }

  if (!handler) return render(methodNotAllowed(Object.keys(route.methods)), undefined, policy.headers);
  // Refused from the header alone, before a byte is read or a budget counted; the readers hold the same limit while reading.
  const tooLarge = refuseDeclared(request.headers.get('content-length'), bodyLimitOf(route, services.config.uploads));
  if (tooLarge) return render(await withTypedValues(tooLarge, request, pages, route), pages, policy.headers);
  if (!route.limit || !services.limits.enabled)
    return render(await handler(request, services, { ip, person: pages !== undefined, params }), pages, policy.headers);

  // Every post counts against the client's budgets; only an accepted one (or one held for confirmation) keeps its count (decision 0041).
  const key = clientKey(ip);
  const verdict = await services.limits.checkClient(route.limit, key, route.budget);
  if (!verdict.ok) return render(await withTypedValues(tooManyRequests(verdict.retryAfterSeconds), request, pages, route), pages, policy.headers);
  let outcome: Outcome | undefined;
  try {
    outcome = await handler(request, services, { ip, person: pages !== undefined, params });
  } finally {
    // A post held for confirmation keeps its count too: a script reads the token and confirms at once (issue 28).
    if (outcome?.kind !== 'accepted' && outcome?.kind !== 'confirm') await services.limits.refundClient(route.limit, key);
  }
  return render(outcome, pages, policy.headers);
}

/**
 * A refusal made before the handler read the form, given what the person typed when they get
 * a page: the page shows the form again with their text, not empty (a refused post must lose nothing).
 * Hint: the form is read within the same size limit as a handler reads it (a post with files up to
 * its first file); scripts get the JSON of the spec and nothing is read for them.
 */
async function withTypedValues(outcome: Outcome, request: IncomingRequest, pages: FormPages | undefined, route: Route): Promise<Outcome> {
  if (!pages || outcome.kind !== 'failure') return outcome;
  // A post with files may be larger than a form's limit: only its fields before the first file are read (issue 39 item 8).
  const form = route.files ? { ok: true as const, fields: await readFieldsAhead(request) } : await readForm(request);
  if (!form.ok) return outcome;
  const values: FormValues = {};
  for (const field of pages.fields) {
    const value = form.fields[field];
    if (typeof value === 'string') values[field] = value;
  }
  return { ...outcome, values };
}

/** The route's handler for a method; HEAD is answered as GET (uptime checks use it), the server sending no body. */
function handlerFor(route: Route, method: string): RouteHandler | undefined {
  return route.methods[method] ?? (method === 'HEAD' ? route.methods.GET : undefined);
}

function render(outcome: Outcome, pages: FormPages | undefined, headers?: Record<string, string>): Reply {
  const reply = pages ? renderPage(outcome, pages) : answerReply(renderJson(outcome));
  if (headers) Object.assign(reply.headers, headers);
  return reply;
}

/** A word for the log from the status; the statuses of the endpoints are unambiguous. */
function outcomeOf(status: number): string {
  return OUTCOME_WORDS[status] ?? `status-${status}`;
}

const OUTCOME_WORDS: Readonly<Record<number, string>> = {
  200: 'accepted',
  303: 'accepted',
  400: 'invalid',
  403: 'forbidden-origin',
  413: 'too-large',
  415: 'unsupported-type',
  429: 'rate-limited',
  500: 'error',
  502: 'provider-misconfigured',
  503: 'provider-unavailable',
};
