import { clearFieldErrors, enhanceForm, errorText, formWords, postForm, showFieldErrors, showThanks } from './form-ui.ts';

/** What an owner's form needs besides its markup: what to await before sending (the proof) and the fetch to send with (tests pass a stub). */
export type DefinedFormOptions = { fetchImpl?: typeof fetch; beforeSend?: () => Promise<void> };

/**
 * Makes one of the owner's forms (Form.astro with `data-form`) send without leaving the page, as
 * the contact form does: to its own `action`, with its words from the markup (`formWords`).
 * Hint: the words are the definition's (forms.config.ts), put in the markup by the server, so the
 * script knows no form by name.
 */
export function enhanceDefinedForm(form: HTMLFormElement, { fetchImpl = fetch, beforeSend }: DefinedFormOptions = {}): void {
  const words = formWords(form);
  // The attribute as written (/api/forms/<name>), resolved against the page by fetch.
  const endpoint = form.getAttribute('action') ?? '';
  enhanceForm(form, words, async ({ status, error }) => {
    clearFieldErrors(form);
    if (beforeSend) await beforeSend();
    const answer = await postForm(form, endpoint, fetchImpl);
    if (answer.success === true) showThanks(form, status, words.thanks);
    else if (answer.errors && typeof answer.errors === 'object') showFieldErrors(form, answer.errors as Record<string, unknown>, error, words.failed);
    else error.textContent = errorText(answer, words.failed);
  });
}
