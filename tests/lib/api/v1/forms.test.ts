/**
 * GET /api/v1/forms (issue 42, api/v1/forms.ts) through the pipeline: the site's forms a key may
 * read, with their fields; none outside its forms.
 */
import { describe, expect, test } from 'vitest';
import { contactForm, ownerForms } from '../../../../packages/site-forms/src/lib/forms/registry.ts';
import { testEngines } from '../../../support/stores.ts';
import { bodyOf, useV1 } from './v1-support.ts';

describe.each(testEngines().slice(0, 1))('/api/v1/forms on $name', (engine) => {
  const v1 = useV1(engine);

  test('a key of every form lists the site’s forms with their fields; a key limited to forms only those', async () => {
    const { key: every } = await v1.makeKey('every', 'read');
    const all = bodyOf(await v1.call('GET', '/api/v1/forms', { key: every }))!;
    expect(all.forms.map((form) => form.name)).toEqual([contactForm, ...ownerForms].map((form) => form.name));
    expect(all.forms[0]).toEqual({
      name: 'contact',
      title: contactForm.title,
      page: contactForm.page,
      fields: contactForm.fields.map((field) => ({
        name: field.name,
        type: field.type,
        label: field.label,
        required: field.required === true,
        ...(field.choices && { choices: field.choices.map(({ value, label }) => ({ value, label })) }),
      })),
    });
    expect(all.forms[0]!).toMatchObject({ fields: expect.arrayContaining([{ name: 'email', type: 'email', label: expect.any(String), required: true }]) });
    const { key: quotes } = await v1.makeKey('quotes', 'read', ['quote', 'newsletter']);
    expect(bodyOf(await v1.call('GET', '/api/v1/forms', { key: quotes }))).toEqual({ success: true, forms: [] });
  });
});
