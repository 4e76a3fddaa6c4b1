import type { APIContext } from 'astro';
import { INTERNAL_ERROR, readForm } from './http.ts';

/** What a form page shows again when a post made without JavaScript was refused. */
export type FormRetry = {
  /** The endpoint's status, kept so the page says the same as the JSON would. */
  status: number;
  /** What the visitor typed, for the visible fields only: never the honeypot. */
  values: Record<string, string>;
  /** Each field's messages, as the endpoint's `errors` object holds them. */
  errors: Record<string, string[]>;
  /** A message about the whole form (provider busy, server failure), if any. */
  formError: string | undefined;
  /** Headers of the endpoint's answer that a browser should still get, such as `Retry-After`. */
  headers: Record<string, string>;
};

/** Where a form sends people who post it without JavaScript. */
export type VisitorPages = {
  /** The thank-you page, as a path: the `Location` of the 303 after a success. */
  thanks: string;
  /** The on-demand page that shows the form again, reached by an internal rewrite. */
  retry: string;
  /** The visible fields whose values are shown again. */
  fields: readonly string[];
  /**
   * The field that a failure's single `error` is about, for a form whose endpoint answers
   * with `error` rather than `errors` (the newsletter's one email field).
   * Hint: only 400s are put at the field; a busy provider is about the form, not the address.
   */
  errorField?: string;
};

/** The two forms' pages; the routes and the tests read them from here. */
export const VISITOR_PAGES = {
  newsletter: { thanks: '/thank-you/?form=newsletter', retry: '/retry/newsletter', fields: ['email'], errorField: 'email' },
  contact: { thanks: '/thank-you/?form=contact', retry: '/retry/contact', fields: ['name', 'email', 'message'] },
} as const satisfies Record<string, VisitorPages>;

/** Headers of the endpoint's answer that the page passes on to the browser. */
const KEPT_HEADERS = ['retry-after'];

/** What a person gets for a handler's JSON answer: the way to the thanks, or the form again. */
export type VisitorOutcome = { ok: true } | { ok: false; retry: FormRetry };

/**
 * Reads a handler's JSON answer (SPEC.md 2.3) for a person: success, or what the form
 * page must show again, with the values read back from `submitted`, a copy of the request.
 */
export async function readVisitorOutcome(answer: Response, submitted: Request, pages: VisitorPages): Promise<VisitorOutcome> {
  const body = await readJson(answer);
  if (answer.ok && body.success === true) return { ok: true };

  const errors: Record<string, string[]> = {};
  if (isRecord(body.errors)) {
    for (const [field, messages] of Object.entries(body.errors)) {
      const texts = (Array.isArray(messages) ? messages : [messages]).filter((m): m is string => typeof m === 'string');
      if (texts.length) errors[field] = texts;
    }
  }
  let formError = typeof body.error === 'string' && body.error ? body.error : undefined;
  if (formError && pages.errorField && answer.status === 400) {
    errors[pages.errorField] = [formError];
    formError = undefined;
  }
  if (!formError && Object.keys(errors).length === 0) formError = INTERNAL_ERROR;

  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = answer.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { ok: false, retry: { status: answer.status, values: await readValues(submitted, pages.fields), errors, formError, headers } };
}

/** The parts of Astro's context that answering a person needs. */
export type VisitorContext = Pick<APIContext, 'request' | 'url' | 'locals' | 'rewrite'>;

/**
 * Runs a form's own handler on a post made without JavaScript and answers the person:
 * `303 See Other` to the thank-you page after a success, else the form page again with
 * the status, the messages and the visitor's values.
 * Hint: the handler is the same one that answers the script, so validation and
 * processing cannot differ between the two paths; only the answer is translated.
 */
export async function answerVisitor(context: VisitorContext, pages: VisitorPages, handle: (request: Request) => Promise<Response>): Promise<Response> {
  // Taken before the handler reads the body: the values shown again come from this copy.
  const submitted = context.request.clone();
  const outcome = await readVisitorOutcome(await handle(context.request), submitted, pages);
  if (outcome.ok) return seeOther(pages.thanks);
  context.locals.formRetry = outcome.retry;
  // A new GET request: the post's body is used up, and Astro refuses to rewrite with it.
  return context.rewrite(new Request(new URL(pages.retry, context.url)));
}

/**
 * Gives the page that shows a form again the endpoint's status and kept headers.
 * Hint: Astro's page answers carry the status text "OK" whatever the status; an empty
 * text lets Node write the standard one ("Bad Request").
 */
export function applyRetryStatus(response: { status?: number; statusText?: string; headers: Headers }, retry: FormRetry): void {
  response.status = retry.status;
  response.statusText = '';
  response.headers.set('cache-control', 'no-store');
  for (const [name, value] of Object.entries(retry.headers)) response.headers.set(name, value);
}

/**
 * `303 See Other` to a path of this site: the browser then loads it with GET, so reloading
 * the thank-you page never posts the form twice.
 * Hint: the `Location` stays relative; it is never built from the `Host` header.
 */
export function seeOther(path: string): Response {
  return new Response(null, { status: 303, headers: { location: path, 'cache-control': 'no-store' } });
}

async function readJson(answer: Response): Promise<Record<string, unknown>> {
  try {
    const body: unknown = await answer.json();
    return isRecord(body) ? body : {};
  } catch {
    return {};
  }
}

async function readValues(submitted: Request, fields: readonly string[]): Promise<Record<string, string>> {
  const form = await readForm(submitted);
  const values: Record<string, string> = {};
  if (!form.ok) return values;
  for (const field of fields) {
    const value = form.fields[field];
    if (typeof value === 'string') values[field] = value;
  }
  return values;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
