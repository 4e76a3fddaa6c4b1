/** An endpoint's JSON answer (docs/api/openapi.yaml), unchecked: the script trusts only what it tests for; `status` is the HTTP status. */
export type FormAnswer = { success?: unknown; error?: unknown; errors?: unknown; awaitingConfirmation?: unknown; next?: unknown; status?: number };

/** The parts of a form the scripts write to. */
export type FormParts = {
  /** The submit button, disabled and relabelled while a request runs. */
  button: HTMLButtonElement;
  /** The polite live region (`role="status"`) that carries the thanks. */
  status: HTMLElement;
  /** The form-level error (`role="alert"`). */
  error: HTMLElement;
};

/**
 * The words a form's script shows: the button's two labels, the thanks, and what a visitor reads
 * when the request or the reading of its answer fails (docs/api/openapi.yaml).
 */
export type FormWords = { idle: string; busy: string; thanks: string; failed: string };

/**
 * Reads a form's words from its markup: the button's label, `data-busy`, `data-thanks` and
 * `data-failed`, which the page writes in the site's language; throws naming a missing one.
 * Hint: so the script ships no catalogue and knows no language (decision 0134).
 */
export function formWords(form: HTMLFormElement): FormWords {
  const word = (name: 'busy' | 'thanks' | 'failed'): string => {
    const value = form.dataset[name];
    if (!value) throw new Error(`The form #${form.id} has no data-${name}`);
    return value;
  };
  const idle = form.querySelector('button[type="submit"]')?.textContent?.trim() ?? '';
  return { idle, busy: word('busy'), thanks: word('thanks'), failed: word('failed') };
}

/**
 * Makes a form submit through `send` instead of a page load: the button is disabled and
 * shows `busy` while `send` runs, a throw shows `failed`, and the button always comes back
 * enabled with its `idle` label.
 * Hint: the markup contract (one submit button, `role="status"`, `role="alert"`) is checked
 * here once, so a broken page fails loudly instead of at the first submit.
 */
export function enhanceForm(form: HTMLFormElement, labels: FormWords, send: (parts: FormParts) => Promise<void>): void {
  const parts: FormParts = {
    button: required(form, 'button[type="submit"]'),
    status: required(form, '[role="status"]'),
    error: required(form, '[role="alert"]'),
  };
  const { button } = parts;
  // Without this listener the browser would post the form and leave the page; with it the
  // visitor stays here and the native post remains the fallback when the script never runs.
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    // Implicit submission (Enter, requestSubmit) can still fire while a request runs.
    if (button.disabled) return;
    button.disabled = true;
    button.textContent = labels.busy;
    parts.status.textContent = parts.error.textContent = '';
    try {
      await send(parts);
    } catch {
      parts.error.textContent = labels.failed;
    } finally {
      button.disabled = false;
      button.textContent = labels.idle;
    }
  });
}

/**
 * Makes a form of fields (the contact form, an owner's form) send to `endpoint` without leaving
 * the page: thanks on success, each field's messages at that field with the focus on the first,
 * or the answer's `error`; `fetchImpl` for tests, `beforeSend` awaited first (the proof).
 * Hint: its words are the markup's (`formWords`), in the site's language.
 */
export function enhanceFieldsForm(form: HTMLFormElement, endpoint: string, fetchImpl: typeof fetch = fetch, beforeSend?: () => Promise<void>): void {
  const words = formWords(form);
  enhanceForm(form, words, async ({ status, error }) => {
    clearFieldErrors(form);
    if (beforeSend) await beforeSend();
    const answer = await postForm(form, endpoint, fetchImpl);
    if (answer.success === true) {
      showThanks(form, status, words.thanks);
      followNext(form, answer);
    } else if (answer.errors && typeof answer.errors === 'object') showFieldErrors(form, answer.errors as Record<string, unknown>, error, words.failed);
    else error.textContent = errorText(answer, words.failed);
  });
}

