import { expect, vi } from 'vitest';

/**
 * The markup of src/components/NewsletterForm.astro, as the page serves it
 * (tests/scripts/markup.test.ts checks that the built page keeps this contract).
 */
export const NEWSLETTER_MARKUP = `
<form id="newsletter-form" class="form" method="post" action="/api/newsletter" enctype="multipart/form-data" data-busy="Subscribing..." data-thanks="Thanks for subscribing!" data-confirm-thanks="We have sent you an email: follow the link in it to confirm your subscription." data-failed="Something went wrong. Please try again." data-newsletter-form>
  <div class="field">
    <label for="newsletter-email">Email address</label>
    <p id="newsletter-email-error" class="field-error" data-error-for="email"></p>
    <input id="newsletter-email" name="email" type="email" required maxlength="254" autocomplete="email">
  </div>
  <button type="submit">Subscribe</button>
  <p id="newsletter-form-error" class="form-error" role="alert"></p>
  <p id="newsletter-status" class="form-status" role="status" aria-live="polite"></p>
</form>`;

/** The markup of src/components/ContactForm.astro, as the page serves it. */
export const CONTACT_MARKUP = `
<form id="contact-form" class="form" method="post" action="/api/contact" enctype="multipart/form-data" data-busy="Sending..." data-thanks="Thanks for your message! We'll get back to you soon." data-failed="Something went wrong. Please try again." data-contact-form>
  <div class="field">
    <label for="contact-name">Name</label>
    <p id="contact-name-error" class="field-error" data-error-for="name"></p>
    <input id="contact-name" name="name" required minlength="2" maxlength="100" autocomplete="name">
  </div>
  <div class="field">
    <label for="contact-email">Email address</label>
    <p id="contact-email-error" class="field-error" data-error-for="email"></p>
    <input id="contact-email" name="email" type="email" required maxlength="254" autocomplete="email">
  </div>
  <div class="field">
    <label for="contact-message">Message</label>
    <p id="contact-message-hint" class="field-hint">At least 10 characters.</p>
    <p id="contact-message-error" class="field-error" data-error-for="message"></p>
    <textarea id="contact-message" name="message" aria-describedby="contact-message-hint" required minlength="10" maxlength="5000"></textarea>
  </div>
  <div class="form-extra" aria-hidden="true">
    <label for="contact-honeypot">Leave this field empty</label>
    <input id="contact-honeypot" name="honeypot" type="text" tabindex="-1" autocomplete="off" aria-hidden="true">
  </div>
  <button type="submit">Send message</button>
  <p id="contact-form-error" class="form-error" role="alert"></p>
  <p id="contact-status" class="form-status" role="status" aria-live="polite"></p>
</form>`;

/** A form on the page and the parts a visitor sees. */
export type RenderedForm = {
  form: HTMLFormElement;
  button: HTMLButtonElement;
  status: HTMLElement;
  formError: HTMLElement;
  field(name: string): HTMLInputElement | HTMLTextAreaElement;
  fieldError(name: string): HTMLElement;
};

/** Puts a newsletter form on an otherwise empty page, the email filled in. */
export function renderNewsletterForm(email = 'ada@example.com'): RenderedForm {
  const rendered = render(NEWSLETTER_MARKUP);
  rendered.field('email').value = email;
  return rendered;
}

/** Puts a contact form on an otherwise empty page, filled in as a visitor would. */
export function renderContactForm(values: Partial<Record<'name' | 'email' | 'message', string>> = {}): RenderedForm {
  const rendered = render(CONTACT_MARKUP);
  const filled = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello there, a question about the newsletter.', ...values };
  for (const [name, value] of Object.entries(filled)) rendered.field(name).value = value;
  return rendered;
}

/** Puts both forms on one page, as forms.ts would find them. */
export function renderBothForms(): void {
  document.body.innerHTML = NEWSLETTER_MARKUP + CONTACT_MARKUP;
}

function render(markup: string): RenderedForm {
  document.body.innerHTML = markup;
  const form = document.querySelector('form')!;
  const prefix = form.id.replace(/-form$/, '');
  return {
    form,
    button: form.querySelector('button[type="submit"]')!,
    status: form.querySelector('[role="status"]')!,
    formError: form.querySelector('[role="alert"]')!,
    field: (name) => form.elements.namedItem(name) as HTMLInputElement | HTMLTextAreaElement,
    fieldError: (name) => document.getElementById(`${prefix}-${name}-error`)!,
  };
}

/** Submits the form as the browser does and answers the event, to see if the native post was stopped. */
export function submit(form: HTMLFormElement): Event {
  const event = new Event('submit', { bubbles: true, cancelable: true });
  form.dispatchEvent(event);
  return event;
}

/** Waits until the script has finished with the answer: its button is enabled again. */
export async function settled({ button }: RenderedForm): Promise<void> {
  // Generous: solving the proof of work takes longer on a loaded CI machine than the default 1 s.
  await vi.waitFor(() => expect(button.disabled).toBe(false), { interval: 1, timeout: 15_000 });
}

/** A JSON answer as the endpoints send it. */
export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

/** A fetch stub that always answers `body` as JSON. */
export function answering(body: unknown, status = 200) {
  return vi.fn<typeof fetch>(async () => jsonResponse(body, status));
}

/** A fetch stub whose answer the test gives later, to look at the page while the request is pending. */
export function pendingFetch() {
  let answer: (response: Response) => void = () => {};
  const fetchImpl = vi.fn<typeof fetch>(
    () =>
      new Promise<Response>((resolve) => {
        answer = resolve;
      }),
  );
  return { fetchImpl, respond: (body: unknown, status = 200) => answer(jsonResponse(body, status)) };
}

/** The ways a request can end that SPEC.md 4.3 names, each as a fetch stub. */
export const OUTCOMES = {
  'success: true': () => answering({ success: true }),
  'success: false with an error': () => answering({ success: false, error: 'Please enter a valid email address' }, 400),
  'success: false with field errors': () => answering({ success: false, errors: { email: ['Please enter a valid email address'] } }, 400),
  'a failed request': () => vi.fn<typeof fetch>(async () => Promise.reject(new TypeError('Failed to fetch'))),
  'an answer that is not JSON': () =>
    vi.fn<typeof fetch>(async () => new Response('<h1>502 Bad Gateway</h1>', { status: 502, headers: { 'content-type': 'text/html' } })),
} as const;

/** The call a fetch stub received: its address and options. */
export function requestOf(fetchImpl: ReturnType<typeof vi.fn<typeof fetch>>): { url: string; init: RequestInit } {
  expect(fetchImpl).toHaveBeenCalledTimes(1);
  const [url, init] = fetchImpl.mock.calls[0]!;
  return { url: String(url), init: init ?? {} };
}
