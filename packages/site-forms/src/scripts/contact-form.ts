import { enhanceFieldsForm } from './form-ui.ts';

/** Where the contact form posts when CONTACT_FORM_ENDPOINT is not set (docs/api/openapi.yaml). */
export const DEFAULT_CONTACT_ENDPOINT = '/api/contact';

/** How the contact form sends: where to, with which fetch (tests pass a stub), and what to await first (the proof). */
export type ContactFormOptions = { endpoint?: string; fetchImpl?: typeof fetch; beforeSend?: () => Promise<void> };

/**
 * The contact endpoint to post to: the configured absolute URL when one is set, else the form's own
 * `action` as the page rendered it (under the routes' prefix, decision 0230), else DEFAULT_CONTACT_ENDPOINT.
 */
export function contactEndpoint(configured: string | undefined, action?: string | null): string {
  return configured?.trim() || action || DEFAULT_CONTACT_ENDPOINT;
}

/**
 * Makes a contact form send without leaving the page: thanks on success, each field's
 * messages at that field with the focus on the first, or the answer's `error`.
 * Hint: its words are the markup's (`formWords`), in the site's language.
 */
export function enhanceContactForm(
  form: HTMLFormElement,
  { endpoint = DEFAULT_CONTACT_ENDPOINT, fetchImpl = fetch, beforeSend }: ContactFormOptions = {},
): void {
  enhanceFieldsForm(form, endpoint, fetchImpl, beforeSend);
}
