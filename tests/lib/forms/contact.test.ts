import { describe, expect, test } from 'vitest';
import { CONTACT_MESSAGES } from '../../../packages/site-forms/src/lib/forms/contact.ts';
import { parseForm } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import { INVALID_EMAIL } from '../../../packages/site-forms/src/lib/forms/email.ts';
import { contactForm } from '../../../packages/site-forms/src/lib/forms/registry.ts';

/** A contact post checked as the handler checks it (src/lib/contact/contact-handlers.ts). */
const checkContact = (fields: Record<string, unknown>) => parseForm(contactForm, fields);

const valid = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello there, this is a message.', honeypot: '' };
const chars = (n: number, c = 'a') => c.repeat(n);

describe('contact name', () => {
  test.each([
    ['1 character', chars(1), false],
    ['2 characters', chars(2), true],
    ['100 characters', chars(100), true],
    ['101 characters', chars(101), false],
    ['empty', '', false],
    ['only spaces', '     ', false],
    ['2 characters inside spaces', '  ab  ', true],
    ['2 emoji (4 UTF-16 units)', '😀😀', true],
    ['100 emoji (200 UTF-16 units)', chars(100, '😀'), true],
    ['101 emoji', chars(101, '😀'), false],
    ['a decomposed é plus one letter (NFC makes it 2)', 'e\u0301x', true],
    ['two zero-width spaces (nothing to see)', '\u200b\u200b', false],
    ['one letter and a zero-width joiner', 'A\u200d', false],
    ['one letter and a soft hyphen', 'A\u00ad', false],
    ['one letter and a combining mark that does not compose', 'q\u0303', false],
    ['two letters between zero-width spaces', '\u200bAb\u200b', true],
    ['two CJK characters', '李白', true],
  ])('%s is %s', (_, name, accepted) => {
    const result = checkContact({ ...valid, name });
    expect(result.ok).toBe(accepted);
    if (!result.ok) expect(result.errors).toEqual({ name: [CONTACT_MESSAGES.nameLength] });
  });

  test.each([
    ['CR LF', 'Ada\r\nBcc: x@evil.test'],
    ['NUL', 'Ada\u0000'],
    ['a C1 control', 'Ada\u0085x'],
    ['a line separator', 'Ada\u2028x'],
    ['a bidi override', 'Ada\u202ex'],
    ['a bidi isolate', 'Ada\u2066x'],
  ])('rejects a name with %s', (_, name) => {
    expect(checkContact({ ...valid, name })).toEqual({ ok: false, errors: { name: [CONTACT_MESSAGES.nameCharacters] } });
  });

  // Characters that show as nothing are taken out before the name is counted (decision 0150):
  // "Ann" with hidden text behind it is stored as the "Ann" every reader sees.
  test.each([
    ['tag characters (hidden ASCII)', 'Ann\u{E0049}\u{E0067}\u{E006E}\u{E006F}\u{E0072}\u{E0065}\u{E007F}', 'Ann'],
    ['a zero-width joiner', 'An\u200dn', 'Ann'],
    ['a zero-width non-joiner', 'An\u200cn', 'Ann'],
    ['a byte order mark in front', '\ufeffAnn', 'Ann'],
    ['a BOM and a space in front', '\ufeff Ann', 'Ann'],
    ['zero-width spaces around', '\u200bAb\u200b', 'Ab'],
  ])('stores a name with %s as the name a reader sees', (_, name, stored) => {
    expect(checkContact({ ...valid, name })).toEqual({ ok: true, values: { ...valid, name: stored } });
  });

  test.each([
    ['one letter among tag characters', 'A\u{E0041}\u{E0042}'],
    ['one letter and a BOM', 'A\ufeff'],
  ])('refuses %s with the spec’s length message: what is left is one character', (_, name) => {
    expect(checkContact({ ...valid, name })).toEqual({ ok: false, errors: { name: ['Name must be between 2 and 100 characters'] } });
  });
});

