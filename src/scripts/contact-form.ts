import { enhanceForm, errorText, postForm, showThanks } from './form-ui.ts';

/** Where the contact form posts when CONTACT_FORM_ENDPOINT is not set (SPEC.md 4.2). */
export const DEFAULT_CONTACT_ENDPOINT = '/api/contact';

/** The texts the contact form shows. */
export const CONTACT_TEXT = {
  idle: 'Send message',
  busy: 'Sending...',
  thanks: "Thanks for your message! We'll get back to you soon.",
} as const;

/** How the contact form sends: where to, with which fetch (tests pass a stub), and what to await first (the proof). */
export type ContactFormOptions = { endpoint?: string; fetchImpl?: typeof fetch; beforeSend?: () => Promise<void> };

/** The contact endpoint to post to: the configured absolute URL when one is set, else DEFAULT_CONTACT_ENDPOINT. */
export function contactEndpoint(configured: string | undefined): string {
  return configured?.trim() || DEFAULT_CONTACT_ENDPOINT;
}

/**
 * Makes a contact form send without leaving the page: thanks on success, each field's
 * messages at that field with the focus on the first, or the answer's `error`.
 */
export function enhanceContactForm(
  form: HTMLFormElement,
  { endpoint = DEFAULT_CONTACT_ENDPOINT, fetchImpl = fetch, beforeSend }: ContactFormOptions = {},
): void {
  enhanceForm(form, CONTACT_TEXT, async ({ status, error }) => {
    clearFieldErrors(form);
    if (beforeSend) await beforeSend();
    const answer = await postForm(form, endpoint, fetchImpl);
    if (answer.success === true) showThanks(form, status, CONTACT_TEXT.thanks);
    else if (answer.errors && typeof answer.errors === 'object') showFieldErrors(form, answer.errors as Record<string, unknown>, error);
    else error.textContent = errorText(answer);
  });
}

/** Each field's error container, in form order, with the control it describes. */
function* fieldErrors(form: HTMLFormElement): Generator<[box: HTMLElement, name: string, field: Element | null]> {
  for (const box of form.querySelectorAll<HTMLElement>('[data-error-for]')) {
    const name = box.dataset.errorFor ?? '';
    const field = form.elements.namedItem(name);
    yield [box, name, field instanceof Element ? field : null];
  }
}

function clearFieldErrors(form: HTMLFormElement): void {
  for (const [box, , field] of fieldErrors(form)) {
    box.textContent = '';
    field?.removeAttribute('aria-invalid');
    if (field) describe(field, box.id, false);
  }
}

function showFieldErrors(form: HTMLFormElement, errors: Record<string, unknown>, formError: HTMLElement): void {
  const unplaced = { ...errors };
  let first: HTMLElement | undefined;
  for (const [box, name, field] of fieldErrors(form)) {
    if (!(name in errors) || !field) continue;
    delete unplaced[name];
    box.textContent = text(errors[name]);
    field.setAttribute('aria-invalid', 'true');
    describe(field, box.id, true);
    first ??= field as HTMLElement;
  }
  // A message for a field without a container (the honeypot) must still reach the visitor.
  formError.textContent = Object.values(unplaced).map(text).join(' ') || (first ? '' : errorText({}));
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
