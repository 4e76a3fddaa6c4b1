import { describe, expect, test } from 'vitest';
import { renderAdminOutcome } from '../../../packages/site-forms/src/lib/pipeline/admin-route.ts';

/** How an admin action's outcome is written: each kind as the server sends it, with no header or body it does not have. */
const ADMIN_HEADERS = { 'cache-control': 'no-store', 'x-robots-tag': 'noindex, nofollow' };

describe('renderAdminOutcome', () => {
  test('a redirect without a cookie sets none, not even an empty one', () => {
    const reply = renderAdminOutcome({ kind: 'redirect', location: '/admin' });
    expect(reply).toEqual({ kind: 'answer', status: 303, headers: { ...ADMIN_HEADERS, location: '/admin' }, body: null });
    expect(Object.keys(reply.headers)).toEqual(['cache-control', 'x-robots-tag', 'location']);
  });

  test('a redirect with a cookie sets it', () => {
    expect(renderAdminOutcome({ kind: 'redirect', location: '/admin', cookie: 'admin_session=x; Path=/' }).headers['set-cookie']).toBe(
      'admin_session=x; Path=/',
    );
  });

  test('a download whose text is at hand is its body, with no stream', () => {
    expect(renderAdminOutcome({ kind: 'download', filename: 'messages.csv', contentType: 'text/csv', body: 'a,b\n' })).toEqual({
      kind: 'answer',
      status: 200,
      headers: { ...ADMIN_HEADERS, 'content-type': 'text/csv', 'content-disposition': 'attachment; filename="messages.csv"' },
      body: 'a,b\n',
    });
  });

  test('a download read as it goes is a stream, with a null body', () => {
    const lines = (async function* () {
      yield 'a,b\n';
    })();
    const reply = renderAdminOutcome({ kind: 'download', filename: 'messages.csv', contentType: 'text/csv', body: lines });
    expect(reply).toMatchObject({ kind: 'answer', status: 200, body: null });
    expect((reply as { stream?: unknown }).stream).toBe(lines);
  });
});
