import { describe, expect, test } from 'vitest';
import { readConfirmation, signConfirmation } from '../../../packages/site-forms/src/lib/spam/confirmation.ts';

const SECRET = 'confirmation-test-secret';
const NOW = Date.parse('2026-11-24T12:00:00.000Z');

describe('the token of a confirmation page', () => {
  test('names its message, is good for a day, and reads back to the same id', () => {
    const token = signConfirmation(42, SECRET, NOW);
    expect(token).toMatch(/^42\.1795608000\.[\w-]{43}$/);
    expect(readConfirmation(token, SECRET, NOW)).toBe(42);
    expect(readConfirmation(token, SECRET, NOW + 86_399_000)).toBe(42);
  });

  test.each([
    ['expired', (t: string) => t, SECRET, NOW + 86_400_000],
    ['signed with another secret', (t: string) => t, 'another-secret', NOW],
    ['for another message', (t: string) => t.replace(/^42\./, '43.'), SECRET, NOW],
    ['with a later expiry', (t: string) => t.replace('.1795608000.', '.1795608099.'), SECRET, NOW],
    ['cut short', (t: string) => t.slice(0, -1), SECRET, NOW],
    ['with a zero id', (t: string) => t.replace(/^42\./, '0.'), SECRET, NOW],
    ['empty', () => '', SECRET, NOW],
  ])('is refused when %s', (_, change, secret, now) => {
    expect(readConfirmation(change(signConfirmation(42, SECRET, NOW)), secret, now)).toBeUndefined();
  });

  test('anything but a string is refused', () => {
    expect(readConfirmation(undefined, SECRET, NOW)).toBeUndefined();
    expect(readConfirmation(new Blob(['42']), SECRET, NOW)).toBeUndefined();
  });
});
