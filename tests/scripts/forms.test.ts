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

    await import('../../packages/site-forms/src/scripts/forms.ts');
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

  test("enhances an owner's form, and leaves one with a file field to the upload script", async () => {
    const owner = (id: string, extra: string) => `
      <form id="${id}" method="post" action="/api/forms/${id}" data-form="${id}" data-busy="Sending..." data-thanks="Thanks, ${id}." data-failed="Something went wrong.">
        <p id="${id}-name-error" data-error-for="name"></p><input name="name" value="Ada">${extra}
        <button type="submit">Send</button><p role="alert"></p><p role="status"></p>
      </form>`;
    document.body.innerHTML = owner('quote', '') + owner('apply', '<input name="cv" type="file">');
    const fetchImpl = answering({ success: true });
    vi.stubGlobal('fetch', fetchImpl);

    vi.resetModules();
    await import('../../packages/site-forms/src/scripts/forms.ts');
    const quote = submit(document.querySelector<HTMLFormElement>('#quote')!);
    const apply = submit(document.querySelector<HTMLFormElement>('#apply')!);

    expect(quote.defaultPrevented).toBe(true);
    expect(apply.defaultPrevented).toBe(false);
    await vi.waitFor(() => expect(document.getElementById('quote')!.textContent).toContain('Thanks, quote.'), { interval: 1 });
    expect(fetchImpl.mock.calls.map(([url]) => String(url))).toEqual(['http://localhost:3000/api/challenge', 'http://localhost:3000/api/forms/quote']);
    vi.unstubAllGlobals();
  });

  test('leaves a contact form with a file field to the upload script', async () => {
    document.body.innerHTML = `
      <form id="contact-form" method="post" action="/api/contact" data-contact-form data-busy="Sending..." data-thanks="Thanks." data-failed="Something went wrong.">
        <p id="contact-name-error" data-error-for="name"></p><input name="name" value="Ada"><input name="attachment" type="file">
        <button type="submit">Send</button><p role="alert"></p><p role="status"></p>
      </form>`;
    const fetchImpl = answering({ success: true });
    vi.stubGlobal('fetch', fetchImpl);

    vi.resetModules();
    await import('../../packages/site-forms/src/scripts/forms.ts');
    expect(submit(document.querySelector<HTMLFormElement>('#contact-form')!).defaultPrevented).toBe(false);
    expect(fetchImpl).not.toHaveBeenCalled();
    vi.unstubAllGlobals();
  });
});
