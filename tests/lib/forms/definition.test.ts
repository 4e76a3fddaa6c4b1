import { describe, expect, test } from 'vitest';
import { CONTACT_FORM } from '../../../src/lib/forms/contact.ts';
import { defineForm, displayValue, type FieldDefinition, parseForm } from '../../../src/lib/forms/definition.ts';
import { defineForms } from '../../../src/lib/forms/settings.ts';

const form = (fields: FieldDefinition[], more: Record<string, unknown> = {}) => defineForm({ name: 'quote', title: 'Request a quote', fields, ...more });

describe('defineForm', () => {
  test('fills in the defaults an owner leaves out', () => {
    expect(form([{ name: 'topic', type: 'text', label: 'Topic' }])).toEqual({
      name: 'quote',
      title: 'Request a quote',
      fields: [{ name: 'topic', type: 'text', label: 'Topic' }],
      submitLabel: 'Send',
      busyLabel: 'Sending...',
      thanks: 'Thank you! We have received it.',
      limit: undefined,
      to: undefined,
      honeypot: true,
      page: '/quote',
    });
  });

  test.each([
    [{ name: 'Quote', title: 'T', fields: [{ name: 'a', type: 'text', label: 'A' }] }, 'form "Quote": name must start with a lower-case letter'],
    [{ name: 'quote', title: 'T', fields: [] }, 'form "quote": fields needs at least one field'],
    [{ name: 'quote', title: 'T', fields: [{ name: 'a', type: 'color', label: 'A' }] }, 'form "quote": fields.0.type must be one of text, email, tel'],
    [{ name: 'quote', title: 'T', fields: [{ name: 'a', type: 'text', label: '' }] }, 'form "quote": fields.0.label the label is empty'],
    [{ name: 'quote', title: 'T', fields: [{ name: 'a', type: 'text', label: 'A', maxlength: 5 }] }, 'form "quote": fields.0.maxlength'],
    [
      {
        name: 'quote',
        title: 'T',
        fields: [
          { name: 'a', type: 'text', label: 'A' },
          { name: 'a', type: 'email', label: 'B' },
        ],
      },
      'form "quote": fields.1 (a): a second field named a',
    ],
    [{ name: 'quote', title: 'T', fields: [{ name: 'status', type: 'text', label: 'A' }] }, 'form "quote": fields.0 (status): the name status is reserved'],
    [{ name: 'quote', title: 'T', fields: [{ name: 'a', type: 'select', label: 'A' }] }, 'form "quote": fields.0 (a): a select needs its choices'],
    [{ name: 'quote', title: 'T', fields: [{ name: 'a', type: 'number', label: 'A', min: 10, max: 1 }] }, 'form "quote": fields.0 (a): min is above max'],
    [
      { name: 'quote', title: 'T', fields: [{ name: 'a', type: 'text', label: 'A', min: 1 }] },
      'form "quote": fields.0 (a): min and max belong to number and date fields',
    ],
    [
      { name: 'quote', title: 'T', fields: [{ name: 'a', type: 'text', label: 'A', minLength: 9, maxLength: 3 }] },
      'form "quote": fields.0 (a): minLength is above maxLength',
    ],
    [{ name: 'quote', title: 'T', to: 'not an address', fields: [{ name: 'a', type: 'text', label: 'A' }] }, 'form "quote": to must be an email address'],
  ])('refuses %j naming the setting', (input, message) => {
    expect(() => defineForm(input as never)).toThrow(message);
  });

  test('forms.config.ts refuses a form named as a built-in one, naming the file', () => {
    expect(() => defineForms({ forms: [{ name: 'newsletter', title: 'T', fields: [{ name: 'a', type: 'text', label: 'A' }] }] })).toThrow(
      'forms.config.ts: form "newsletter": the name newsletter is taken by the site',
    );
    expect(() => defineForms({ contactFields: [{ name: 'email', type: 'email', label: 'Again' }] })).toThrow(
      'forms.config.ts: form "contact": fields.3 (email): a second field named email',
    );
  });

  test("the contact form's extra fields come after the spec's three", () => {
    const { contact } = defineForms({ contactFields: [{ name: 'phone', type: 'tel', label: 'Phone' }] });
    expect(contact.fields.map((f) => f.name)).toEqual(['name', 'email', 'message', 'phone']);
    expect(CONTACT_FORM.fields.map((f) => f.name)).toEqual(['name', 'email', 'message']);
  });
});

