import { type FormDefinition, thanksPath, visibleFieldNames } from '../forms/definition.ts';
import { contactForm } from '../forms/registry.ts';
import { type FormValues, INTERNAL_ERROR, type Outcome } from '../http/outcome.ts';
import { type AnswerReply, answerReply } from './reply.ts';
import { ourPath } from '../http/mount.ts';

/** The forms a person can post without JavaScript: the two of the spec, and the name of each of the owner's (decision 0131). */
export type FormName = 'newsletter' | 'contact' | (string & {});

/** Where a form sends people who post it without JavaScript. */
export type FormPages = {
  form: FormName;
  /** The thank-you page, as a path: the `Location` of the 303 after a success. */
  thanks: string;
  /** The fields a person types into, in form order: what a refusal page shows again. */
  fields: readonly string[];
  /** The page that places the form: where a draft that is unknown or expired leads (decision 0133). */
  page: string;
};

/** The two forms' pages. */
export const FORM_PAGES = {
  newsletter: { form: 'newsletter', thanks: thanksPath('newsletter'), fields: ['email'], page: '/' },
  contact: { form: 'contact', thanks: thanksPath('contact'), fields: visibleFieldNames(contactForm), page: '/contact' },
} as const satisfies Record<'newsletter' | 'contact', FormPages>;

/** An owner's form's pages: its thank-you page, and its own fields shown again when refused. */
export function ownerFormPages(form: FormDefinition): FormPages {
  return { form: form.name, thanks: thanksPath(form.name), fields: visibleFieldNames(form), page: form.page };
}

/** The pages behind the links of the newsletter's emails (confirm, unsubscribe): the newsletter's page when refused. */
export const NEWSLETTER_LINK_PAGES: FormPages = { form: 'newsletter', thanks: thanksPath('newsletter'), fields: [], page: '/' };

/** The confirmation of a held contact message: its page is the contact form's, its thanks the contact form's. */
export const CONFIRM_PAGES: FormPages = { form: 'contact', thanks: thanksPath('contact'), fields: [], page: '/contact' };

/**
 * What a form's page shows again after a refused post: the status and headers of the
 * answer, what the visitor typed, each field's messages and a message about the whole form.
 */
export type FormView = {
  kind: 'form-view';
  form: FormName;
  status: number;
  headers: Record<string, string>;
  values: FormValues;
  errors: Record<string, readonly string[]>;
  formError: string | undefined;
  /** Set when the person is asked to confirm a held message: the token the button posts. */
  confirm?: { token: string } | undefined;
  /** The owner's page a success goes to (`_next`, decision 0167): carried on by the form shown again. */
  next?: string | undefined;
  /** The owner's page to go back to, when the post came from another site's page (decision 0167). */
  back?: string | undefined;
};

/** The headers of a refusal that a browser should still get; the others are for scripts (`Allow`). */
const KEPT_HEADERS = ['retry-after'];

/**
 * Renders an outcome for a person who posted a form without JavaScript: `303 See Other`
 * to the thank-you page after a success, else the form's page again (`FormView`), with
 * the status, the messages at their fields and the values as typed.
 * Hint: the Location stays relative; it is never built from the `Host` header.
 */
export function renderPage(outcome: Outcome, pages: FormPages): AnswerReply | FormView {
  if (outcome.kind === 'accepted') {
    return answerReply({ status: 303, headers: { location: ourPath(outcome.thanks ?? pages.thanks), 'cache-control': 'no-store' }, body: null });
  }
  const view: FormView = {
    kind: 'form-view',
    form: pages.form,
    status: 400,
    headers: { 'cache-control': 'no-store' },
    values: {},
    errors: {},
    formError: undefined,
  };
  if (outcome.kind === 'invalid') return { ...view, values: outcome.values, errors: outcome.errors };
  if (outcome.kind === 'confirm') return { ...view, status: 200, values: outcome.values, confirm: { token: outcome.token } };
  // A form's handler never answers with data; if one did, the person must not see it as a success.
  if (outcome.kind === 'data' || outcome.kind === 'download') return { ...view, status: 500, formError: INTERNAL_ERROR };
  view.status = outcome.status;
  for (const name of KEPT_HEADERS) {
    const value = outcome.headers?.[name];
    if (value !== undefined) view.headers[name] = value;
  }
  view.values = outcome.values ?? {};
  if (outcome.field) view.errors = { [outcome.field]: [outcome.error] };
  else view.formError = outcome.error;
  return view;
}

/** What a draft keeps of a view: everything but its kind and the headers, and `Retry-After` as seconds. */
type DraftedView = Omit<FormView, 'kind' | 'headers'> & { retryAfter?: number };

/** A view as a draft's content (decision 0133): JSON, without the headers a browser need not get again. */
export function draftOfView(view: FormView): string {
  const { kind: _kind, headers, ...rest } = view;
  const retryAfter = headers['retry-after'];
  const drafted: DraftedView = retryAfter !== undefined && /^\d+$/.test(retryAfter) ? { ...rest, retryAfter: Number(retryAfter) } : rest;
  return JSON.stringify(drafted);
}

/**
 * The view a draft keeps, to show again at `now`.
 * Hint: `Retry-After` counts down from the refusal: a reload four minutes after a 429 of ten says 360.
 */
export function viewOfDraft(draft: { content: string; createdAt: Date }, now: Date): FormView {
  const { retryAfter, ...view } = JSON.parse(draft.content) as DraftedView;
  const headers: Record<string, string> = { 'cache-control': 'no-store' };
  if (retryAfter !== undefined) {
    const elapsed = Math.floor((now.getTime() - draft.createdAt.getTime()) / 1000);
    headers['retry-after'] = String(Math.max(0, retryAfter - elapsed));
  }
  return { ...view, kind: 'form-view', headers };
}

/**
 * Gives the Astro page that renders a view the view's status and headers.
 * Hint: Astro's page answers carry the status text "OK" whatever the status; an empty
 * text lets Node write the standard one ("Bad Request").
 */
export function applyViewStatus(response: { status?: number; statusText?: string; headers: Headers }, view: FormView): void {
  response.status = view.status;
  response.statusText = '';
  for (const [name, value] of Object.entries(view.headers)) response.headers.set(name, value);
}
