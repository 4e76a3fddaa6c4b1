// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { parseForm } from '../../packages/site-forms/src/lib/forms/definition.ts';
import { contactForm } from '../../packages/site-forms/src/lib/forms/registry.ts';
import { contactEndpoint, enhanceContactForm } from '../../packages/site-forms/src/scripts/contact-form.ts';
import { answering, jsonResponse, OUTCOMES, pendingFetch, renderContactForm, requestOf, settled, submit } from './form-dom.ts';

const SOMETHING_WENT_WRONG = 'Something went wrong. Please try again.';
const THANKS = "Thanks for your message! We'll get back to you soon.";

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('contactEndpoint', () => {
  test.each([
    ['unset', undefined, '/api/contact'],
    ['empty', '', '/api/contact'],
    ['only spaces', '   ', '/api/contact'],
    ['set to an absolute URL', 'https://forms.example.com/api/contact', 'https://forms.example.com/api/contact'],
  ])('answers %s CONTACT_FORM_ENDPOINT with %j → %s', (_, configured, expected) => {
    expect(contactEndpoint(configured)).toBe(expected);
  });
});

describe('contact form: on submit', () => {
  test('the browser does not post the form itself, so the visitor stays on the page', async () => {
    const page = renderContactForm();
    enhanceContactForm(page.form, { fetchImpl: answering({ success: true }) });

    const event = submit(page.form);

    expect(event.defaultPrevented).toBe(true);
    await settled(page);
  });

  test('the button is disabled and reads "Sending..." while the request is pending', async () => {
    const page = renderContactForm();
    const { fetchImpl, respond } = pendingFetch();
    enhanceContactForm(page.form, { fetchImpl });

    submit(page.form);

    expect(page.button.disabled).toBe(true);
    expect(page.button.textContent).toBe('Sending...');
    await Promise.resolve();
    expect(page.button.textContent).toBe('Sending...');
    respond({ success: true });
    await settled(page);
  });
});

describe('contact form: the request', () => {
  test('posts every field, the empty honeypot included, to /api/contact and asks for JSON', async () => {
    const page = renderContactForm({ name: 'Grace Hopper', message: 'A question about your newsletter.' });
    const fetchImpl = answering({ success: true });
    enhanceContactForm(page.form, { fetchImpl });

    submit(page.form);
    await settled(page);

    const { url, init } = requestOf(fetchImpl);
    expect(url).toBe('/api/contact');
    expect(init.method).toBe('POST');
    const body = init.body as FormData;
    expect(body).toBeInstanceOf(FormData);
    expect(Object.fromEntries(body)).toEqual({
      name: 'Grace Hopper',
      email: 'ada@example.com',
      message: 'A question about your newsletter.',
      honeypot: '',
    });
    expect(new Headers(init.headers).get('accept')).toBe('application/json');
  });

  test('posts to the configured endpoint when one is given', async () => {
    const page = renderContactForm();
    const fetchImpl = answering({ success: true });
    enhanceContactForm(page.form, { endpoint: contactEndpoint('https://forms.example.com/api/contact'), fetchImpl });

    submit(page.form);
    await settled(page);

    expect(requestOf(fetchImpl).url).toBe('https://forms.example.com/api/contact');
  });

  test('uses the browser fetch when none is given', async () => {
    const page = renderContactForm();
    const fetchImpl = answering({ success: true });
    vi.stubGlobal('fetch', fetchImpl);
    enhanceContactForm(page.form);

    submit(page.form);
    await settled(page);

    expect(requestOf(fetchImpl).url).toBe('/api/contact');
  });
});

describe('contact form: success', () => {
  test('the form is replaced by the thanks, read out by the polite live region', async () => {
    const page = renderContactForm();
    enhanceContactForm(page.form, { fetchImpl: answering({ success: true }) });

    submit(page.form);
    await settled(page);

    expect(page.form.textContent).toBe(THANKS);
    expect(page.form.querySelector('input, textarea, button')).toBeNull();
    expect(page.status.isConnected).toBe(true);
    expect(page.status.getAttribute('role')).toBe('status');
    expect(page.status.getAttribute('aria-live')).toBe('polite');
  });
});

