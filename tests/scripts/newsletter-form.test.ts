// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { enhanceNewsletterForm } from '../../packages/site-forms/src/scripts/newsletter-form.ts';
import { answering, jsonResponse, OUTCOMES, pendingFetch, renderNewsletterForm, requestOf, settled, submit } from './form-dom.ts';

const SOMETHING_WENT_WRONG = 'Something went wrong. Please try again.';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('newsletter form, SPEC.md 4.3 rule 1: on submit', () => {
  test('the browser does not post the form itself, so the visitor stays on the page', async () => {
    const page = renderNewsletterForm();
    enhanceNewsletterForm(page.form, answering({ success: true }));

    const event = submit(page.form);

    expect(event.defaultPrevented).toBe(true);
    await settled(page);
  });

  test('the button is disabled and reads "Subscribing..." while the request is pending', async () => {
    const page = renderNewsletterForm();
    const { fetchImpl, respond } = pendingFetch();
    enhanceNewsletterForm(page.form, fetchImpl);

    submit(page.form);

    expect(page.button.disabled).toBe(true);
    expect(page.button.textContent).toBe('Subscribing...');
    await Promise.resolve();
    expect(page.button.textContent).toBe('Subscribing...');
    respond({ success: true });
    await settled(page);
  });

  test('a second submit while the first is pending sends nothing more', async () => {
    const page = renderNewsletterForm();
    const { fetchImpl, respond } = pendingFetch();
    enhanceNewsletterForm(page.form, fetchImpl);

    submit(page.form);
    const second = submit(page.form);

    expect(second.defaultPrevented).toBe(true);
    expect(fetchImpl).toHaveBeenCalledTimes(1);
    respond({ success: true });
    await settled(page);
  });
});

describe('newsletter form, rule 2: the request', () => {
  test('posts the form data to /api/newsletter and asks for JSON', async () => {
    const page = renderNewsletterForm('grace@example.com');
    const fetchImpl = answering({ success: true });
    enhanceNewsletterForm(page.form, fetchImpl);

    submit(page.form);
    await settled(page);

    const { url, init } = requestOf(fetchImpl);
    expect(url).toBe('/api/newsletter');
    expect(init.method).toBe('POST');
    expect(init.body).toBeInstanceOf(FormData);
    expect((init.body as FormData).get('email')).toBe('grace@example.com');
    expect(new Headers(init.headers).get('accept')).toBe('application/json');
  });

  test('uses the browser fetch when none is given', async () => {
    const page = renderNewsletterForm();
    const fetchImpl = answering({ success: true });
    vi.stubGlobal('fetch', fetchImpl);
    enhanceNewsletterForm(page.form);

    submit(page.form);
    await settled(page);

    expect(requestOf(fetchImpl).url).toBe('/api/newsletter');
  });
});

describe('newsletter form, rule 3: success', () => {
  test('the form is replaced by "Thanks for subscribing!", read out by the polite live region', async () => {
    const page = renderNewsletterForm();
    enhanceNewsletterForm(page.form, answering({ success: true }));

    submit(page.form);
    await settled(page);

    expect(page.form.textContent).toBe('Thanks for subscribing!');
    expect(page.form.querySelector('input, button')).toBeNull();
    expect(page.status.isConnected).toBe(true);
    expect(page.status.getAttribute('role')).toBe('status');
    expect(page.status.getAttribute('aria-live')).toBe('polite');
    expect(page.status.textContent).toBe('Thanks for subscribing!');
  });
});

describe('newsletter form, success with double opt-in (NEWSLETTER_DOUBLE_OPT_IN)', () => {
  const SENTENCE = 'We have sent you an email: follow the link in it to confirm your subscription.';

  test("an answer awaiting confirmation: the spec's thanks, then the sentence of the markup telling the person to look for the mail", async () => {
    const page = renderNewsletterForm();
    enhanceNewsletterForm(page.form, answering({ success: true, awaitingConfirmation: true }));

    submit(page.form);
    await settled(page);

    expect(page.status.textContent).toBe(`Thanks for subscribing! ${SENTENCE}`);
    expect(page.form.textContent).toBe(`Thanks for subscribing! ${SENTENCE}`);
    expect(page.form.querySelector('input, button')).toBeNull();
  });

  test("in German, the German markup's words", async () => {
    const page = renderNewsletterForm();
    page.form.dataset.thanks = 'Danke für Ihr Abonnement!';
    page.form.dataset.confirmThanks = 'Wir haben Ihnen eine E-Mail geschickt: Bestätigen Sie Ihr Abonnement über den Link darin.';
    enhanceNewsletterForm(page.form, answering({ success: true, awaitingConfirmation: true }));

    submit(page.form);
    await settled(page);

    expect(page.status.textContent).toBe('Danke für Ihr Abonnement! Wir haben Ihnen eine E-Mail geschickt: Bestätigen Sie Ihr Abonnement über den Link darin.');
  });

  test.each<[string, Record<string, unknown>]>([
    ['without double opt-in', { success: true }],
    ['with a flag that is not true', { success: true, awaitingConfirmation: 'yes' }],
  ])('%s: the thanks alone', async (_, body) => {
    const page = renderNewsletterForm();
    enhanceNewsletterForm(page.form, answering(body));

    submit(page.form);
    await settled(page);

    expect(page.form.textContent).toBe('Thanks for subscribing!');
  });
});

