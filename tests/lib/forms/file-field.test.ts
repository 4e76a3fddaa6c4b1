import { describe, expect, test } from 'vitest';
import { defineForm, parseForm, takesFiles } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import { defineForms } from '../../../packages/site-forms/src/lib/forms/define-forms.ts';

const form = (field: Record<string, unknown>) =>
  defineForm({ name: 'quote', title: 'Quote', fields: [{ name: 'cv', type: 'file', label: 'CV', ...field } as never] });

describe('the file field', () => {
  test('takes accept, maxSize and maxFiles; a form with one takes files, the contact form of the spec none', () => {
    const quote = form({ accept: ['image/png', 'image/*', '.pdf'], maxSize: 5_000_000, maxFiles: 3, required: true, hint: 'A PDF or a photo.' });
    expect(quote.fields[0]).toMatchObject({ accept: ['image/png', 'image/*', '.pdf'], maxSize: 5_000_000, maxFiles: 3 });
    expect(takesFiles(quote)).toBe(true);
    expect(takesFiles(defineForms({}).contact)).toBe(false);
    expect(takesFiles(defineForms({ contactFields: [{ name: 'cv', type: 'file', label: 'CV' }] }).contact)).toBe(true);
  });

  test.each([
    [{ accept: ['pdf'] }, 'form "quote": fields.0.accept.0 must be a MIME type such as image/png or image/*, or an extension such as .pdf'],
    [{ accept: [] }, 'form "quote": fields.0.accept is empty'],
    [{ maxSize: 0 }, 'form "quote": fields.0.maxSize must be at least 1'],
    [{ maxFiles: 21 }, 'form "quote": fields.0.maxFiles must be at most 20'],
  ])('a bad setting stops the build naming it: %o', (field, message) => {
    expect(() => form(field)).toThrow(message);
  });

  test('accept, maxSize and maxFiles belong to a file field only', () => {
    expect(() => defineForm({ name: 'quote', title: 'Quote', fields: [{ name: 'topic', type: 'text', label: 'Topic', maxSize: 10 }] })).toThrow(
      'form "quote": fields.0 (topic): accept, maxSize and maxFiles belong to a file field',
    );
  });

  test('the rules count the files the reader received: required, at most maxFiles; nothing is kept in the fields', () => {
    const quote = form({ required: true, maxFiles: 2 });
    const file = { name: 'cv.pdf', size: 10, type: 'application/pdf' };
    expect(parseForm(quote, { honeypot: '' })).toEqual({ ok: false, errors: { cv: ['CV is required'] } });
    expect(parseForm(quote, { cv: [file, file, file] })).toEqual({ ok: false, errors: { cv: ['CV: send at most 2 files'] } });
    expect(parseForm(quote, { cv: [file] })).toEqual({ ok: true, values: { cv: null, honeypot: '' } });
    expect(parseForm(form({}), { cv: '' })).toEqual({ ok: true, values: { cv: null, honeypot: '' } });
  });
});