describe('contact form: fields the server refuses', () => {
  const errors = {
    name: ['Name must be between 2 and 100 characters'],
    message: ['Message must be at least 10 characters'],
  };

  test('shows each field’s message at that field and nowhere else', async () => {
    const page = renderContactForm({ name: 'A', message: 'Too short' });
    enhanceContactForm(page.form, { fetchImpl: answering({ success: false, errors }, 400) });

    submit(page.form);
    await settled(page);

    expect(page.fieldError('name').textContent).toBe('Name must be between 2 and 100 characters');
    expect(page.fieldError('message').textContent).toBe('Message must be at least 10 characters');
    expect(page.fieldError('email').textContent).toBe('');
    expect(page.formError.textContent).toBe('');
  });

  test('marks the refused fields invalid and points them at their message, keeping the hint', async () => {
    const page = renderContactForm({ name: 'A', message: 'Too short' });
    enhanceContactForm(page.form, { fetchImpl: answering({ success: false, errors }, 400) });

    submit(page.form);
    await settled(page);

    expect(page.field('name').getAttribute('aria-invalid')).toBe('true');
    expect(page.field('name').getAttribute('aria-describedby')).toBe('contact-name-error');
    expect(page.field('message').getAttribute('aria-invalid')).toBe('true');
    expect(page.field('message').getAttribute('aria-describedby')).toBe('contact-message-hint contact-message-error');
    expect(page.field('email').hasAttribute('aria-invalid')).toBe(false);
    expect(page.field('email').hasAttribute('aria-describedby')).toBe(false);
  });

  test('moves the focus to the first refused field in form order, whatever the order of the answer', async () => {
    const page = renderContactForm({ email: 'nope', message: 'Too short' });
    const reversed = { message: ['Message must be at least 10 characters'], email: ['Please enter a valid email address'] };
    enhanceContactForm(page.form, { fetchImpl: answering({ success: false, errors: reversed }, 400) });

    submit(page.form);
    await settled(page);

    expect(document.activeElement).toBe(page.field('email'));
  });

  test('keeps what the visitor typed', async () => {
    const page = renderContactForm({ name: 'A', email: 'ada@example.com', message: 'Too short' });
    enhanceContactForm(page.form, { fetchImpl: answering({ success: false, errors }, 400) });

    submit(page.form);
    await settled(page);

    expect(page.field('name').value).toBe('A');
    expect(page.field('email').value).toBe('ada@example.com');
    expect(page.field('message').value).toBe('Too short');
  });

  test('shows every message of a field', async () => {
    const page = renderContactForm();
    const twoMessages = { message: ['Message must be at least 10 characters', 'Message must not contain control characters'] };
    enhanceContactForm(page.form, { fetchImpl: answering({ success: false, errors: twoMessages }, 400) });

    submit(page.form);
    await settled(page);

    expect(page.fieldError('message').textContent).toBe('Message must be at least 10 characters Message must not contain control characters');
  });

  test('clears the earlier messages as soon as the visitor submits again', async () => {
    const page = renderContactForm({ name: 'A', message: 'Too short' });
    const { fetchImpl, respond } = pendingFetch();
    enhanceContactForm(page.form, { fetchImpl });
    submit(page.form);
    respond({ success: false, errors }, 400);
    await settled(page);

    page.field('name').value = 'Ada';
    submit(page.form);

    for (const name of ['name', 'message']) {
      expect(page.fieldError(name).textContent).toBe('');
      expect(page.field(name).hasAttribute('aria-invalid')).toBe(false);
    }
    expect(page.field('name').hasAttribute('aria-describedby')).toBe(false);
    expect(page.field('message').getAttribute('aria-describedby')).toBe('contact-message-hint');

    respond({ success: false, errors: { message: ['Message must be at least 10 characters'] } }, 400);
    await settled(page);
    expect(page.fieldError('name').textContent).toBe('');
    expect(page.field('name').hasAttribute('aria-invalid')).toBe(false);
    expect(page.fieldError('message').textContent).toBe('Message must be at least 10 characters');
  });

  test('shows a message for the honeypot, which has no visible field, at the form', async () => {
    const page = renderContactForm();
    enhanceContactForm(page.form, { fetchImpl: answering({ success: false, errors: { honeypot: ['This field must be left empty'] } }, 400) });

    submit(page.form);
    await settled(page);

    expect(page.formError.textContent).toBe('This field must be left empty');
  });

  test('shows the generic message when the errors object is empty', async () => {
    const page = renderContactForm();
    enhanceContactForm(page.form, { fetchImpl: answering({ success: false, errors: {} }, 400) });

    submit(page.form);
    await settled(page);

    expect(page.formError.textContent).toBe(SOMETHING_WENT_WRONG);
  });
});

