import { describe, expect, test } from 'vitest';
import { CONTACT_FORM } from '../../../packages/site-forms/src/lib/forms/contact.ts';
import { defineForm, displayValue, type FieldDefinition, isTextLike, parseForm, thanksPath } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import { defineForms } from '../../../packages/site-forms/src/lib/forms/define-forms.ts';

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
      nav: 'Request a quote',
    });
  });

  test.each([
    [{ name: 'Quote', title: 'T', fields: [{ name: 'a', type: 'text', label: 'A' }] }, 'form "Quote": name must start with a lower-case letter'],
    [{ name: 'quote', title: 'T', fields: [] }, 'form "quote": fields needs at least one field'],
    [{ name: 'quote', title: 'T', fields: [{ name: 'a', type: 'color', label: 'A' }] }, 'form "quote": fields.0.type must be one of text, email, tel'],
    [{ name: 'quote', title: 'T', fields: [{ name: 'a', type: 'text', label: '' }] }, 'form "quote": fields.0.label the label is empty'],
    [{ name: 'quote', title: 'T', fields: [{ name: 'a', type: 'text', label: 'A', maxlength: 5 }] }, 'form "quote": fields.0.maxlength'],
    [
      { name: 'quote', title: 'T', nav: true, fields: [{ name: 'a', type: 'text', label: 'A' }] },
      'form "quote": nav must be the words of its menu link, or false',
    ],
    [
      { name: 'quote', title: 'T', nav: 'x'.repeat(41), fields: [{ name: 'a', type: 'text', label: 'A' }] },
      'form "quote": nav the menu label is longer than 40 characters',
    ],
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
    [
      { name: 'quote', title: 'T', to: ['a@example.org', 'nope'], fields: [{ name: 'a', type: 'text', label: 'A' }] },
      'form "quote": to.1 must be an email address',
    ],
    [{ name: 'quote', title: 'T', to: [], fields: [{ name: 'a', type: 'text', label: 'A' }] }, 'form "quote": to needs at least one address'],
  ])('refuses %j naming the setting', (input, message) => {
    expect(() => defineForm(input as never)).toThrow(message);
  });

  const refusal = (input: unknown) => {
    try {
      defineForm(input as never);
    } catch (error) {
      return (error as Error).message;
    }
    return 'accepted';
  };
  const one = (field: Record<string, unknown>) => ({ name: 'quote', title: 'T', fields: [{ name: 'a', label: 'A', ...field }] });

  test.each([
    [
      'a form without a name',
      { title: 'T', fields: [{ name: 'a', type: 'text', label: 'A' }] },
      'form (unnamed): name Invalid key: Expected "name" but received undefined',
    ],
    ['no definition at all', null, 'form (unnamed): the definition Invalid type: Expected Object but received null'],
    ['choices on a text field', one({ type: 'text', choices: [{ value: 'x', label: 'X' }] }), 'form "quote": fields.0 (a): choices belong to a select only'],
    [
      'two choices of one value',
      one({
        type: 'select',
        choices: [
          { value: 'oak', label: 'Oak' },
          { value: 'oak', label: 'Oak again' },
        ],
      }),
      'form "quote": fields.0 (a): two choices of one value',
    ],
    ['a maxLength on a number', one({ type: 'number', maxLength: 5 }), 'form "quote": fields.0 (a): minLength and maxLength belong to text fields'],
    ['a minLength on a checkbox', one({ type: 'checkbox', minLength: 1 }), 'form "quote": fields.0 (a): minLength and maxLength belong to text fields'],
    ['a date as the min of a number', one({ type: 'number', min: '2026-01-01' }), 'form "quote": fields.0 (a): min must be a number'],
    ['a number as the max of a date', one({ type: 'date', max: 5 }), 'form "quote": fields.0 (a): max must be a date as YYYY-MM-DD'],
    ['a date min after its max', one({ type: 'date', min: '2026-02-01', max: '2026-01-31' }), 'form "quote": fields.0 (a): min is above max'],
    ['rows on a text field', one({ type: 'text', rows: 3 }), 'form "quote": fields.0 (a): rows belong to a textarea'],
    ['a minLength above the maxLength', one({ type: 'text', minLength: 9, maxLength: 3 }), 'form "quote": fields.0 (a): minLength is above maxLength (3)'],
    [
      'a minLength above the 200 a text field takes by default',
      one({ type: 'text', minLength: 201 }),
      'form "quote": fields.0 (a): minLength is above maxLength (200)',
    ],
    [
      'a minLength above the 5000 a textarea takes by default',
      one({ type: 'textarea', minLength: 5001 }),
      'form "quote": fields.0 (a): minLength is above maxLength (5000)',
    ],
  ])('refuses %s, in so many words', (_, input, message) => {
    expect(refusal(input)).toBe(message);
  });

  test.each([
    ['a minLength equal to the maxLength', one({ type: 'text', minLength: 3, maxLength: 3 })],
    ['a minLength equal to the default maxLength', one({ type: 'text', minLength: 200 })],
    ['a number of min equal to max', one({ type: 'number', min: 5, max: 5 })],
    ['a date with a min and a max', one({ type: 'date', min: '2026-01-01', max: '2026-01-01' })],
    ['rows on a textarea', one({ type: 'textarea', rows: 3 })],
  ])('takes %s', (_, input) => {
    expect(refusal(input)).toBe('accepted');
  });

  test("the owner's own address may be on a one-label domain", () => {
    expect(form([{ name: 'topic', type: 'text', label: 'Topic' }], { to: 'owner@localhost' }).to).toBe('owner@localhost');
  });

  test('`to` may be a list of addresses, each on a one-label domain if need be, kept as written', () => {
    expect(form([{ name: 'topic', type: 'text', label: 'Topic' }], { to: ['Bookings@Example.org', 'owner@localhost'] }).to).toEqual([
      'Bookings@Example.org',
      'owner@localhost',
    ]);
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

  test("the owner's forms come checked, and two of one name are refused", () => {
    const topic = { name: 'topic', type: 'text', label: 'Topic' } as const;
    expect(defineForms({ forms: [{ name: 'quote', title: 'Request a quote', fields: [topic] }] }).forms).toEqual([
      {
        name: 'quote',
        title: 'Request a quote',
        fields: [topic],
        submitLabel: 'Send',
        busyLabel: 'Sending...',
        thanks: 'Thank you! We have received it.',
        limit: undefined,
        to: undefined,
        honeypot: true,
        page: '/quote',
        nav: 'Request a quote',
      },
    ]);
    expect(() =>
      defineForms({
        forms: [
          { name: 'quote', title: 'Request a quote', fields: [topic] },
          { name: 'quote', title: 'Another quote', fields: [topic] },
        ],
      }),
    ).toThrow(new Error('forms.config.ts: form "quote": a second form of that name'));
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

  const choices = [
    { value: 'oak', label: 'Oak wood' },
    { value: 'ash', label: 'Ash wood' },
  ];
  test.each([
    ['a choice reads its own label, not the first one', { name: 's', type: 'select', label: 'S', choices }, 'ash', 'Ash wood'],
    ['a value no longer among the choices reads as stored', { name: 's', type: 'select', label: 'S', choices }, 'walnut', 'walnut'],
    ['a select without choices reads the value as stored', { name: 's', type: 'select', label: 'S' }, 'oak', 'oak'],
    ['a ticked box stored as text is not ticked', { name: 'c', type: 'checkbox', label: 'C' }, 'yes', 'No'],
    ['an empty box value is empty, not No', { name: 'c', type: 'checkbox', label: 'C' }, '', ''],
    ['a value never stored is empty', { name: 't', type: 'text', label: 'T' }, undefined, ''],
    ['a boolean of a field no longer defined', undefined, false, 'No'],
  ] as const)('%s', (_, field, value, shown) => {
    expect(displayValue(field as FieldDefinition | undefined, value)).toBe(shown);
  });
});

// One function builds a form's thank-you path: the 303 of a post without JavaScript and the
// landing of a confirmed held message both come from it.
test.each([
  ['quote', '/thank-you/quote/'],
  ['contact', '/thank-you/contact/'],
  ['newsletter', '/thank-you/newsletter/'],
])('a form named %s thanks at %s', (name, path) => {
  expect(thanksPath(name)).toBe(path);
});

// One list of the text-like types: the check of a definition, the page's attributes and the
// default length all ask isTextLike.
test.each([
  ['text', true],
  ['email', true],
  ['tel', true],
  ['url', true],
  ['textarea', true],
  ['number', false],
  ['select', false],
  ['checkbox', false],
  ['date', false],
] as const)('a field of type %s is text-like: %s', (type, textLike) => {
  expect(isTextLike(type)).toBe(textLike);
});