describe('contact message', () => {
  test.each([
    [9, false, CONTACT_MESSAGES.messageTooShort],
    [10, true, undefined],
    [5000, true, undefined],
    [5001, false, CONTACT_MESSAGES.messageTooLong],
  ])('%i characters: accepted %s', (length, accepted, message) => {
    const result = checkContact({ ...valid, message: chars(length) });
    expect(result).toEqual(accepted ? expect.objectContaining({ ok: true }) : { ok: false, errors: { message: [message] } });
  });

  /** `count` characters in lines of 100: 99 letters and a line break written as `lineBreak`. */
  const lines = (count: number, lineBreak: string) => `${'a'.repeat(99)}${lineBreak}`.repeat(49) + 'a'.repeat(count - 4900);
  test.each([
    ['5,000 characters with 49 CR LF line breaks (a full textarea, as the browser sends it)', true, lines(5000, '\r\n')],
    ['5,001 characters with 49 CR LF line breaks', false, lines(5001, '\r\n')],
    ['5,000 characters with 49 LF line breaks', true, lines(5000, '\n')],
    ['5,001 characters with 49 LF line breaks', false, lines(5001, '\n')],
    ['5,000 characters, all line breaks between two letters', true, `a${'\r\n'.repeat(4998)}b`],
    ['5,001 characters, all line breaks between two letters', false, `a${'\r\n'.repeat(4999)}b`],
  ])('a message of %s: accepted %s', (_, accepted, message) => {
    const result = checkContact({ ...valid, message });
    expect(result).toEqual(
      accepted ? { ok: true, values: expect.objectContaining({ message }) } : { ok: false, errors: { message: ['Message must be at most 5000 characters'] } },
    );
  });

  test.each([
    ['abcd\r\nefgh', false],
    ['abcd\r\nefghi', true],
  ])('a CR LF counts as one character at the lower limit too: %j accepted %s', (message, accepted) => {
    expect(checkContact({ ...valid, message })).toEqual(
      accepted ? { ok: true, values: expect.objectContaining({ message }) } : { ok: false, errors: { message: ['Message must be at least 10 characters'] } },
    );
  });

  test('rejects a 9-character message with the message of the spec', () => {
    expect(checkContact({ ...valid, message: '123456789' })).toEqual({
      ok: false,
      errors: { message: ['Message must be at least 10 characters'] },
    });
  });

  test('counts 10 emoji as 10 characters', () => {
    expect(checkContact({ ...valid, message: chars(10, '😀') }).ok).toBe(true);
  });

  test('does not count surrounding white space', () => {
    expect(checkContact({ ...valid, message: `   ${chars(9)}\n\n  ` }).ok).toBe(false);
  });

  test('keeps line breaks inside a message', () => {
    const result = checkContact({ ...valid, message: 'Line one\r\nLine two' });
    expect(result).toEqual({ ok: true, values: expect.objectContaining({ message: 'Line one\r\nLine two' }) });
  });

  test('rejects NUL inside a message', () => {
    expect(checkContact({ ...valid, message: 'Hello there\u0000 friend' })).toEqual({
      ok: false,
      errors: { message: [CONTACT_MESSAGES.messageCharacters] },
    });
  });
});

describe('contact honeypot', () => {
  test.each([
    ['empty', { honeypot: '' }, true],
    ['absent', { honeypot: undefined }, true],
    ['filled', { honeypot: 'http://spam.example' }, false],
    ['a single space', { honeypot: ' ' }, false],
  ])('%s: accepted %s', (_, override, accepted) => {
    const fields: Record<string, unknown> = { ...valid, ...override };
    if (override.honeypot === undefined) delete fields.honeypot;
    const result = checkContact(fields);
    expect(result.ok).toBe(accepted);
    if (!result.ok) expect(result.errors).toEqual({ honeypot: ['This field must be left empty'] });
  });
});

describe('contact form as a whole', () => {
  test('reports every failing field at once and leaves good fields out', () => {
    const result = checkContact({ name: 'A', email: 'nope', message: 'short', honeypot: 'x' });
    expect(result).toEqual({
      ok: false,
      errors: {
        name: [CONTACT_MESSAGES.nameLength],
        email: [INVALID_EMAIL],
        message: [CONTACT_MESSAGES.messageTooShort],
        honeypot: [CONTACT_MESSAGES.honeypot],
      },
    });
  });

  test('reports one message per field, the first problem found', () => {
    expect(checkContact({ ...valid, name: '\u0000', message: '\u0000 short' })).toEqual({
      ok: false,
      errors: {
        name: ['Name must not contain line breaks or control characters'],
        message: ['Message must not contain control characters'],
      },
    });
  });

  test('treats missing fields as empty', () => {
    expect(checkContact({})).toEqual({
      ok: false,
      errors: { name: [CONTACT_MESSAGES.nameLength], email: [INVALID_EMAIL], message: [CONTACT_MESSAGES.messageTooShort] },
    });
  });

  test('refuses a file where text is expected', () => {
    const file = new File(['x'], 'x.txt');
    const result = checkContact({ ...valid, name: file });
    expect(result).toEqual({ ok: false, errors: { name: [CONTACT_MESSAGES.nameLength] } });
  });

  test('answers the cleaned input', () => {
    expect(checkContact({ ...valid, name: '  Ade\u0301le  ', email: ' ada@example.com ' })).toEqual({
      ok: true,
      values: { ...valid, name: 'Ad\u00e9le', email: 'ada@example.com' },
    });
  });
});
