import { describe, expect, test } from 'vitest';
import { accepted, failure, invalid } from '../../../packages/site-forms/src/lib/http/outcome.ts';
import { defineForm } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import {
  applyViewStatus,
  draftOfView,
  FORM_PAGES,
  type FormView,
  ownerFormPages,
  renderPage,
  viewOfDraft,
} from '../../../packages/site-forms/src/lib/pipeline/form-view.ts';

describe('renderPage: what a person without JavaScript gets for each outcome', () => {
  test('accepted: 303 to the thank-you page, with a relative Location, never cached', () => {
    expect(renderPage(accepted(), FORM_PAGES.contact)).toEqual({
      kind: 'answer',
      status: 303,
      headers: { location: '/thank-you/contact/', 'cache-control': 'no-store' },
      body: null,
    });
    expect(renderPage(accepted(), FORM_PAGES.newsletter)).toMatchObject({ headers: { location: '/thank-you/newsletter/' } });
  });

  test('invalid fields: the contact page again with each message at its field and the values typed', () => {
    const errors = { name: ['Too short'], honeypot: ['Leave it empty'] };
    expect(renderPage(invalid(errors, { name: 'A', email: 'a@b', message: 'Hi <b>' }), FORM_PAGES.contact)).toEqual({
      kind: 'form-view',
      form: 'contact',
      status: 400,
      headers: { 'cache-control': 'no-store' },
      values: { name: 'A', email: 'a@b', message: 'Hi <b>' },
      errors,
      formError: undefined,
    });
  });

  test('a failure about a field: the message at that field', () => {
    expect(renderPage(failure(400, 'Please enter a valid email address', { field: 'email', values: { email: 'nope' } }), FORM_PAGES.newsletter)).toEqual({
      kind: 'form-view',
      form: 'newsletter',
      status: 400,
      headers: { 'cache-control': 'no-store' },
      values: { email: 'nope' },
      errors: { email: ['Please enter a valid email address'] },
      formError: undefined,
    });
  });

  test('a failure about the form: the message in the form’s alert, Retry-After kept, Allow and the rest left to scripts', () => {
    const busy = failure(503, 'Busy', { headers: { 'retry-after': '120', allow: 'POST', 'x-other': '1' }, values: { email: 'a@b.co' } });
    expect(renderPage(busy, FORM_PAGES.newsletter)).toEqual({
      kind: 'form-view',
      form: 'newsletter',
      status: 503,
      headers: { 'cache-control': 'no-store', 'retry-after': '120' },
      values: { email: 'a@b.co' },
      errors: {},
      formError: 'Busy',
    });
  });

  test('a refusal before the form was read (429): the form again, empty, with the message', () => {
    expect(renderPage(failure(429, 'Too many attempts.'), FORM_PAGES.contact)).toMatchObject({
      status: 429,
      values: {},
      errors: {},
      formError: 'Too many attempts.',
    });
  });

  test('data on a form (never expected) is not shown as a success', () => {
    expect(renderPage({ kind: 'data', status: 200, body: { success: true } }, FORM_PAGES.contact)).toMatchObject({
      status: 500,
      formError: 'Internal server error',
    });
  });

  test('its kind tells a page to render from an answer to send', () => {
    expect(renderPage(accepted(), FORM_PAGES.contact).kind).toBe('answer');
    expect(renderPage(failure(500, 'x'), FORM_PAGES.contact).kind).toBe('form-view');
  });
});

describe('applyViewStatus', () => {
  test('gives the page the view’s status and headers, with an empty status text for Node to fill', () => {
    const response = { status: 200, statusText: 'OK', headers: new Headers() };
    applyViewStatus(response, {
      kind: 'form-view',
      form: 'newsletter',
      status: 503,
      headers: { 'retry-after': '120', 'cache-control': 'no-store' },
      values: {},
      errors: {},
      formError: 'Busy',
    });
    expect(response).toMatchObject({ status: 503, statusText: '' });
    expect(Object.fromEntries(response.headers)).toEqual({ 'retry-after': '120', 'cache-control': 'no-store' });
  });
});

