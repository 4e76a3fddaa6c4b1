// @vitest-environment node
// Hint: .astro components render only under Vitest's server transform (see markup.test.ts).
import { experimental_AstroContainer as AstroContainer } from 'astro/container';
import { Window } from 'happy-dom';
import { beforeAll, describe, expect, test } from 'vitest';
import Form from '../../packages/site-forms/src/components/Form.astro';
import { defineForm } from '../../packages/site-forms/src/lib/forms/definition.ts';

const QUOTE = defineForm({
  name: 'quote',
  title: 'Request a quote',
  submitLabel: 'Ask for a quote',
  fields: [
    { name: 'topic', type: 'select', label: 'Topic', required: true, choices: [{ value: 'table', label: 'A table' }] },
    { name: 'budget', type: 'number', label: 'Budget', hint: 'A rough figure.', min: 100, max: 5000 },
    { name: 'by', type: 'date', label: 'Needed by' },
    { name: 'details', type: 'textarea', label: 'Details', required: true, minLength: 10, rows: 4 },
    { name: 'consent', type: 'checkbox', label: 'I agree', required: true },
  ],
});

let container: AstroContainer;
beforeAll(async () => {
  container = await AstroContainer.create();
});

async function render(props: Record<string, unknown> = {}) {
  const { document } = new Window();
  document.body.innerHTML = await container.renderToString(Form, { props: { definition: QUOTE, ...props } });
  return document;
}

describe('Form.astro renders a definition', () => {
  test('a native form to /api/forms/<name>, each field with its label and the attributes its rules imply', async () => {
    const doc = await render();
    const form = doc.querySelector('form')!;
    expect([form.id, form.getAttribute('action'), form.getAttribute('method'), form.getAttribute('enctype'), form.getAttribute('aria-label')]).toEqual([
      'quote-form',
      '/api/forms/quote',
      'post',
      'multipart/form-data',
      'Request a quote',
    ]);
    const attributes = (id: string, names: string[]) => names.map((name) => doc.getElementById(id)?.getAttribute(name) ?? null);
    expect(doc.getElementById('quote-topic')?.tagName).toBe('SELECT');
    expect([...doc.querySelectorAll('#quote-topic option')].map((o) => [o.getAttribute('value'), o.textContent])).toEqual([
      ['', 'Choose one'],
      ['table', 'A table'],
    ]);
    expect(attributes('quote-budget', ['type', 'min', 'max', 'step', 'aria-describedby'])).toEqual(['number', '100', '5000', 'any', 'quote-budget-hint']);
    expect(attributes('quote-by', ['type', 'required'])).toEqual(['date', null]);
    expect(attributes('quote-details', ['minlength', 'maxlength', 'rows', 'required'])).toEqual(['10', '5000', '4', '']);
    expect(attributes('quote-consent', ['type', 'value', 'required'])).toEqual(['checkbox', 'yes', '']);
    for (const name of ['topic', 'budget', 'by', 'details', 'consent']) {
      expect(doc.querySelector(`label[for="quote-${name}"]`)?.textContent?.trim()).toBeTruthy();
      expect(doc.getElementById(`quote-${name}-error`)?.getAttribute('data-error-for')).toBe(name);
    }
    expect(doc.getElementById('quote-honeypot')?.getAttribute('tabindex')).toBe('-1');
    expect(doc.querySelector('button[type="submit"]')?.textContent).toBe('Ask for a quote');
  });

  test('a refused post again: values in place, each message at its field, the first invalid one focused', async () => {
    const doc = await render({
      values: { topic: 'table', budget: '50', details: 'Short', consent: 'yes' },
      errors: { budget: ['Budget must be at least 100'], details: ['Details must be at least 10 characters'] },
    });
    expect(doc.querySelector('#quote-topic option[value="table"]')?.hasAttribute('selected')).toBe(true);
    expect(doc.getElementById('quote-budget')?.getAttribute('value')).toBe('50');
    expect(doc.getElementById('quote-consent')?.hasAttribute('checked')).toBe(true);
    expect(doc.getElementById('quote-budget-error')?.textContent).toBe('Budget must be at least 100');
    expect(doc.getElementById('quote-budget')?.getAttribute('aria-describedby')).toBe('quote-budget-hint quote-budget-error');
    expect(doc.getElementById('quote-budget')?.getAttribute('aria-invalid')).toBe('true');
    expect(doc.getElementById('quote-budget')?.hasAttribute('autofocus')).toBe(true);
    expect(doc.getElementById('quote-details')?.hasAttribute('autofocus')).toBe(false);
  });
});
