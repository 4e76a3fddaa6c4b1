import * as v from 'valibot';
import { describe, expect, test } from 'vitest';
import { EmailField } from '../../../src/lib/forms/email.ts';

describe('email address', () => {
  test.each([
    'ada@example.com',
    'first.last+tag@sub.example.co.uk',
    'x_y-z@example.io',
    `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`,
  ])('accepts %s', (email) => {
    expect(v.safeParse(EmailField, email).success).toBe(true);
  });

  test.each([
    ['empty', ''],
    ['missing', undefined],
    ['no @', 'ada.example.com'],
    ['no domain', 'ada@'],
    ['no top-level domain', 'ada@example'],
    ['two @', 'a@b@example.com'],
    ['a space inside', 'ada lovelace@example.com'],
    ['CR LF', 'ada@example.com\r\nBcc: x@evil.test'],
    ['a comma', 'a@example.com,b@example.com'],
    ['angle brackets', '<ada@example.com>'],
    ['a quote', '"ada"@example.com'],
    ['255 characters', `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`],
    ['a number', 42],
  ])('rejects %s', (_, email) => {
    expect(v.safeParse(EmailField, email).success).toBe(false);
  });

  test('trims surrounding white space', () => {
    expect(v.parse(EmailField, '  ada@example.com\n')).toBe('ada@example.com');
  });
});
