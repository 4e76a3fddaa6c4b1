// @vitest-environment node
// Hint: .astro components render only under Vitest's server transform, which the node
// environment uses; the markup is then read in a happy-dom Window of its own.
import { experimental_AstroContainer as AstroContainer } from 'astro/container';
import { Window } from 'happy-dom';
import { beforeAll, describe, expect, test } from 'vitest';
import ContactForm from '../../packages/site-forms/src/components/ContactForm.astro';
import NewsletterForm from '../../packages/site-forms/src/components/NewsletterForm.astro';
import { CONTACT_MARKUP, NEWSLETTER_MARKUP } from './form-dom.ts';

// The markup the scripts, the no-JavaScript server rendering and the browser tests rely on.
// Each check runs on the real component and on the test helper, so the two cannot drift.

let container: AstroContainer;
beforeAll(async () => {
  container = await AstroContainer.create();
});

const { document } = new Window();

function parse(html: string): HTMLFormElement {
  document.body.innerHTML = html;
  return document.querySelector('form') as unknown as HTMLFormElement;
}

async function renderComponent(component: typeof ContactForm, props: Record<string, unknown> = {}): Promise<HTMLFormElement> {
  return parse(await container.renderToString(component, { props }));
}

const SOURCES = {
  'the component': {
    newsletter: () => renderComponent(NewsletterForm),
    contact: () => renderComponent(ContactForm),
  },
  'the test helper': {
    newsletter: async () => parse(NEWSLETTER_MARKUP),
    contact: async () => parse(CONTACT_MARKUP),
  },
} as const;

function expectNativeForm(form: HTMLFormElement, action: string, marker: string): void {
  expect(form.getAttribute('method')).toBe('post');
  expect(form.getAttribute('action')).toBe(action);
  expect(form.getAttribute('enctype')).toBe('multipart/form-data');
  expect(form.hasAttribute('novalidate')).toBe(false);
  expect(form.hasAttribute(marker)).toBe(true);
}

function expectField(form: HTMLFormElement, id: string, name: string, attributes: Record<string, string>): void {
  const field = form.querySelector(`#${id}`)!;
  expect(field.getAttribute('name')).toBe(name);
  for (const [attribute, value] of Object.entries(attributes)) expect(field.getAttribute(attribute), attribute).toBe(value);
  expect(form.querySelector(`label[for="${id}"]`)?.textContent?.trim()).toBeTruthy();
  expect(field.hasAttribute('placeholder')).toBe(false);
  const error = form.querySelector(`#${id}-error`)!;
  expect(error.getAttribute('data-error-for')).toBe(name);
  expect(error.textContent).toBe('');
  expect(field.hasAttribute('aria-invalid')).toBe(false);
  expect(field.getAttribute('aria-describedby') ?? '').not.toContain(`${id}-error`);
}

function expectMessages(form: HTMLFormElement, prefix: string, words: { button: string; busy: string; thanks: string }): void {
  expect(form.querySelector('button[type="submit"]')?.textContent?.trim()).toBe(words.button);
  // The script's words come from the markup, in the site's language (decision 0134).
  expect(form.dataset.busy).toBe(words.busy);
  expect(form.dataset.thanks).toBe(words.thanks);
  expect(form.dataset.failed).toBe('Something went wrong. Please try again.');
  const status = form.querySelector(`#${prefix}-status`)!;
  expect(status.getAttribute('role')).toBe('status');
  expect(status.getAttribute('aria-live')).toBe('polite');
  expect(form.querySelector(`#${prefix}-form-error`)?.getAttribute('role')).toBe('alert');
}