describe('contact form: other failures', () => {
  test('shows the answer’s error when the server fails', async () => {
    const page = renderContactForm();
    enhanceContactForm(page.form, { fetchImpl: answering({ success: false, error: 'Internal server error' }, 500) });

    submit(page.form);
    await settled(page);

    expect(page.formError.textContent).toBe('Internal server error');
    expect(page.formError.getAttribute('role')).toBe('alert');
    expect(page.field('message').value).toBe('Hello there, a question about the newsletter.');
  });

  test('shows "Something went wrong. Please try again." when the request fails', async () => {
    const page = renderContactForm();
    enhanceContactForm(page.form, { fetchImpl: OUTCOMES['a failed request']() });

    submit(page.form);
    await settled(page);

    expect(page.formError.textContent).toBe(SOMETHING_WENT_WRONG);
    expect(page.field('name').value).toBe('Ada Lovelace');
  });

  test('shows "Something went wrong. Please try again." when the answer is not JSON', async () => {
    const page = renderContactForm();
    enhanceContactForm(page.form, { fetchImpl: OUTCOMES['an answer that is not JSON']() });

    submit(page.form);
    await settled(page);

    expect(page.formError.textContent).toBe(SOMETHING_WENT_WRONG);
  });

  test('the previous error disappears as soon as the visitor submits again', async () => {
    const page = renderContactForm();
    const { fetchImpl, respond } = pendingFetch();
    enhanceContactForm(page.form, { fetchImpl });
    submit(page.form);
    respond({ success: false, error: 'Internal server error' }, 500);
    await settled(page);

    submit(page.form);

    expect(page.formError.textContent).toBe('');
    respond({ success: true });
    await settled(page);
  });
});

describe('contact form: at the end', () => {
  test.each(Object.keys(OUTCOMES) as Array<keyof typeof OUTCOMES>)('after %s the button is enabled again and reads "Send message"', async (outcome) => {
    const page = renderContactForm();
    enhanceContactForm(page.form, { fetchImpl: OUTCOMES[outcome]() });

    submit(page.form);
    expect(page.button.disabled).toBe(true);
    await settled(page);

    expect(page.button.disabled).toBe(false);
    expect(page.button.textContent).toBe('Send message');
  });
});

describe('contact form: a full textarea with line breaks', () => {
  /**
   * The contact endpoint in miniature: the posted message as a browser serialises it (every
   * line break as CR LF), checked by the real schema, answered as the endpoint answers.
   */
  const endpointWithTheRealSchema = () =>
    vi.fn<typeof fetch>(async (_, init) => {
      const fields = Object.fromEntries(init!.body as FormData) as Record<string, string>;
      const parsed = parseForm(contactForm, { ...fields, message: fields.message!.replace(/\r?\n/g, '\r\n') });
      return parsed.ok ? jsonResponse({ success: true }) : jsonResponse({ success: false, errors: parsed.errors }, 400);
    });
  /** `count` characters in lines of 100 (99 letters and a line break), as typed in the textarea. */
  const lines = (count: number) => `${'a'.repeat(99)}\n`.repeat(49) + 'a'.repeat(count - 4900);

  test('5,000 characters with 49 line breaks are sent and thanked for', async () => {
    const page = renderContactForm({ message: lines(5000) });
    enhanceContactForm(page.form, { fetchImpl: endpointWithTheRealSchema() });
    submit(page.form);
    await vi.waitFor(() => expect(page.status.textContent).toBe(THANKS), { interval: 1 });
  });

  test('5,001 characters with 49 line breaks: the limit of the spec at the message field', async () => {
    const page = renderContactForm({ message: lines(5001) });
    enhanceContactForm(page.form, { fetchImpl: endpointWithTheRealSchema() });
    submit(page.form);
    await settled(page);
    expect(page.fieldError('message').textContent).toBe('Message must be at most 5000 characters');
    expect(page.field('message').getAttribute('aria-invalid')).toBe('true');
  });
});
