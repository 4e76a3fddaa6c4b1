import { enhanceForm, errorText, postForm, showThanks } from './form-ui.ts';

/** Where the newsletter form posts (SPEC.md 4.1). */
export const NEWSLETTER_ENDPOINT = '/api/newsletter';

/** The texts of SPEC.md 4.3 that the newsletter form shows. */
export const NEWSLETTER_TEXT = {
  idle: 'Subscribe',
  busy: 'Subscribing...',
  thanks: 'Thanks for subscribing!',
} as const;

/**
 * Makes a newsletter form subscribe without leaving the page, following the six rules of
 * SPEC.md 4.3; `beforeSend` (the proof) is awaited before the post.
 */
export function enhanceNewsletterForm(form: HTMLFormElement, fetchImpl: typeof fetch = fetch, beforeSend?: () => Promise<void>): void {
  enhanceForm(form, NEWSLETTER_TEXT, async ({ status, error }) => {
    if (beforeSend) await beforeSend();
    const answer = await postForm(form, NEWSLETTER_ENDPOINT, fetchImpl);
    if (answer.success === true) showThanks(form, status, NEWSLETTER_TEXT.thanks);
    else error.textContent = errorText(answer);
  });
}