describe('newsletter form, rule 4: success false', () => {
  test.each([
    ['an invalid address', 'Please enter a valid email address'],
    [
      'an address that unsubscribed earlier',
      'This address unsubscribed earlier, so we cannot add it again here. Use the subscribe link in one of our earlier emails, or contact us.',
    ],
  ])('a 400 for %s: the error at the address field, as without JavaScript, marked invalid, the focus on it', async (_, error) => {
    const page = renderNewsletterForm('not-an-address@');
    enhanceNewsletterForm(page.form, answering({ success: false, error }, 400));

    submit(page.form);
    await settled(page);

    expect(page.fieldError('email').textContent).toBe(error);
    expect(page.field('email').getAttribute('aria-invalid')).toBe('true');
    expect(page.field('email').getAttribute('aria-describedby')).toBe('newsletter-email-error');
    expect(document.activeElement).toBe(page.field('email'));
    expect(page.formError.textContent).toBe('');
    expect(page.field('email').value).toBe('not-an-address@');
    expect(page.status.textContent).toBe('');
  });

  test.each([
    ['a busy provider', 503, 'The newsletter service is busy right now. Please try again in a few minutes.'],
    ['a provider we cannot use', 502, 'We could not subscribe you right now. Please try again later.'],
    ['too many attempts', 429, 'Too many attempts. Please try again in 2 minutes.'],
  ])('a %s (%i): the error below the button, the field left valid', async (_, status, error) => {
    const page = renderNewsletterForm();
    enhanceNewsletterForm(page.form, answering({ success: false, error }, status));

    submit(page.form);
    await settled(page);

    expect(page.formError.textContent).toBe(error);
    expect(page.formError.getAttribute('role')).toBe('alert');
    expect(page.fieldError('email').textContent).toBe('');
    expect(page.field('email').hasAttribute('aria-invalid')).toBe(false);
  });

  test('a 400 without an error text: the generic message at the field', async () => {
    const page = renderNewsletterForm();
    enhanceNewsletterForm(page.form, answering({ success: false }, 400));

    submit(page.form);
    await settled(page);

    expect(page.fieldError('email').textContent).toBe(SOMETHING_WENT_WRONG);
  });

  test('shows the generic message when the answer has no error text', async () => {
    const page = renderNewsletterForm();
    enhanceNewsletterForm(page.form, answering({ success: false }, 500));

    submit(page.form);
    await settled(page);

    expect(page.formError.textContent).toBe(SOMETHING_WENT_WRONG);
  });

  test('the previous error disappears as soon as the visitor submits again', async () => {
    const page = renderNewsletterForm();
    const { fetchImpl, respond } = pendingFetch();
    enhanceNewsletterForm(page.form, fetchImpl);
    submit(page.form);
    respond({ success: false, error: 'Please enter a valid email address' }, 400);
    await settled(page);
    expect(page.fieldError('email').textContent).toBe('Please enter a valid email address');

    submit(page.form);

    expect(page.fieldError('email').textContent).toBe('');
    expect(page.field('email').hasAttribute('aria-invalid')).toBe(false);
    expect(page.field('email').hasAttribute('aria-describedby')).toBe(false);
    respond({ success: true });
    await settled(page);
    expect(page.form.textContent).toBe('Thanks for subscribing!');
  });
});

describe('newsletter form, rule 5: the request or the reading of the answer throws', () => {
  test('shows "Something went wrong. Please try again." when the request fails', async () => {
    const page = renderNewsletterForm();
    enhanceNewsletterForm(page.form, OUTCOMES['a failed request']());

    submit(page.form);
    await settled(page);

    expect(page.formError.textContent).toBe(SOMETHING_WENT_WRONG);
    expect(page.field('email').value).toBe('ada@example.com');
  });

  test('shows "Something went wrong. Please try again." when the answer is not JSON', async () => {
    const page = renderNewsletterForm();
    enhanceNewsletterForm(page.form, OUTCOMES['an answer that is not JSON']());

    submit(page.form);
    await settled(page);

    expect(page.formError.textContent).toBe(SOMETHING_WENT_WRONG);
  });

  test('shows "Something went wrong. Please try again." when reading the answer rejects', async () => {
    const page = renderNewsletterForm();
    const response = jsonResponse({ success: true });
    vi.spyOn(response, 'json').mockRejectedValue(new TypeError('The body stream was aborted'));
    enhanceNewsletterForm(
      page.form,
      vi.fn<typeof fetch>(async () => response),
    );

    submit(page.form);
    await settled(page);

    expect(page.formError.textContent).toBe(SOMETHING_WENT_WRONG);
    expect(page.form.textContent).not.toContain('Thanks for subscribing!');
  });
});

describe('newsletter form, rule 6: at the end', () => {
  test.each(Object.keys(OUTCOMES) as Array<keyof typeof OUTCOMES>)('after %s the button is enabled again and reads "Subscribe"', async (outcome) => {
    const page = renderNewsletterForm();
    enhanceNewsletterForm(page.form, OUTCOMES[outcome]());

    submit(page.form);
    expect(page.button.disabled).toBe(true);
    await settled(page);

    expect(page.button.disabled).toBe(false);
    expect(page.button.textContent).toBe('Subscribe');
  });
});
