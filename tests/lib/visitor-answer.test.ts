import { describe, expect, test, vi } from 'vitest';
import { failure, invalid, json, success } from '../../src/lib/http.ts';
import { answerVisitor, applyRetryStatus, readVisitorOutcome, seeOther, VISITOR_PAGES, type VisitorContext } from '../../src/lib/visitor-answer.ts';

function post(fields: Record<string, string>): Request {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  return new Request('http://site.test/api/contact', { method: 'POST', body });
}

const typed = { name: 'A', email: 'ada@example', message: 'Hi <b>there</b>', honeypot: 'bot text' };

describe('readVisitorOutcome', () => {
  test('a 200 { success: true } is a success', async () => {
    await expect(readVisitorOutcome(success(), post(typed), VISITOR_PAGES.contact)).resolves.toEqual({ ok: true });
  });

  test('contact 400: each field’s messages, the visible values as typed, never the honeypot', async () => {
    const answer = invalid({ name: ['Too short'], message: ['Also short'], honeypot: ['Leave it empty'] });
    await expect(readVisitorOutcome(answer, post(typed), VISITOR_PAGES.contact)).resolves.toEqual({
      ok: false,
      retry: {
        status: 400,
        values: { name: 'A', email: 'ada@example', message: 'Hi <b>there</b>' },
        errors: { name: ['Too short'], message: ['Also short'], honeypot: ['Leave it empty'] },
        formError: undefined,
        headers: {},
      },
    });
  });

  test('newsletter 400: the single error goes to the email field', async () => {
    const outcome = await readVisitorOutcome(failure(400, 'Please enter a valid email address'), post({ email: 'nope' }), VISITOR_PAGES.newsletter);
    expect(outcome).toEqual({
      ok: false,
      retry: { status: 400, values: { email: 'nope' }, errors: { email: ['Please enter a valid email address'] }, formError: undefined, headers: {} },
    });
  });

  test('newsletter 503: the error is about the form, the status and Retry-After are kept', async () => {
    const answer = failure(503, 'The newsletter service is busy right now.', { 'retry-after': '120' });
    await expect(readVisitorOutcome(answer, post({ email: 'a@b.co' }), VISITOR_PAGES.newsletter)).resolves.toEqual({
      ok: false,
      retry: {
        status: 503,
        values: { email: 'a@b.co' },
        errors: {},
        formError: 'The newsletter service is busy right now.',
        headers: { 'retry-after': '120' },
      },
    });
  });

  test.each<[string, Response]>([
    ['a 500 without a body', new Response(null, { status: 500 })],
    ['an answer that is not JSON', new Response('<html>', { status: 502, headers: { 'content-type': 'text/html' } })],
    ['a 200 that does not say success', json(200, { success: false })],
  ])('%s: a generic message about the form', async (_, answer) => {
    const outcome = await readVisitorOutcome(answer, post(typed), VISITOR_PAGES.contact);
    expect(outcome).toMatchObject({ ok: false, retry: { formError: 'Internal server error', errors: {} } });
  });

  test('a post whose form cannot be read again shows no values', async () => {
    const request = new Request('http://site.test/api/contact', { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } });
    const outcome = await readVisitorOutcome(failure(413, 'The form is too large'), request, VISITOR_PAGES.contact);
    expect(outcome).toMatchObject({ ok: false, retry: { status: 413, values: {}, formError: 'The form is too large' } });
  });
});

describe('answerVisitor', () => {
  function context(request: Request) {
    const rewrite = vi.fn(async (to: string | URL | Request) => new Response(`page for ${new URL(to instanceof Request ? to.url : to).pathname}`));
    const locals: App.Locals = {};
    return { context: { request, url: new URL(request.url), locals, rewrite } as unknown as VisitorContext, rewrite, locals };
  }

  test('runs the handler on the request itself and answers a success with 303 to the thank-you page', async () => {
    const request = post(typed);
    const { context: ctx, rewrite } = context(request);
    const handle = vi.fn(async (r: Request) => {
      await r.formData();
      return success();
    });
    const response = await answerVisitor(ctx, VISITOR_PAGES.contact, handle);
    expect(handle).toHaveBeenCalledWith(request);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/thank-you/?form=contact');
    expect(rewrite).not.toHaveBeenCalled();
  });

  test('shows the form again through a GET rewrite, with the refusal in locals', async () => {
    const { context: ctx, rewrite, locals } = context(post(typed));
    const response = await answerVisitor(ctx, VISITOR_PAGES.contact, async (r) => {
      await r.formData();
      return invalid({ email: ['Bad'] });
    });
    await expect(response.text()).resolves.toBe('page for /retry/contact');
    const target = rewrite.mock.calls[0]![0] as Request;
    expect(target.method).toBe('GET');
    expect(locals.formRetry).toMatchObject({ status: 400, errors: { email: ['Bad'] }, values: { email: 'ada@example' } });
  });
});

describe('the answers themselves', () => {
  test('seeOther keeps the Location relative', () => {
    const response = seeOther('/thank-you/');
    expect([response.status, response.headers.get('location'), response.headers.get('cache-control')]).toEqual([303, '/thank-you/', 'no-store']);
  });

  test('applyRetryStatus gives the page the endpoint’s status and Retry-After, never cached', () => {
    const response = { status: 200, statusText: 'OK', headers: new Headers() };
    applyRetryStatus(response, { status: 503, values: {}, errors: {}, formError: 'Busy', headers: { 'retry-after': '120' } });
    expect(response).toMatchObject({ status: 503, statusText: '' });
    expect(Object.fromEntries(response.headers)).toEqual({ 'retry-after': '120', 'cache-control': 'no-store' });
  });
});
