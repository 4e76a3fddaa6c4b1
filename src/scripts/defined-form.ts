import { clearFieldErrors, enhanceForm, errorText, postForm, showFieldErrors, showThanks } from './form-ui.ts';

/** What an owner's form needs besides its markup: what to await before sending (the proof) and the fetch to send with (tests pass a stub). */
export type DefinedFormOptions = { fetchImpl?: typeof fetch; beforeSend?: () => Promise<void> };

/**
 * Makes one of the owner's forms (Form.astro with `data-form`) send without leaving the page, as
 * the contact form does: to its own `action`, with its words from `data-thanks` and `data-busy`.
 * Hint: the words are the definition's (forms.config.ts), put in the markup by the server, so the
 * script knows no form by name.
 */
export function enhanceDefinedForm(form: HTMLFormElement, { fetchImpl = fetch, beforeSend }: DefinedFormOptions = {}): void {
  const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
  const labels = { idle: button?.textContent?.trim() ?? 'Send', busy: form.dataset.busy ?? 'Sending...' };
  const thanks = form.dataset.thanks ?? 'Thank you!';
  // The attribute as written (/api/forms/<name>), resolved against the page by fetch.
  const endpoint = form.getAttribute('action') ?? '';
  enhanceForm(form, labels, async ({ status, error }) => {
    clearFieldErrors(form);
    if (beforeSend) await beforeSend();
    const answer = await postForm(form, endpoint, fetchImpl);
    if (answer.success === true) showThanks(form, status, thanks);
    else if (answer.errors && typeof answer.errors === 'object') showFieldErrors(form, answer.errors as Record<string, unknown>, error);
    else error.textContent = errorText(answer);
  });
}
