import { describe, expect, test } from 'vitest';
import { defineForm, type FieldDefinition, messagesOf, parseForm } from '../../../packages/site-forms/src/lib/forms/definition.ts';

// Each case defines its form and parses in the test itself: parseForm keeps a form's schema once
// built, so a form shared between tests would be checked by whichever test ran first.
const answer = (field: FieldDefinition, value?: unknown) => {
  const form = defineForm({ name: 'quote', title: 'Request a quote', fields: [field], honeypot: false });
  const result = parseForm(form, value === undefined ? {} : { [field.name]: value });
  return result.ok ? { value: result.values[field.name] } : { refused: result.errors[field.name] };
};

describe('a text field', () => {
  const topic = { name: 'topic', type: 'text', label: 'Topic' } as const;

  test.each([
    ['a required one left empty reads "required"', { ...topic, required: true }, '', { refused: ['Topic is required'] }],
    ['a required one takes a single character', { ...topic, required: true }, 'a', { value: 'a' }],
    ['a required one of minLength 1 left empty still reads "required"', { ...topic, required: true, minLength: 1 }, '', { refused: ['Topic is required'] }],
    [
      'a required one of minLength 2 left empty reads "too short"',
      { ...topic, required: true, minLength: 2 },
      '',
      { refused: ['Topic must be at least 2 characters'] },
    ],
    ['one character under minLength', { ...topic, required: true, minLength: 3, maxLength: 5 }, 'ab', { refused: ['Topic must be at least 3 characters'] }],
    ['exactly minLength', { ...topic, required: true, minLength: 3, maxLength: 5 }, 'abc', { value: 'abc' }],
    ['exactly maxLength', { ...topic, required: true, minLength: 3, maxLength: 5 }, 'abcde', { value: 'abcde' }],
    ['one character over maxLength', { ...topic, required: true, minLength: 3, maxLength: 5 }, 'abcdef', { refused: ['Topic must be at most 5 characters'] }],
    ['an optional one of minLength 3 may be left empty', { ...topic, minLength: 3 }, '', { value: '' }],
    ['an optional one of minLength 3 may be missing', { ...topic, minLength: 3 }, undefined, { value: '' }],
    [
      'an optional one of minLength 3 holds its minimum once typed into',
      { ...topic, minLength: 3 },
      'ab',
      { refused: ['Topic must be at least 3 characters'] },
    ],
    ['surrounding spaces are trimmed before counting', { ...topic, maxLength: 3 }, '  abc  ', { value: 'abc' }],
    ['200 characters when no maxLength is set', topic, 'x'.repeat(200), { value: 'x'.repeat(200) }],
    ['201 characters when no maxLength is set', topic, 'x'.repeat(201), { refused: ['Topic must be at most 200 characters'] }],
    ['a line break', topic, 'oak\ntable', { refused: ['Topic must not contain line breaks or control characters'] }],
    [
      'two zero-width spaces are not two characters',
      { ...topic, required: true, minLength: 2 },
      '\u200b\u200b',
      { refused: ['Topic must be at least 2 characters'] },
    ],
  ] as const)('%s', (_, field, value, expected) => {
    expect(answer(field as FieldDefinition, value)).toEqual(expected);
  });
});

describe('a phone number (tel)', () => {
  const phone = { name: 'phone', type: 'tel', label: 'Phone' } as const;

  test.each([
    ['five digits, the fewest', '12345', { value: '12345' }],
    ['four digits', '1234', { refused: ['Phone must be a phone number'] }],
    ['four digits among brackets, dots and dashes', '(1) 2-3.4', { refused: ['Phone must be a phone number'] }],
    ['an international number as people write it', '+44 (0)20 7946 0958', { value: '+44 (0)20 7946 0958' }],
    ['words', 'call me', { refused: ['Phone must be a phone number'] }],
    ['a + inside', '020+7946 0958', { refused: ['Phone must be a phone number'] }],
    ['41 characters (40 by default)', `+${'1'.repeat(40)}`, { refused: ['Phone must be at most 40 characters'] }],
    ['left empty, when optional', '', { value: '' }],
  ] as const)('%s: %j', (_, value, expected) => {
    expect(answer(phone, value)).toEqual(expected);
  });
});

