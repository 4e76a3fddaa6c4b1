import { describe, expect, test } from 'vitest';
import { renderAdminOutcome, runAdminRoute } from '../../../packages/site-forms/src/lib/pipeline/admin-route.ts';
import type { Services } from '../../../packages/site-forms/src/lib/app/services.ts';

const HEADERS = { 'cache-control': 'no-store', 'x-robots-tag': 'noindex, nofollow' };

describe('an admin outcome as an answer', () => {
  test('a redirect is a 303 that is never cached', () => {
    expect(renderAdminOutcome({ kind: 'redirect', location: '/admin/messages?done=deleted' })).toEqual({
      kind: 'answer',
      status: 303,
      headers: { ...HEADERS, location: '/admin/messages?done=deleted' },
      body: null,
    });
  });

  test('a sign-in redirect carries its cookie', () => {
    expect(renderAdminOutcome({ kind: 'redirect', location: '/admin', cookie: 'admin_session=x; Path=/' })).toEqual({
      kind: 'answer',
      status: 303,
      headers: { ...HEADERS, location: '/admin', 'set-cookie': 'admin_session=x; Path=/' },
      body: null,
    });
  });

  test('a file is an attachment under its name', () => {
    expect(renderAdminOutcome({ kind: 'download', filename: 'messages-2026-11-22.csv', contentType: 'text/csv; charset=utf-8', body: 'id\r\n' })).toEqual({
      kind: 'answer',
      status: 200,
      headers: { ...HEADERS, 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="messages-2026-11-22.csv"' },
      body: 'id\r\n',
    });
  });

  test('a refusal is a page to render, with its status and headers', () => {
    const view = renderAdminOutcome({ kind: 'refused', status: 429, message: 'Too many attempts.', headers: { 'retry-after': '900' } });
    expect(view).toEqual({ kind: 'admin-refusal', status: 429, message: 'Too many attempts.', headers: { ...HEADERS, 'retry-after': '900' } });
  });

  test('a JSON outcome is its status and body as JSON, never cached (the passkey ceremonies)', () => {
    expect(renderAdminOutcome({ kind: 'json', status: 400, body: { success: false, error: 'The passkey could not be checked.' } })).toEqual({
      kind: 'answer',
      status: 400,
      headers: { ...HEADERS, 'content-type': 'application/json; charset=utf-8' },
      body: '{"success":false,"error":"The passkey could not be checked."}',
    });
    expect(renderAdminOutcome({ kind: 'json', status: 200, body: { success: true, challenge: 'abc' } })).toMatchObject({
      status: 200,
      body: '{"success":true,"challenge":"abc"}',
    });
  });

  test('a JSON outcome sets the session cookie it carries (a passkey sign-in) and its headers (Retry-After), never its own cache rules', () => {
    const outcome = {
      kind: 'json',
      status: 429,
      body: { success: false, message: 'Too many attempts.' },
      cookie: 'admin_session=abc; Path=/',
      headers: { 'retry-after': '60', 'cache-control': 'max-age=600' },
    } as const;
    expect(renderAdminOutcome(outcome)).toEqual({
      kind: 'answer',
      status: 429,
      headers: { ...HEADERS, 'retry-after': '60', 'content-type': 'application/json; charset=utf-8', 'set-cookie': 'admin_session=abc; Path=/' },
      body: '{"success":false,"message":"Too many attempts."}',
    });
  });

  test('a value shown once is a page to render, not cached, never a redirect that carries it', () => {
    const shown = {
      kind: 'shown',
      title: 'Invitation link',
      message: 'Mail is off: give Ada this link yourself. It is shown only now.',
      value: 'https://site.test/admin/welcome/s3cr3t',
      back: '/admin/people',
    } as const;
    const view = renderAdminOutcome(shown);
    expect(view).toEqual({
      kind: 'admin-shown',
      status: 200,
      title: shown.title,
      message: shown.message,
      value: shown.value,
      back: shown.back,
      headers: HEADERS,
    });
    expect(JSON.stringify(view.headers)).not.toContain('s3cr3t');
  });
});

describe("the admin's step of the road", () => {
  const config = { publicUrl: undefined, trustProxy: 0 };
  // An admin that is on (ADMIN_PASSWORD_HASH set, or someone added).
  const services = (admin: object | undefined) => ({ admin: admin && { isOn: async () => true, ...admin }, config }) as unknown as Services;
  const request = (method: string, headers: Record<string, string> = {}) =>
    new Request('http://site.test/admin/actions/sign-out', {
      method,
      headers: { host: 'site.test', 'content-type': 'application/x-www-form-urlencoded', ...headers },
      ...(method === 'POST' && { body: 'csrf=x' }),
    });

  test('without ADMIN_PASSWORD_HASH every action is a 404 page', async () => {
    await expect(runAdminRoute('sign-out', request('POST'), '203.0.113.1', services(undefined))).resolves.toEqual({
      kind: 'admin-refusal',
      status: 404,
      message: 'Page not found',
      headers: HEADERS,
    });
  });

  test('an admin that is off (no ADMIN_PASSWORD_HASH, nobody added): every action is a 404 page, no session looked up', async () => {
    const off = {
      admin: { isOn: async () => false, deps: { sessions: { resume: () => Promise.reject(new Error('looked up')) } } },
      config,
    } as unknown as Services;
    await expect(runAdminRoute('sign-out', request('POST', { origin: 'http://site.test' }), '203.0.113.1', off)).resolves.toEqual({
      kind: 'admin-refusal',
      status: 404,
      message: 'Page not found',
      headers: HEADERS,
    });
  });

  test.each(['GET', 'HEAD'])('%s of an action (a reload) goes to the admin', async (method) => {
    await expect(runAdminRoute('sign-out', request(method), '203.0.113.1', services({}))).resolves.toEqual({
      kind: 'answer',
      status: 303,
      headers: { ...HEADERS, location: '/admin' },
      body: null,
    });
  });

  test('another method is a 405 naming POST', async () => {
    await expect(runAdminRoute('sign-out', request('PUT'), '203.0.113.1', services({}))).resolves.toEqual({
      kind: 'admin-refusal',
      status: 405,
      message: 'Use the buttons of the admin pages.',
      headers: { ...HEADERS, allow: 'POST' },
    });
  });

  test('a POST from this site reaches the action with the public origin of the request', async () => {
    const seen: unknown[] = [];
    const admin = {
      deps: {
        sessions: {
          resume: async () => {
            seen.push('resumed');
            return { ok: false, reason: 'missing' };
          },
        },
      },
    };
    await expect(runAdminRoute('sign-out', request('POST', { origin: 'http://site.test' }), '203.0.113.1', services(admin))).resolves.toEqual({
      kind: 'answer',
      status: 303,
      headers: { ...HEADERS, location: '/admin?ended=none' },
      body: null,
    });
    expect(seen).toEqual(['resumed']);
    await expect(runAdminRoute('sign-out', request('POST', { origin: 'http://evil.test' }), '203.0.113.1', services(admin))).resolves.toMatchObject({
      status: 403,
    });
    expect(seen).toEqual(['resumed']);
  });
});
