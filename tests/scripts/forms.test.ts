// @vitest-environment happy-dom
import { describe, expect, test, vi } from 'vitest';
import { answering, renderBothForms, submit } from './form-dom.ts';

// The configured endpoint as the build would inline it; a developer's own setting must not change the test.
vi.mock('astro:env/client', () => ({ CONTACT_FORM_ENDPOINT: 'https://forms.example.com/api/contact' }));

describe('the page script', () => {
  test('enhances every form on the page, each asking its site for a challenge, the contact form posting to CONTACT_FORM_ENDPOINT', async () => {
    renderBothForms();
    const fetchImpl = answering({ success: true });
    vi.stubGlobal('fetch', fetchImpl);

    await import('../../src/scripts/forms.ts');
    const newsletter = submit(document.querySelector<HTMLFormElement>('[data-newsletter-form]')!);
    const contact = submit(document.querySelector<HTMLFormElement>('[data-contact-form]')!);

    expect(newsletter.defaultPrevented).toBe(true);
    expect(contact.defaultPrevented).toBe(true);
    await vi.waitFor(() => expect(document.body.textContent).toContain("Thanks for your message! We'll get back to you soon."), { interval: 1 });
    expect(document.body.textContent).toContain('Thanks for subscribing!');
    // The stub's answer is no challenge, so both forms post without a proof, as they must.
    expect(fetchImpl.mock.calls.map(([url]) => String(url))).toEqual([
      'http://localhost:3000/api/challenge',
      'https://forms.example.com/api/challenge',
      '/api/newsletter',
      'https://forms.example.com/api/contact',
    ]);
    vi.unstubAllGlobals();
  });
});
