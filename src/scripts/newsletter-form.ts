import { clearFieldErrors, enhanceForm, errorText, postForm, showFieldErrors, showThanks } from './form-ui.ts';

/** Where the newsletter form posts (docs/api/openapi.yaml). */
export const NEWSLETTER_ENDPOINT = '/api/newsletter';

/** The texts of docs/api/openapi.yaml that the newsletter form shows. */
export const NEWSLETTER_TEXT = {
  idle: 'Subscribe',
  busy: 'Subscribing...',
  thanks: 'Thanks for subscribing!',
} as const;

/**
 * Makes a newsletter form subscribe without leaving the page, following the six rules of
 * docs/api/openapi.yaml (an `error` about the address shows at its field); `beforeSend` (the proof)
 * is awaited before the post.
 */
export function enhanceNewsletterForm(form: HTMLFormElement, fetchImpl: typeof fetch = fetch, beforeSend?: () => Promise<void>): void {
  enhanceForm(form, NEWSLETTER_TEXT, async ({ status, error }) => {
    clearFieldErrors(form);
    if (beforeSend) await beforeSend();
    const answer = await postForm(form, NEWSLETTER_ENDPOINT, fetchImpl);
    if (answer.success === true) showThanks(form, status, NEWSLETTER_TEXT.thanks);
    // A 400 is about the address, so its error goes where the page without JavaScript puts
    // it: at the field; a busy or broken provider is about the form.
    else if (answer.status === 400) showFieldErrors(form, { email: errorText(answer) }, error);
    else error.textContent = errorText(answer);
  });
}
