// @vitest-environment happy-dom
import { describe, expect, test } from 'vitest';
import { clearFieldErrors, enhanceForm, errorText, formWords, showFieldErrors } from '../../packages/site-forms/src/scripts/form-ui.ts';

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

describe('the messages shown at their fields', () => {
  test('a field named constructor or toString is marked only by a message of its own, not by the object’s prototype', () => {
    document.body.innerHTML = `<form>
      <input name="constructor"><p id="c-error" data-error-for="constructor"></p>
      <input name="toString"><p id="t-error" data-error-for="toString"></p>
      <input name="email"><p id="e-error" data-error-for="email"></p>
    </form><p id="form-error"></p>`;
    const form = document.querySelector('form')!;
    showFieldErrors(form, { email: ['Please enter a valid email address'] }, document.querySelector<HTMLElement>('#form-error')!, FAILED);
    expect(['#c-error', '#t-error', '#e-error'].map((id) => document.querySelector(id)!.textContent)).toEqual(['', '', 'Please enter a valid email address']);
    expect([...form.querySelectorAll('[aria-invalid]')].map((field) => field.getAttribute('name'))).toEqual(['email']);
  });
});

describe('the messages cleared before the next send', () => {
  test('a box the owner kept for a field the form no longer has is emptied, and the other fields are marked valid again', () => {
    document.body.innerHTML = `<form>
      <p id="gone-error" data-error-for="company">Old message</p>
      <input name="email" aria-invalid="true" aria-describedby="e-error"><p id="e-error" data-error-for="email">Please enter a valid email address</p>
    </form>`;
    const form = document.querySelector('form')!;
    clearFieldErrors(form);
    expect([...form.querySelectorAll('[data-error-for]')].map((box) => box.textContent)).toEqual(['', '']);
    expect(form.querySelector('[name="email"]')!.hasAttribute('aria-invalid')).toBe(false);
  });
});

describe('the button’s words', () => {
  test('its label as the visitor reads it, without the markup’s white space', () => {
    document.body.innerHTML = `<form data-busy="Sending..." data-thanks="Thanks." data-failed="Something went wrong."><button type="submit">
        Ask for a quote
      </button></form>`;
    expect(formWords(document.querySelector('form')!).idle).toBe('Ask for a quote');
  });
});

describe('a form whose markup breaks the contract', () => {
  const WORDS = 'data-busy="Sending..." data-thanks="Thanks." data-failed="Something went wrong."';

  test('a missing word is named with the form', () => {
    document.body.innerHTML = '<form id="quote" data-busy="Sending..." data-thanks="Thanks."><button type="submit">Ask</button></form>';
    expect(() => formWords(document.querySelector('form')!)).toThrow(new Error('The form #quote has no data-failed'));
  });

  test('without a submit button its idle label is empty', () => {
    document.body.innerHTML = `<form id="quote" ${WORDS}></form>`;
    expect(formWords(document.querySelector('form')!)).toEqual({ idle: '', busy: 'Sending...', thanks: 'Thanks.', failed: 'Something went wrong.' });
  });

  test('a missing region is named with the form', () => {
    document.body.innerHTML = `<form id="quote" ${WORDS}><button type="submit">Ask</button><p role="alert"></p></form>`;
    const form = document.querySelector('form')!;
    expect(() => enhanceForm(form, formWords(form), async () => {})).toThrow(new Error('The form #quote has no [role="status"]'));
  });
});
