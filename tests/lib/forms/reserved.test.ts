import { expect, test } from 'vitest';
import { defineForm } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import { EXPORT_COLUMNS, RESERVED_FIELD_NAMES } from '../../../packages/site-forms/src/lib/forms/reserved.ts';

const withField = (name: string) => () => defineForm({ name: 'quote', title: 'T', fields: [{ name, type: 'text', label: 'A' }] });

// One list: the names a field may not take come from the export's columns and the spam filter's
// own fields, so a column or a spam field added later is refused as a field's name without a second edit.
// `_next` (decision 0167) is kept off by a field name's shape too; it is listed so that the list stays the one place.
test('every export column but the three the contact form fills is reserved, and the spam fields and `_next` are', () => {
  const free = EXPORT_COLUMNS.filter((column) => !RESERVED_FIELD_NAMES.includes(column));
  expect(free).toEqual(['name', 'email', 'message']);
  expect(RESERVED_FIELD_NAMES).toEqual(expect.arrayContaining(['altcha', 'cf-turnstile-response', 'honeypot', 'token', 'form', 'fields', '_next']));
});

test.each([
  'id',
  'createdAt',
  'status',
  'attempts',
  'nextAttemptAt',
  'lastError',
  'sentAt',
  'spamReasons',
  'form',
  'fields',
  'honeypot',
  'altcha',
  'cf-turnstile-response',
  'token',
])('a field named %s is refused as reserved', (name) => {
  expect(withField(name)).toThrow(`the name ${name} is reserved`);
});

test.each(['name', 'email', 'message'])('a field named %s is taken: its value fills the column of that name', (name) => {
  expect(withField(name)).not.toThrow();
});