describe('parseForm, one message per field', () => {
  const quote = form([
    { name: 'topic', type: 'select', label: 'Topic', required: true, choices: [{ value: 'table', label: 'A table' }] },
    { name: 'budget', type: 'number', label: 'Budget', min: 100, max: 50000 },
    { name: 'consent', type: 'checkbox', label: 'I agree', required: true },
    { name: 'phone', type: 'tel', label: 'Phone' },
    { name: 'site', type: 'url', label: 'Website' },
    { name: 'by', type: 'date', label: 'Needed by', min: '2026-01-01' },
    { name: 'details', type: 'textarea', label: 'Details', required: true, minLength: 5, maxLength: 20 },
  ]);
  const valid = { topic: 'table', budget: '1200', consent: 'yes', phone: '', site: '', by: '', details: 'Oak, 2 m.' };

  test('answers typed values: a number, a ticked box, empty optional fields', () => {
    expect(parseForm(quote, valid)).toEqual({
      ok: true,
      values: { topic: 'table', budget: 1200, consent: true, phone: '', site: '', by: '', details: 'Oak, 2 m.', honeypot: '' },
    });
  });

  test.each([
    ['topic', 'chair', 'Please choose one of the options for Topic'],
    ['topic', '', 'Topic is required'],
    ['budget', '12e3', 'Budget must be a number'],
    ['budget', '99', 'Budget must be at least 100'],
    ['budget', '50001', 'Budget must be at most 50000'],
    ['consent', '', 'Please tick “I agree” to continue'],
    ['phone', '12', 'Phone must be a phone number'],
    ['phone', '+44 20\n7946', 'Phone must not contain line breaks or control characters'],
    ['site', 'javascript:alert(1)', 'Website must be a web address starting with https:// or http://'],
    ['by', '2025-12-31', 'Needed by must be at least 2026-01-01'],
    ['by', '2026-02-30', 'Needed by must be a date'],
    ['details', 'Oak', 'Details must be at least 5 characters'],
    ['details', 'x'.repeat(21), 'Details must be at most 20 characters'],
    ['honeypot', 'bot', 'This field must be left empty'],
  ])('refuses %s = %j with "%s"', (name, value, message) => {
    const fields: Record<string, string> = { ...valid, [name]: value };
    if (value === '' && name === 'consent') delete fields.consent;
    expect(parseForm(quote, fields)).toEqual({ ok: false, errors: { [name]: [message] } });
  });

  test.each([
    ['phone', '+44 (0)20 7946 0958'],
    ['site', 'https://example.org/plans'],
    ['by', '2026-03-01'],
    ['budget', '1200.50'],
  ])('takes %s = %j', (name, value) => {
    expect(parseForm(quote, { ...valid, [name]: value }).ok).toBe(true);
  });

  test('a field of its own messages reads them', () => {
    const own = form([
      { name: 'age', type: 'number', label: 'Age', required: true, min: 18, messages: { required: 'How old are you?', tooSmall: 'Adults only' } },
    ]);
    expect(parseForm(own, {})).toEqual({ ok: false, errors: { age: ['How old are you?'] } });
    expect(parseForm(own, { age: '17' })).toEqual({ ok: false, errors: { age: ['Adults only'] } });
  });
});

describe('displayValue', () => {
  test.each([
    [{ name: 'c', type: 'checkbox', label: 'C' }, true, 'Yes'],
    [{ name: 'c', type: 'checkbox', label: 'C' }, false, 'No'],
    [{ name: 's', type: 'select', label: 'S', choices: [{ value: 'oak', label: 'Oak wood' }] }, 'oak', 'Oak wood'],
    [{ name: 'n', type: 'number', label: 'N' }, null, ''],
    [undefined, 1200, '1200'],
  ] as const)('%j shows %j as %j', (field, value, shown) => {
    expect(displayValue(field as FieldDefinition | undefined, value)).toBe(shown);
  });
});
