import { describe, expect, test } from 'vitest';
import { errorText } from '../../src/scripts/form-ui.ts';

// The form's own words for a failure, as its markup's data-failed gives them.
const FAILED = 'Something went wrong. Please try again.';

describe('the error a visitor reads from an answer', () => {
  test.each([
    ["the answer's own error", { success: false, error: 'Please enter a valid email address' }, 'Please enter a valid email address'],
    ['an empty error', { success: false, error: '' }, 'Something went wrong. Please try again.'],
    ['an error that is not text', { success: false, error: 42 }, 'Something went wrong. Please try again.'],
    ['an error that is an object', { success: false, error: { message: 'x' } }, 'Something went wrong. Please try again.'],
    ['no error at all', { success: false }, 'Something went wrong. Please try again.'],
  ])('%s', (_, answer, text) => {
    expect(errorText(answer, FAILED)).toBe(text);
  });
});