/** Posts the form's data with `fetchImpl`, asking for JSON, and reads the answer; throws when either step fails. */
export async function postForm(form: HTMLFormElement, url: string, fetchImpl: typeof fetch): Promise<FormAnswer> {
  // Accept tells the server this is the script, so it answers JSON rather than a page.
  const response = await fetchImpl(url, { method: 'POST', body: new FormData(form), headers: { Accept: 'application/json' } });
  return { ...((await response.json()) as FormAnswer), status: response.status };
}

/**
 * Replaces the form's content with `text`, keeping only its status region so that
 * screen readers announce the thanks.
 */
export function showThanks(form: HTMLFormElement, status: HTMLElement, text: string): void {
  status.textContent = text;
  form.replaceChildren(status);
}

/**
 * Sends the visitor on to the owner's page the form's `_next` names, when the server took it (the
 * answer's `next`, decision 0210): their thank-you page and its tracking, as without JavaScript.
 * Hint: the server decides by the same rule as for a person's post; only http(s) is followed here.
 */
export function followNext(form: HTMLFormElement, answer: FormAnswer): void {
  if (typeof answer.next !== 'string' || !/^https?:\/\//i.test(answer.next)) return;
  form.ownerDocument.defaultView?.location.assign(answer.next);
}

/** The `error` string of an answer, or `failed` (the form's words) when the answer has none. */
export function errorText(answer: FormAnswer, failed: string): string {
  return typeof answer.error === 'string' && answer.error ? answer.error : failed;
}

/** Each field's error container, in form order, with the control it describes. */
function* fieldErrors(form: HTMLFormElement): Generator<[box: HTMLElement, name: string, field: Element | null]> {
  for (const box of form.querySelectorAll<HTMLElement>('[data-error-for]')) {
    const name = box.dataset.errorFor ?? '';
    const field = form.elements.namedItem(name);
    yield [box, name, field instanceof Element ? field : null];
  }
}

/** Empties every field's error container and marks its control valid again. */
export function clearFieldErrors(form: HTMLFormElement): void {
  for (const [box, , field] of fieldErrors(form)) {
    box.textContent = '';
    field?.removeAttribute('aria-invalid');
    if (field) describe(field, box.id, false);
  }
}

/**
 * Shows each field's messages at that field (`aria-invalid`, described by them) and moves the
 * focus to the first; a message for a field without a container goes to `formError`, and
 * `failed` when no message could be placed at all.
 */
export function showFieldErrors(form: HTMLFormElement, errors: Record<string, unknown>, formError: HTMLElement, failed: string): void {
  const unplaced = { ...errors };
  let first: HTMLElement | undefined;
  for (const [box, name, field] of fieldErrors(form)) {
    // Own keys only: `name in errors` is true for a field named constructor or toString.
    if (!Object.hasOwn(errors, name) || !field) continue;
    delete unplaced[name];
    box.textContent = text(errors[name]);
    field.setAttribute('aria-invalid', 'true');
    describe(field, box.id, true);
    first ??= field as HTMLElement;
  }
  // A message for a field without a container (the honeypot) must still reach the visitor.
  formError.textContent = Object.values(unplaced).map(text).join(' ') || (first ? '' : failed);
  first?.focus();
}

function text(messages: unknown): string {
  return Array.isArray(messages) ? messages.join(' ') : String(messages);
}

/** Adds or removes `id` in the element's aria-describedby, keeping any hint it points at. */
function describe(element: Element, id: string, on: boolean): void {
  const ids = (element.getAttribute('aria-describedby') ?? '').split(' ').filter((token) => token && token !== id);
  if (on) ids.push(id);
  if (ids.length) element.setAttribute('aria-describedby', ids.join(' '));
  else element.removeAttribute('aria-describedby');
}

function required<T extends Element>(form: HTMLFormElement, selector: string): T {
  const element = form.querySelector<T>(selector);
  if (!element) throw new Error(`The form #${form.id} has no ${selector}`);
  return element;
}