describe('a web address (url)', () => {
  const site = { name: 'site', type: 'url', label: 'Website', required: true } as const;
  const notWeb = { refused: ['Website must be a web address starting with https:// or http://'] };

  test.each([
    ['https', 'https://example.org/plans', { value: 'https://example.org/plans' }],
    ['http', 'http://example.org', { value: 'http://example.org' }],
    ['the scheme in capitals', 'HTTPS://EXAMPLE.ORG/', { value: 'HTTPS://EXAMPLE.ORG/' }],
    ['another scheme', 'ftp://example.org/file', notWeb],
    ['another scheme with https:// further on', 'ftp://example.org/?next=https://example.org', notWeb],
    ['javascript', 'javascript:alert(1)', notWeb],
    ['no scheme', 'www.example.org', notWeb],
    ['a host without a dot', 'http://localhost:4321/', notWeb],
    ['no host at all', 'http://', notWeb],
    ['a line break', 'https://example.org/\nx', { refused: ['Website must not contain line breaks or control characters'] }],
    ['left empty, when required', '', { refused: ['Website is required'] }],
  ] as const)('%s: %j', (_, value, expected) => {
    expect(answer(site, value)).toEqual(expected);
  });
});

describe('a textarea', () => {
  const details = { name: 'details', type: 'textarea', label: 'Details' } as const;

  test.each([
    ['a required one left empty reads "required"', { ...details, required: true }, '', { refused: ['Details is required'] }],
    ['a required one of minLength 1 left empty reads "required"', { ...details, required: true, minLength: 1 }, '', { refused: ['Details is required'] }],
    [
      'a required one of minLength 5 left empty reads "too short"',
      { ...details, required: true, minLength: 5 },
      '',
      { refused: ['Details must be at least 5 characters'] },
    ],
    [
      'one character under minLength',
      { ...details, required: true, minLength: 5, maxLength: 9 },
      'Oak.',
      { refused: ['Details must be at least 5 characters'] },
    ],
    ['exactly minLength', { ...details, required: true, minLength: 5, maxLength: 9 }, 'Oak 2', { value: 'Oak 2' }],
    ['exactly maxLength, a CR LF counting as one', { ...details, required: true, minLength: 5, maxLength: 9 }, 'Oak\r\n2 m.', { value: 'Oak\r\n2 m.' }],
    [
      'one character over maxLength',
      { ...details, required: true, minLength: 5, maxLength: 9 },
      'Oak, 2 m.!',
      { refused: ['Details must be at most 9 characters'] },
    ],
    ['5000 characters when no maxLength is set', details, 'x'.repeat(5000), { value: 'x'.repeat(5000) }],
    ['5001 characters when no maxLength is set', details, 'x'.repeat(5001), { refused: ['Details must be at most 5000 characters'] }],
    ['a NUL', details, 'oak\u0000', { refused: ['Details must not contain control characters'] }],
  ] as const)('%s', (_, field, value, expected) => {
    expect(answer(field as FieldDefinition, value)).toEqual(expected);
  });
});

describe('an email address', () => {
  const reply = { name: 'reply', type: 'email', label: 'Reply to' } as const;

  test.each([
    ['an address of exactly maxLength', { ...reply, maxLength: 20 }, 'abcdefgh@example.com', { value: 'abcdefgh@example.com' }],
    ['an address one over maxLength', { ...reply, maxLength: 20 }, 'abcdefghi@example.com', { refused: ['Reply to must be at most 20 characters'] }],
    ['a required one left empty reads as a malformed address', { ...reply, required: true }, '', { refused: ['Please enter a valid email address'] }],
    ['a one-label domain', reply, 'ada@gmail', { refused: ['Please enter a valid email address'] }],
    ['an optional one left empty', reply, '', { value: '' }],
  ] as const)('%s', (_, field, value, expected) => {
    expect(answer(field as FieldDefinition, value)).toEqual(expected);
  });
});