describe('a view as a draft and back (decision 0133)', () => {
  const T0 = new Date('2026-11-25T10:00:00.000Z');
  const LIMITED: FormView = {
    kind: 'form-view',
    form: 'contact',
    status: 429,
    headers: { 'cache-control': 'no-store', vary: 'Origin', 'retry-after': '600' },
    values: { name: 'Ada Lovelace', message: 'Ünïcode and <b>markup</b>,\nkept as typed.' },
    errors: {},
    formError: 'Too many attempts. Please try again in 10 minutes.',
  };

  test('the same page comes back, without the headers a browser need not get again', () => {
    const refused: FormView = {
      ...LIMITED,
      status: 400,
      headers: { 'cache-control': 'no-store', vary: 'Origin' },
      errors: { name: ['Too short'] },
      formError: undefined,
    };
    expect(viewOfDraft({ content: draftOfView(refused), createdAt: T0 }, T0)).toEqual({
      kind: 'form-view',
      form: 'contact',
      status: 400,
      headers: { 'cache-control': 'no-store' },
      values: { name: 'Ada Lovelace', message: 'Ünïcode and <b>markup</b>,\nkept as typed.' },
      errors: { name: ['Too short'] },
    });
  });

  test.each([
    [0, '600'],
    [1, '599'],
    [240, '360'],
    [660, '0'],
  ])('Retry-After counts down from the refusal: %i s later it says %s', (seconds, left) => {
    const view = viewOfDraft({ content: draftOfView(LIMITED), createdAt: T0 }, new Date(T0.getTime() + seconds * 1000));
    expect(view.headers).toEqual({ 'cache-control': 'no-store', 'retry-after': left });
    expect(view.formError).toBe('Too many attempts. Please try again in 10 minutes.');
  });

  test('the confirmation of a held message keeps its token', () => {
    const asked: FormView = { ...LIMITED, status: 200, headers: { 'cache-control': 'no-store' }, formError: undefined, confirm: { token: '1.2.abc' } };
    expect(viewOfDraft({ content: draftOfView(asked), createdAt: T0 }, T0)).toMatchObject({ status: 200, confirm: { token: '1.2.abc' } });
  });
});

describe("an owner's form's pages", () => {
  test('its thank-you page under its name, its fields in form order, and the page that places it', () => {
    const quote = defineForm({
      name: 'quote',
      title: 'Request a quote',
      page: '/services/quote',
      fields: [
        { name: 'email', type: 'email', label: 'Email address', required: true },
        { name: 'topic', type: 'text', label: 'Topic' },
      ],
    });
    expect(ownerFormPages(quote)).toEqual({ form: 'quote', thanks: '/thank-you/quote/', fields: ['email', 'topic'], page: '/services/quote' });
  });
});

describe('renderPage and draftOfView at their edges', () => {
  const pages = { form: 'quote', thanks: '/thank-you/quote/', fields: ['name'], page: '/quote' };

  test('a download (no form’s handler answers one) is no success for a person: the page with the internal error', () => {
    const stream = (async function* () {})();
    expect(renderPage({ kind: 'download', headers: { 'content-type': 'text/plain' }, stream }, pages)).toEqual({
      kind: 'form-view',
      form: 'quote',
      status: 500,
      headers: { 'cache-control': 'no-store' },
      values: {},
      errors: {},
      formError: 'Internal server error',
    });
  });

  test('a refusal without Retry-After gives the page no such header, not even an empty one', () => {
    const view = renderPage(failure(403, 'Forbidden'), pages) as FormView;
    expect(Object.keys(view.headers)).toEqual(['cache-control']);
  });

  test.each([
    ['no Retry-After', {}],
    ['a Retry-After with text after its digits', { 'retry-after': '5x' }],
    ['a Retry-After with text before its digits', { 'retry-after': 'x5' }],
    ['a Retry-After as a date', { 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' }],
  ])('%s: the draft keeps no seconds', (_, headers) => {
    const view: FormView = {
      kind: 'form-view',
      form: 'quote',
      status: 403,
      headers: { 'cache-control': 'no-store', ...headers },
      values: {},
      errors: {},
      formError: 'No',
    };
    expect(draftOfView(view)).toBe('{"form":"quote","status":403,"values":{},"errors":{},"formError":"No"}');
  });
});
