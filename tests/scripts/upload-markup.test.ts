// @vitest-environment node
// Hint: .astro components render only under Vitest's server transform (see markup.test.ts).
import { experimental_AstroContainer as AstroContainer } from 'astro/container';
import { Window } from 'happy-dom';
import { beforeAll, describe, expect, test } from 'vitest';
import Form from '../../packages/site-forms/src/components/Form.astro';
import { defineForm } from '../../packages/site-forms/src/lib/forms/definition.ts';

/** The markup of a form with a file field: the contract src/scripts/uploads.ts reads (tests/scripts/uploads.test.ts). */
const APPLY = defineForm({
  name: 'apply',
  title: 'Apply',
  fields: [
    { name: 'name', type: 'text', label: 'Name', required: true },
    { name: 'cv', type: 'file', label: 'CV', hint: 'A PDF.', accept: ['application/pdf', '.pdf'], maxSize: 1_500_000, maxFiles: 2 },
    { name: 'photo', type: 'file', label: 'Photo' },
  ],
});
const PLAIN = defineForm({ name: 'plain', title: 'Plain', fields: [{ name: 'name', type: 'text', label: 'Name' }] });

let container: AstroContainer;
beforeAll(async () => {
  container = await AstroContainer.create();
});

async function render(props: Record<string, unknown> = {}) {
  const { document } = new Window();
  document.body.innerHTML = await container.renderToString(Form, { props: { definition: APPLY, ...props } });
  return document;
}

describe('a file field in Form.astro', () => {
  test('a file input with what it accepts, several when it takes several, and its limits and their words for the script', async () => {
    const doc = await render();
    const cv = doc.getElementById('apply-cv')!;
    const attributes = (names: string[]) => names.map((name) => cv.getAttribute(name));
    expect(attributes(['type', 'name', 'accept', 'data-max-size', 'data-max-files'])).toEqual(['file', 'cv', 'application/pdf,.pdf', '1500000', '2']);
    expect(cv.hasAttribute('multiple')).toBe(true);
    expect(cv.getAttribute('data-too-large')).toBe('{name} is larger than 1.5 MB; choose a smaller file.');
    expect(cv.getAttribute('data-too-many')).toBe('Choose at most 2 files.');
    const photo = doc.getElementById('apply-photo')!;
    expect(photo.hasAttribute('multiple')).toBe(false);
    expect(photo.getAttribute('data-too-many')).toBe('Choose one file only.');
    // Without a maxSize of its own, the field's default limit (10 MiB) is named.
    expect(photo.getAttribute('data-max-size')).toBe('10485760');
  });

  test('the form carries the words of the progress, and its own script; a form without files carries neither', async () => {
    const doc = await render();
    const form = doc.querySelector('form')!;
    expect([form.getAttribute('data-uploading'), form.getAttribute('data-progress-label'), form.getAttribute('data-chosen')]).toEqual([
      'Sending: {percent} %',
      'Upload progress',
      'Chosen files',
    ]);
    const { document: plain } = new Window();
    plain.body.innerHTML = await container.renderToString(Form, { props: { definition: PLAIN } });
    expect(plain.querySelector('form')!.hasAttribute('data-uploading')).toBe(false);
  });

  test('a refused post shown again says at each file field that its files must be chosen again', async () => {
    const doc = await render({ values: { name: 'Ada' }, errors: { name: ['Too short'] } });
    expect(doc.getElementById('apply-cv-hint')!.textContent).toBe('A PDF. Your files were not kept: please choose them again.');
    expect(doc.getElementById('apply-photo-hint')!.textContent).toBe('Your files were not kept: please choose them again.');
    expect(doc.getElementById('apply-photo')!.getAttribute('aria-describedby')).toBe('apply-photo-hint');
    // The first time, only the field's own hint.
    const fresh = await render();
    expect(fresh.getElementById('apply-cv-hint')!.textContent).toBe('A PDF.');
    expect(fresh.getElementById('apply-photo-hint')).toBeNull();
  });
});
