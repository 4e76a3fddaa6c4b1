// @vitest-environment happy-dom
import { describe, expect, test } from 'vitest';
import { enhanceDefinedForm } from '../../packages/site-forms/src/scripts/defined-form.ts';
import { answering, pendingFetch, requestOf, settled, submit } from './form-dom.ts';

// An owner's form as Form.astro renders it (tests/scripts/form-markup.test.ts checks the real one):
// its words in the markup, its endpoint in `action`.
const QUOTE_MARKUP = `
<form id="quote-form" class="form" method="post" action="/api/forms/quote" enctype="multipart/form-data" aria-label="Request a quote"
  data-form="quote" data-thanks="Thank you! We will send you a quote." data-busy="Asking..." data-failed="Something went wrong. Please try again.">
  <div class="field"><label for="quote-topic">Topic</label>
    <p id="quote-topic-error" class="field-error" data-error-for="topic"></p>
    <select id="quote-topic" name="topic" required><option value="">Choose one</option><option value="table" selected>A table</option></select></div>
  <div class="field field-checkbox">
    <p id="quote-consent-error" class="field-error" data-error-for="consent"></p>
    <span class="field-check"><input id="quote-consent" name="consent" type="checkbox" value="yes" /><label for="quote-consent">I agree</label></span></div>
  <div class="form-extra" aria-hidden="true"><input id="quote-honeypot" name="honeypot" type="text" tabindex="-1" /></div>
  <button type="submit">Ask for a quote</button>
  <p id="quote-form-error" class="form-error" role="alert" tabindex="-1"></p>
  <p id="quote-status" class="form-status" role="status" aria-live="polite"></p>
</form>`;

function render() {
  document.body.innerHTML = QUOTE_MARKUP;
  const form = document.querySelector('form')!;
  return { form, button: form.querySelector('button')!, status: document.getElementById('quote-status')!, error: document.getElementById('quote-form-error')! };
}

describe("an owner's form with JavaScript", () => {
  test('posts its fields to its own action, saying its own busy words meanwhile', async () => {
    const page = render();
    const { fetchImpl, respond } = pendingFetch();
    enhanceDefinedForm(page.form, fetchImpl);
    submit(page.form);
    expect(page.button.textContent).toBe('Asking...');
    respond({ success: true });
    await settled(page as never);
    const { url, init } = requestOf(fetchImpl);
    expect(new URL(url).pathname).toBe('/api/forms/quote');
    expect([...(init.body as FormData).entries()]).toEqual([
      ['topic', 'table'],
      ['honeypot', ''],
    ]);
    expect(page.status.textContent).toBe('Thank you! We will send you a quote.');
    expect(page.form.children).toHaveLength(1);
    expect(page.button.textContent).toBe('Ask for a quote');
  });

  test('shows each message at its field, the checkbox included, and focuses the first', async () => {
    const page = render();
    enhanceDefinedForm(page.form, answering({ success: false, errors: { consent: ['Please agree'], honeypot: ['This field must be left empty'] } }, 400));
    submit(page.form);
    await settled(page as never);
    expect(document.getElementById('quote-consent-error')!.textContent).toBe('Please agree');
    expect(document.getElementById('quote-consent')!.getAttribute('aria-describedby')).toBe('quote-consent-error');
    expect(document.activeElement?.id).toBe('quote-consent');
    expect(page.error.textContent).toBe('This field must be left empty');
  });
});