describe.each(Object.entries(SOURCES))('the markup contract of %s', (_, render) => {
  test('newsletter form: posts natively, email field with the server’s rules, live regions', async () => {
    const form = await render.newsletter();

    expect(form.id).toBe('newsletter-form');
    expectNativeForm(form, '/api/newsletter', 'data-newsletter-form');
    expectField(form, 'newsletter-email', 'email', { type: 'email', required: '', maxlength: '254', autocomplete: 'email' });
    expectMessages(form, 'newsletter', { button: 'Subscribe', busy: 'Subscribing...', thanks: 'Thanks for subscribing!' });
    // The sentence that follows the thanks when the answer awaits a confirmation (double opt-in).
    expect(form.dataset.confirmThanks).toBe('We have sent you an email: follow the link in it to confirm your subscription.');
  });

  test('contact form: posts natively, each field with the server’s rules, live regions', async () => {
    const form = await render.contact();

    expect(form.id).toBe('contact-form');
    expectNativeForm(form, '/api/contact', 'data-contact-form');
    expectField(form, 'contact-name', 'name', { required: '', minlength: '2', maxlength: '100', autocomplete: 'name' });
    expectField(form, 'contact-email', 'email', { type: 'email', required: '', maxlength: '254', autocomplete: 'email' });
    expectField(form, 'contact-message', 'message', { required: '', minlength: '10', maxlength: '5000' });
    expect(form.querySelector('#contact-message')?.tagName).toBe('TEXTAREA');
    expectMessages(form, 'contact', { button: 'Send message', busy: 'Sending...', thanks: "Thanks for your message! We'll get back to you soon." });
  });

  test('contact form: the honeypot is a fillable input that people neither see nor reach', async () => {
    const form = await render.contact();
    const trap = form.querySelector<HTMLInputElement>('input[name="honeypot"]')!;

    expect(trap.id).toBe('contact-honeypot');
    expect(trap.type).toBe('text');
    expect(trap.getAttribute('tabindex')).toBe('-1');
    expect(trap.getAttribute('autocomplete')).toBe('off');
    expect(trap.getAttribute('aria-hidden')).toBe('true');
    expect(trap.closest('.form-extra')?.getAttribute('aria-hidden')).toBe('true');
    expect(form.querySelector('label[for="contact-honeypot"]')?.textContent).toBe('Leave this field empty');
  });
});

describe('the form components re-show a refused submission', () => {
  test('contact form: the visitor’s values, each message at its field, the first invalid field focused', async () => {
    const html = await container.renderToString(ContactForm, {
      props: {
        values: { name: 'A', email: 'ada@example.com', message: '\nToo short <b>' },
        errors: { name: ['Name must be between 2 and 100 characters'], message: ['Message must be at least 10 characters'] },
      },
    });
    const form = parse(html);
    const field = (name: string) => form.elements.namedItem(name) as HTMLInputElement;

    expect(field('name').value).toBe('A');
    expect(field('email').value).toBe('ada@example.com');
    // Browsers drop one newline right after <textarea> (happy-dom does not), so the
    // component writes one before the value: a message that starts with a newline keeps it.
    expect(html).toMatch(/<textarea[^>]*>\n\nToo short &lt;b&gt;<\/textarea>/);
    expect(form.querySelector('#contact-name-error')?.textContent).toBe('Name must be between 2 and 100 characters');
    expect(form.querySelector('#contact-message-error')?.textContent).toBe('Message must be at least 10 characters');
    expect(field('name').getAttribute('aria-invalid')).toBe('true');
    expect(field('name').getAttribute('aria-describedby')).toBe('contact-name-error');
    expect(field('message').getAttribute('aria-describedby')).toBe('contact-message-hint contact-message-error');
    expect(field('email').hasAttribute('aria-invalid')).toBe(false);
    expect(field('name').hasAttribute('autofocus')).toBe(true);
    expect(field('message').hasAttribute('autofocus')).toBe(false);
    expect(field('honeypot').value).toBe('');
  });

  test('contact form: a message for a field without a place (the honeypot) joins the form’s alert', async () => {
    const form = await renderComponent(ContactForm, {
      values: { name: 'Bot' },
      errors: { honeypot: ['This field must be left empty'] },
      formError: 'Internal server error',
    });

    expect(form.querySelector('#contact-form-error')?.textContent).toBe('Internal server error This field must be left empty');
    expect((form.elements.namedItem('honeypot') as HTMLInputElement).value).toBe('');
    expect(form.querySelectorAll('[aria-invalid]')).toHaveLength(0);
    // No field is at fault, so the message about the whole form takes the focus.
    expect([...form.querySelectorAll('[autofocus]')].map((element) => element.id)).toEqual(['contact-form-error']);
  });

  test('newsletter form: the address, its message and a form-level error', async () => {
    const form = await renderComponent(NewsletterForm, {
      values: { email: 'ada@' },
      errors: { email: ['Please enter a valid email address'] },
      formError: 'The newsletter service is busy right now.',
    });
    const email = form.elements.namedItem('email') as HTMLInputElement;

    expect(email.value).toBe('ada@');
    expect(email.getAttribute('aria-invalid')).toBe('true');
    expect(email.getAttribute('aria-describedby')).toBe('newsletter-email-error');
    expect(form.querySelector('#newsletter-email-error')?.textContent).toBe('Please enter a valid email address');
    expect(form.querySelector('#newsletter-form-error')?.textContent).toBe('The newsletter service is busy right now.');
  });
});
