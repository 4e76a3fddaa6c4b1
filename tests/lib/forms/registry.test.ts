import { describe, expect, test } from 'vitest';
import { defineForm } from '../../../src/lib/forms/definition.ts';
import { contactForm, extraFieldNames, extraFields, fieldOf, formNamed, ownerForms } from '../../../src/lib/forms/registry.ts';

// The suite's forms (tests/fixtures/test.forms.config.ts, which vitest.config.ts imports for
// `#forms-config`) add no field to the contact form and no form of the owner's: these tests read
// the registry as the site builds it from that file.
describe("the site's forms, from the suite's forms.config.ts", () => {
  test('the contact form is the built-in one and there are no forms of the owner', () => {
    expect(contactForm.name).toBe('contact');
    expect(contactForm.fields.map((field) => [field.name, field.type, field.required])).toEqual([
      ['name', 'text', true],
      ['email', 'email', true],
      ['message', 'textarea', true],
    ]);
    expect(ownerForms).toEqual([]);
  });

  test('a form is found by its name, and an unknown name finds none', () => {
    expect(formNamed('contact')).toBe(contactForm);
    expect(formNamed('quote')).toBeUndefined();
    expect(formNamed('')).toBeUndefined();
  });

  test('a field is found in its form for its label; one no longer defined, or of a form no longer defined, is not', () => {
    expect(fieldOf('contact', 'email')).toEqual({ name: 'email', type: 'email', label: 'Email address', required: true, autocomplete: 'email' });
    expect(fieldOf('contact', 'message')?.label).toBe('Message');
    expect(fieldOf('contact', 'phone')).toBeUndefined();
    expect(fieldOf('quote', 'email')).toBeUndefined();
  });

  test('the contact form alone has no extra fields, so the exports have no extra columns', () => {
    expect(extraFieldNames()).toEqual([]);
  });
});

describe('the extra fields of a form: those kept in the JSON of a submission', () => {
  test('all but name, email and message, in form order', () => {
    const quote = defineForm({
      name: 'quote',
      title: 'Request a quote',
      fields: [
        { name: 'name', type: 'text', label: 'Your name' },
        { name: 'phone', type: 'tel', label: 'Phone' },
        { name: 'email', type: 'email', label: 'Email' },
        { name: 'budget', type: 'number', label: 'Budget' },
        { name: 'message', type: 'textarea', label: 'Details' },
      ],
    });
    expect(extraFields(quote).map((field) => field.name)).toEqual(['phone', 'budget']);
    expect(extraFields(contactForm)).toEqual([]);
  });
});
