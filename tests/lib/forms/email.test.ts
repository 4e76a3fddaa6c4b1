import * as v from 'valibot';
import { describe, expect, test } from 'vitest';
import { EmailField, isEmailAddress } from '../../../packages/site-forms/src/lib/forms/email.ts';

const LONGEST = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`;

describe('an address a browser accepts is accepted (HTML standard, "valid e-mail address")', () => {
  test.each([
    ['a plain address', 'ada@example.com'],
    ['dots, a plus and a subdomain', 'first.last+tag@sub.example.co.uk'],
    ['an underscore and a hyphen', 'x_y-z@example.io'],
    ['an apostrophe', "o'brien@example.com"],
    ['a punycode domain (what Chrome sends for user@münchen.de)', 'user@xn--mnchen-3ya.de'],
    ['a punycode top-level domain', 'ada@example.xn--p1ai'],
    ['every other atext character but ? % &', "!#$'*+/=^_`{|}~-@example.com"],
    ['a digit-only label', 'ada@123.example.com'],
    ['a 63-character label', `ada@${'b'.repeat(63)}.com`],
    ['254 characters', LONGEST],
  ])('%s: %s', (_, email) => {
    expect(v.safeParse(EmailField, email)).toMatchObject({ success: true, output: email });
  });
});

describe('anything else is refused with the message of the spec', () => {
  test.each([
    ['empty', ''],
    ['missing', undefined],
    ['a mailto query hidden in the local part', 'owner?bcc=spy%40evil.test&subject=Invoice%20paid&body=x@example.com'],
    ['a question mark', 'ada?@example.com'],
    ['a percent sign', 'ada%40evil.test@example.com'],
    ['an ampersand', 'ada&bob@example.com'],
    ['no @', 'ada.example.com'],
    ['no domain', 'ada@'],
    ['no local part', '@example.com'],
    ['a one-label domain (a typo for a public address)', 'ada@example'],
    ['two @', 'a@b@example.com'],
    ['a space inside', 'ada lovelace@example.com'],
    ['CR LF and a header', 'ada@example.com\r\nBcc: x@evil.test'],
    ['a bare LF', 'ada@example.com\nx'],
    ['NUL', 'ada\u0000@example.com'],
    ['a tab inside', 'ada\t@example.com'],
    ['a comma', 'a@example.com,b@example.com'],
    ['a semicolon', 'a@example.com;b@example.com'],
    ['angle brackets', '<ada@example.com>'],
    ['a display name', 'Ada <ada@example.com>'],
    ['a quote', '"ada"@example.com'],
    ['parentheses (a comment)', 'ada(x)@example.com'],
    ['a colon', 'ada:x@example.com'],
    ['a backslash', 'ada\\x@example.com'],
    ['square brackets', 'ada@[127.0.0.1]'],
    ['a label starting with a hyphen', 'ada@-example.com'],
    ['a label ending with a hyphen', 'ada@example-.com'],
    ['an empty label', 'ada@example..com'],
    ['a trailing dot', 'ada@example.com.'],
    ['a 64-character label', `ada@${'b'.repeat(64)}.com`],
    ['an underscore in the domain', 'ada@ex_ample.com'],
    ['Unicode in the domain (the browser sends punycode)', 'user@münchen.de'],
    ['Unicode in the local part', 'zoë@example.com'],
    ['255 characters', `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`],
    ['a number', 42],
  ])('%s', (_, email) => {
    const result = v.safeParse(EmailField, email);
    expect(result.success).toBe(false);
    expect(result.issues?.map((issue) => issue.message)).toEqual(['Please enter a valid email address']);
  });

  test('trims surrounding white space', () => {
    expect(v.parse(EmailField, '  ada@example.com\n')).toBe('ada@example.com');
  });
});

describe("the owner's own addresses may be on a one-label domain", () => {
  test.each([
    ['owner@localhost', { dotless: true }, true],
    ['owner@localhost', {}, false],
    ['owner@example.com', { dotless: true }, true],
    ['owner@example.com', {}, true],
    ['owner@', { dotless: true }, false],
    ['owner@local host', { dotless: true }, false],
    ['owner@localhost\r\nBcc: x@y.z', { dotless: true }, false],
  ])('%j with %j: %s', (email, options, accepted) => {
    expect(isEmailAddress(email, options)).toBe(accepted);
  });

  test('the 254-character limit holds for them too', () => {
    expect(isEmailAddress(`${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`, { dotless: true })).toBe(false);
  });
});
