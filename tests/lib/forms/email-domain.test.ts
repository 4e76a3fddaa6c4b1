import { describe, expect, test } from 'vitest';
import { isEmailAddress } from '../../../packages/site-forms/src/lib/forms/email.ts';

describe('the dot in the domain', () => {
  test.each([
    ["a visitor's one-label domain is a typo", 'ada@gmail', {}, false],
    ['a dot before the @ does not count for the domain', 'ada.lovelace@gmail', {}, false],
    ['a dot just before the @ does not count for the domain', 'ada.@gmail', {}, false],
    ['a two-label domain', 'ada.lovelace@gmail.com', {}, true],
    ["the owner's own one-label domain", 'owner@localhost', { dotless: true }, true],
    ['dotless still needs the pattern', 'owner@@localhost', { dotless: true }, false],
    ['a label cannot end with a hyphen', 'ada@example-.com', {}, false],
    ['a label cannot start with a hyphen', 'ada@-example.com', {}, false],
    ['a label of 63 characters', `ada@${'a'.repeat(63)}.com`, {}, true],
    ['a label of 64 characters', `ada@${'a'.repeat(64)}.com`, {}, false],
  ])('%s: %s', (_, address, options, valid) => {
    expect(isEmailAddress(address, options)).toBe(valid);
  });
});
