import { describe, expect, test } from 'vitest';
import { readForm, tooLargeMessage } from '../../packages/site-forms/src/lib/http/form.ts';

const URLENCODED = 'application/x-www-form-urlencoded';

function streamed(chunks: string[], fail?: Error): Request {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      if (fail) controller.error(fail);
      else controller.close();
    },
  });
  return new Request('http://site.test/api/contact', { method: 'POST', body, headers: { 'content-type': URLENCODED }, duplex: 'half' } as RequestInit);
}

const outcome = async (request: Request, limit?: number) => {
  const result = await readForm(request, limit);
  return result.ok ? { fields: { ...result.fields } } : { status: result.failure.status, error: result.failure.error };
};

describe('reading a form: types and limits', () => {
  test.each([
    ['a content type in capitals with a charset', 'Application/X-WWW-Form-Urlencoded; charset=UTF-8'],
    ['a space before the parameters', 'application/x-www-form-urlencoded ; charset=utf-8'],
  ])('accepts %s', async (_, type) => {
    const request = new Request('http://site.test/api/contact', { method: 'POST', body: 'name=Ada', headers: { 'content-type': type } });
    await expect(outcome(request)).resolves.toEqual({ fields: { name: 'Ada' } });
  });

  test.each([
    ['JSON', 'application/json'],
    ['plain text', 'text/plain'],
    ['no content type', undefined],
  ])('refuses %s with the 415 of the spec', async (_, type) => {
    const request = new Request('http://site.test/api/contact', { method: 'POST', body: new Blob(['name=Ada'], { type: type ?? '' }) });
    await expect(outcome(request)).resolves.toEqual({ status: 415, error: 'Send the form as multipart/form-data or application/x-www-form-urlencoded' });
  });

  test.each([
    ['exactly the limit, in one piece', ['name=12345'], { fields: { name: '12345' } }],
    ['exactly the limit, in pieces', ['na', 'me=12', '345'], { fields: { name: '12345' } }],
    ['one byte past the limit', ['name=123456'], { status: 413, error: 'The form is too large; the limit is 0 KB' }],
    ['one byte past the limit, in pieces', ['name=', '123456'], { status: 413, error: 'The form is too large; the limit is 0 KB' }],
  ])('a body of %s', async (_, chunks, expected) => {
    await expect(outcome(streamed(chunks), 10)).resolves.toEqual(expected);
  });

  test.each([
    ['the limit', '10', { fields: { name: '12345' } }],
    ['one byte more than the limit', '11', { status: 413, error: 'The form is too large; the limit is 0 KB' }],
  ])('a declared Content-Length of %s', async (_, length, expected) => {
    const request = new Request('http://site.test/api/contact', {
      method: 'POST',
      body: 'name=12345',
      headers: { 'content-type': URLENCODED, 'content-length': length },
    });
    await expect(outcome(request, 10)).resolves.toEqual(expected);
  });

  test.each([
    [
      'the adapter failing it at its size limit: 413',
      new Error('Body exceeded the size limit'),
      { status: 413, error: 'The form is too large; the limit is 64 KB' },
    ],
    ['a connection that breaks: 400', new Error('socket hang up'), { status: 400, error: 'The form could not be read' }],
  ])('a body stream that fails with %s', async (_, error, expected) => {
    await expect(outcome(streamed(['name=Ada'], error))).resolves.toEqual(expected);
  });

  test('a post without a body is an empty form', async () => {
    const request = new Request('http://site.test/api/contact', { method: 'POST', headers: { 'content-type': URLENCODED } });
    await expect(outcome(request)).resolves.toEqual({ fields: {} });
  });

  test.each([
    [64 * 1024, 'The form is too large; the limit is 64 KB'],
    [1024, 'The form is too large; the limit is 1 KB'],
    [2047, 'The form is too large; the limit is 1 KB'],
  ])('the 413 message for a limit of %i bytes', (limit, message) => {
    expect(tooLargeMessage(limit)).toBe(message);
  });

  test('the 413 message names the endpoints’ limit by default', () => {
    expect(tooLargeMessage()).toBe('The form is too large; the limit is 64 KB');
  });
});