describe('a select', () => {
  const choices = [
    { value: 'table', label: 'A table' },
    { value: 'chair', label: 'A chair' },
  ];
  const topic = { name: 'topic', type: 'select', label: 'Topic', choices } as const;

  test.each([
    ['its first choice', { ...topic, required: true }, 'table', { value: 'table' }],
    ['its second choice', { ...topic, required: true }, 'chair', { value: 'chair' }],
    ['a value that is not a choice', { ...topic, required: true }, 'stool', { refused: ['Please choose one of the options for Topic'] }],
    ['a label instead of a value', { ...topic, required: true }, 'A chair', { refused: ['Please choose one of the options for Topic'] }],
    ['nothing, when required', { ...topic, required: true }, '', { refused: ['Topic is required'] }],
    ['nothing, when optional', topic, '', { value: '' }],
  ] as const)('%s', (_, field, value, expected) => {
    expect(answer(field as FieldDefinition, value)).toEqual(expected);
  });
});

describe('a date', () => {
  const by = { name: 'by', type: 'date', label: 'Needed by', required: true, min: '2026-01-01', max: '2026-12-31' } as const;

  test.each([
    ['its first day', by, '2026-01-01', { value: '2026-01-01' }],
    ['its last day', by, '2026-12-31', { value: '2026-12-31' }],
    ['the day before min', by, '2025-12-31', { refused: ['Needed by must be at least 2026-01-01'] }],
    ['the day after max', by, '2027-01-01', { refused: ['Needed by must be at most 2026-12-31'] }],
    ['nothing, when required', by, '', { refused: ['Needed by is required'] }],
    ['a day that does not exist', by, '2026-02-30', { refused: ['Needed by must be a date'] }],
    ['a date not written as YYYY-MM-DD', by, '2026-3-1', { refused: ['Needed by must be a date'] }],
    ['an expanded year that JavaScript reads as a date', by, '+010000-01', { refused: ['Needed by must be a date'] }],
    ['any real day, without bounds', { name: 'by', type: 'date', label: 'Needed by' }, '1999-06-15', { value: '1999-06-15' }],
    ['after a min, without a max', { name: 'by', type: 'date', label: 'Needed by', min: '2026-01-01' }, '2099-06-15', { value: '2099-06-15' }],
    ['before a max, without a min', { name: 'by', type: 'date', label: 'Needed by', max: '2026-12-31' }, '1999-06-15', { value: '1999-06-15' }],
    ['nothing, when optional', { name: 'by', type: 'date', label: 'Needed by' }, '', { value: '' }],
  ] as const)('%s: %j', (_, field, value, expected) => {
    expect(answer(field as FieldDefinition, value)).toEqual(expected);
  });
});

describe('a number', () => {
  const budget = { name: 'budget', type: 'number', label: 'Budget', min: 100, max: 50000 } as const;

  test.each([
    ['its min', budget, '100', { value: 100 }],
    ['its max', budget, '50000', { value: 50000 }],
    ['a cent under min', budget, '99.99', { refused: ['Budget must be at least 100'] }],
    ['a cent over max', budget, '50000.01', { refused: ['Budget must be at most 50000'] }],
    ['not a number', budget, 'a lot', { refused: ['Budget must be a number'] }],
    ['an exponent', budget, '1e3', { refused: ['Budget must be a number'] }],
    ['nothing, when optional, is null', budget, '', { value: null }],
    ['nothing, when required', { ...budget, required: true }, '', { refused: ['Budget is required'] }],
    ['a negative one within negative bounds', { name: 'depth', type: 'number', label: 'Depth', min: -10, max: -1 }, '-10', { value: -10 }],
    ['any number, without bounds', { name: 'n', type: 'number', label: 'N' }, '-123456.5', { value: -123456.5 }],
  ] as const)('%s: %j', (_, field, value, expected) => {
    expect(answer(field as FieldDefinition, value)).toEqual(expected);
  });
});

