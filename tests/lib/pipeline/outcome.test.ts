import { describe, expect, test } from 'vitest';
import { accepted, failure, invalid, methodNotAllowed, renderJson, tooManyRequests } from '../../../packages/site-forms/src/lib/http/outcome.ts';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

describe('renderJson: the JSON of SPEC.md, byte for byte, never cached', () => {
  test.each([
    ['accepted', accepted(), 200, '{"success":true}', JSON_HEADERS],
    [
      'invalid fields',
      invalid({ name: ['Too short'], email: undefined, message: [] }, { name: 'A' }),
      400,
      '{"success":false,"errors":{"name":["Too short"]}}',
      JSON_HEADERS,
    ],
    [
      'a failure',
      failure(503, 'Busy', { headers: { 'retry-after': '120' }, field: 'email', values: { email: 'a@b.co' } }),
      503,
      '{"success":false,"error":"Busy"}',
      { ...JSON_HEADERS, 'retry-after': '120' },
    ],
    [
      'data',
      { kind: 'data' as const, status: 503, body: { success: false, provider: 'local', databaseWritable: false, pendingMessages: null } },
      503,
      '{"success":false,"provider":"local","databaseWritable":false,"pendingMessages":null}',
      JSON_HEADERS,
    ],
  ])('%s', (_, outcome, status, body, headers) => {
    expect(renderJson(outcome)).toEqual({ status, headers, body });
  });

  test('each answer has headers of its own: adding to one never changes the next', () => {
    const first = renderJson(accepted());
    first.headers.vary = 'Origin';
    expect(renderJson(accepted()).headers).toEqual(JSON_HEADERS);
  });
});

describe('the failures the guard answers with', () => {
  test('405 names the methods the address takes, in the error and in Allow', () => {
    expect(methodNotAllowed(['POST'])).toEqual({ kind: 'failure', status: 405, error: 'Use POST for this address', headers: { allow: 'POST' } });
    expect(methodNotAllowed(['GET', 'HEAD'])).toMatchObject({ error: 'Use GET or HEAD for this address', headers: { allow: 'GET, HEAD' } });
  });

  test.each([
    [0, 'Too many attempts. Please try again in 1 minute.'],
    [1, 'Too many attempts. Please try again in 1 minute.'],
    [60, 'Too many attempts. Please try again in 1 minute.'],
    [61, 'Too many attempts. Please try again in 2 minutes.'],
    [600, 'Too many attempts. Please try again in 10 minutes.'],
  ])('429 after %i s says: %s', (seconds, error) => {
    expect(tooManyRequests(seconds)).toEqual({ kind: 'failure', status: 429, error, headers: { 'retry-after': String(seconds) }, values: undefined });
  });
});
