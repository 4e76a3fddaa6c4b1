import { describe, expect, test } from 'vitest';
import { isAdminRefusal, renderAdminOutcome } from '../../../src/lib/admin/route.ts';

const HEADERS = { 'cache-control': 'no-store', 'x-robots-tag': 'noindex, nofollow' };

describe('an admin outcome as an answer', () => {
  test('a redirect is a 303 that is never cached', () => {
    expect(renderAdminOutcome({ kind: 'redirect', location: '/admin/messages?done=deleted' })).toEqual({
      status: 303,
      headers: { ...HEADERS, location: '/admin/messages?done=deleted' },
      body: null,
    });
  });

  test('a sign-in redirect carries its cookie', () => {
    expect(renderAdminOutcome({ kind: 'redirect', location: '/admin', cookie: 'admin_session=x; Path=/' })).toEqual({
      status: 303,
      headers: { ...HEADERS, location: '/admin', 'set-cookie': 'admin_session=x; Path=/' },
      body: null,
    });
  });

  test('a file is an attachment under its name', () => {
    expect(renderAdminOutcome({ kind: 'download', filename: 'messages-2026-11-22.csv', contentType: 'text/csv; charset=utf-8', body: 'id\r\n' })).toEqual({
      status: 200,
      headers: { ...HEADERS, 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="messages-2026-11-22.csv"' },
      body: 'id\r\n',
    });
  });

  test('a refusal is a page to render, with its status and headers', () => {
    const view = renderAdminOutcome({ kind: 'refused', status: 429, message: 'Too many attempts.', headers: { 'retry-after': '900' } });
    expect(view).toEqual({ kind: 'admin-refusal', status: 429, message: 'Too many attempts.', headers: { ...HEADERS, 'retry-after': '900' } });
    expect(isAdminRefusal(view)).toBe(true);
    expect(isAdminRefusal({ status: 303, headers: {}, body: null })).toBe(false);
  });
});
