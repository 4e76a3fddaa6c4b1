import { clearFieldErrors, enhanceForm, errorText, type FormAnswer, followNext, formWords, postForm, showFieldErrors, showThanks } from './form-ui.ts';

/** Where the newsletter form posts (docs/api/openapi.yaml). */
export const NEWSLETTER_ENDPOINT = '/api/newsletter';

/**
 * Makes a newsletter form subscribe without leaving the page, following the six rules of
 * docs/api/openapi.yaml (an `error` about the address shows at its field); `beforeSend` (the proof)
 * is awaited before the post, sent to `endpoint` (this server's, from a page elsewhere: /forms.js).
 * Hint: its words are the markup's (`formWords`): on an English site, the spec's.
 */
export function enhanceNewsletterForm(
  form: HTMLFormElement,
  fetchImpl: typeof fetch = fetch,
  beforeSend?: () => Promise<void>,
  endpoint = NEWSLETTER_ENDPOINT,
): void {
  const words = formWords(form);
  enhanceForm(form, words, async ({ status, error }) => {
    clearFieldErrors(form);
    if (beforeSend) await beforeSend();
    const answer = await postForm(form, endpoint, fetchImpl);
    if (answer.success === true) {
      showThanks(form, status, thanksFor(answer, words.thanks, form.dataset.confirmThanks));
      followNext(form, answer);
    }
    // A 400 is about the address, so its error goes where the page without JavaScript puts
    // it: at the field; a busy or broken provider is about the form.
    else if (answer.status === 400) showFieldErrors(form, { email: errorText(answer, words.failed) }, error, words.failed);
    else error.textContent = errorText(answer, words.failed);
  });
}

/**
 * The thanks, followed by the markup's sentence about the confirmation mail when the answer says
 * the address awaits it (NEWSLETTER_DOUBLE_OPT_IN): the spec's words stay first.
 */
function thanksFor(answer: FormAnswer, thanks: string, confirmThanks: string | undefined): string {
  return answer.awaitingConfirmation === true && confirmThanks ? `${thanks} ${confirmThanks}` : thanks;
}
