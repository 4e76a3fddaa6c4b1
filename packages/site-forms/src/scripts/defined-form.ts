import { enhanceFieldsForm } from './form-ui.ts';

/**
 * Makes one of the owner's forms (Form.astro with `data-form`) send without leaving the page, as
 * the contact form does: to its own `action`, with the words of its markup (`formWords`).
 * Hint: the words are the definition's (forms.config.ts), put in the markup by the server, so the
 * script knows no form by name; `fetchImpl` is for tests, `beforeSend` awaited first (the proof).
 */
export function enhanceDefinedForm(form: HTMLFormElement, fetchImpl: typeof fetch = fetch, beforeSend?: () => Promise<void>): void {
  enhanceFieldsForm(form, form.action, fetchImpl, beforeSend);
}
