import { describe, expect, test } from 'vitest';
import { defineForm } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import {
  contactForm,
  extraFieldNames,
  extraFields,
  fieldOf,
  formNamed,
  formTitleOf,
  ownerForms,
  presentFields,
} from '../../../packages/site-forms/src/lib/forms/registry.ts';
import { defineForms } from '../../../packages/site-forms/src/lib/forms/define-forms.ts';

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

// One presentation of a submission's extra fields and its form, read by the admin's list and
// page and by the inbox command: labels and values as the form defines them.
describe('a submission as the owner reads it', () => {
  const set = defineForms({
    forms: [
      {
        name: 'quote',
        title: 'Request a quote',
        fields: [
          { name: 'budget', type: 'select', label: 'Budget', choices: [{ value: 'small', label: 'Under 1000' }] },
          { name: 'rush', type: 'checkbox', label: 'In a hurry' },
        ],
      },
    ],
  });

  test('each field with its label and its value as shown; a field no longer defined by its name and stored value', () => {
    expect(presentFields('quote', { budget: 'small', rush: true, gone: 'kept' }, set)).toEqual([
      { key: 'budget', label: 'Budget', value: 'Under 1000' },
      { key: 'rush', label: 'In a hurry', value: 'Yes' },
      { key: 'gone', label: 'gone', value: 'kept' },
    ]);
  });

  test("in the form's order whatever order they were stored in; an empty one stays, as ''", () => {
    expect(presentFields('quote', { rush: false, gone: 'kept', budget: '' }, set)).toEqual([
      { key: 'budget', label: 'Budget', value: '' },
      { key: 'rush', label: 'In a hurry', value: 'No' },
      { key: 'gone', label: 'gone', value: 'kept' },
    ]);
  });

  test("the message, given, at its field's place; never otherwise, as it has a column of its own", () => {
    const withMessage = defineForms({
      forms: [
        {
          name: 'visit',
          title: 'Book a visit',
          fields: [
            { name: 'name', type: 'text', label: 'Name' },
            { name: 'message', type: 'textarea', label: 'What to bring' },
            { name: 'day', type: 'text', label: 'Day' },
          ],
        },
      ],
    });
    expect(presentFields('visit', { day: 'Monday' }, withMessage, 'A ladder')).toEqual([
      { key: 'message', label: 'What to bring', value: 'A ladder' },
      { key: 'day', label: 'Day', value: 'Monday' },
    ]);
    expect(presentFields('visit', { day: 'Monday' }, withMessage)).toEqual([{ key: 'day', label: 'Day', value: 'Monday' }]);
  });

  test('a file field is not a value: its files are listed from the files table, never as an empty field', () => {
    const withFiles = defineForms({
      contactFields: [{ name: 'photos', type: 'file', label: 'Photos of the part' }],
      forms: [
        {
          name: 'apply',
          title: 'Apply',
          fields: [
            { name: 'name', type: 'text', label: 'Name' },
            { name: 'cv', type: 'file', label: 'CV' },
            { name: 'start', type: 'text', label: 'Can start' },
          ],
        },
      ],
    });
    expect(presentFields('contact', {}, withFiles)).toEqual([]);
    expect(presentFields('apply', { start: 'May' }, withFiles)).toEqual([{ key: 'start', label: 'Can start', value: 'May' }]);
  });

  test("a form's title, or its name when it is no longer defined", () => {
    expect(formTitleOf('quote', set)).toBe('Request a quote');
    expect(formTitleOf('retired', set)).toBe('retired');
  });
});