describe('a checkbox', () => {
  const consent = { name: 'consent', type: 'checkbox', label: 'I agree' } as const;

  test.each([
    ['ticked, when required', { ...consent, required: true }, 'yes', { value: true }],
    ['unticked, when required, asks for the tick', { ...consent, required: true }, undefined, { refused: ['Please tick “I agree” to continue'] }],
    ['unticked, when optional', consent, undefined, { value: false }],
    // Only the box's own value ("yes") ticks it: a script's "no" or "0" is an unticked box.
    ['"no", when optional', consent, 'no', { value: false }],
    ['"0", when optional', consent, '0', { value: false }],
    ['"on" (a box without a value attribute), when optional', consent, 'on', { value: false }],
    ['"no", when required, asks for the tick', { ...consent, required: true }, 'no', { refused: ['Please tick “I agree” to continue'] }],
    ['"0", when required, asks for the tick', { ...consent, required: true }, '0', { refused: ['Please tick “I agree” to continue'] }],
  ] as const)('%s', (_, field, value, expected) => {
    expect(answer(field as FieldDefinition, value)).toEqual(expected);
  });
});

describe('the honeypot', () => {
  test('a form without one neither checks nor keeps a field of that name', () => {
    const form = defineForm({ name: 'quote', title: 'Request a quote', fields: [{ name: 'topic', type: 'text', label: 'Topic' }], honeypot: false });
    expect(parseForm(form, { topic: 'Oak', honeypot: 'bot' })).toEqual({ ok: true, values: { topic: 'Oak' } });
  });
});

describe("each rule's default message, built from the label", () => {
  test.each([
    ['text', 'Topic is not valid'],
    ['textarea', 'Topic is not valid'],
    ['email', 'Please enter a valid email address'],
    ['number', 'Topic must be a number'],
    ['date', 'Topic must be a date'],
    ['url', 'Topic must be a web address starting with https:// or http://'],
    ['tel', 'Topic must be a phone number'],
    ['checkbox', 'Topic is not valid'],
  ] as const)('an invalid %s reads %j', (type, invalid) => {
    expect(messagesOf({ name: 'topic', type, label: 'Topic' }).invalid).toBe(invalid);
  });

  test('an invalid select reads "choose one of the options"', () => {
    expect(messagesOf({ name: 'topic', type: 'select', label: 'Topic', choices: [{ value: 'a', label: 'A' }] }).invalid).toBe(
      'Please choose one of the options for Topic',
    );
  });

  test('every message of a text field', () => {
    expect(messagesOf({ name: 'topic', type: 'text', label: 'Topic', minLength: 2, maxLength: 80 })).toEqual({
      required: 'Topic is required',
      tooShort: 'Topic must be at least 2 characters',
      tooLong: 'Topic must be at most 80 characters',
      tooSmall: 'Topic must be at least ',
      tooLarge: 'Topic must be at most ',
      invalid: 'Topic is not valid',
      characters: 'Topic must not contain line breaks or control characters',
    });
  });

  test('a missing checkbox asks for the tick, a missing email address reads as a malformed one', () => {
    expect(messagesOf({ name: 'consent', type: 'checkbox', label: 'I agree' }).required).toBe('Please tick “I agree” to continue');
    expect(messagesOf({ name: 'reply', type: 'email', label: 'Reply to' }).required).toBe('Please enter a valid email address');
    expect(messagesOf({ name: 'reply', type: 'email', label: 'Reply to', messages: { invalid: 'Which address?' } }).required).toBe('Which address?');
  });
});
