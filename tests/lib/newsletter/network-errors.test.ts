import { describe, expect, test } from 'vitest';
import { describeNetworkError, isRedirect } from '../../../packages/site-forms/src/lib/newsletter/provider.ts';

describe('what the log says about a call that got no answer', () => {
  const withCause = (cause: object) => Object.assign(new TypeError('fetch failed'), { cause });
  test.each([
    ["fetch's deadline (TimeoutError)", new DOMException('The operation timed out.', 'TimeoutError'), 'timeout'],
    ['an aborted call (AbortError)', new DOMException('This operation was aborted', 'AbortError'), 'timeout'],
    ['a fetch whose cause timed out', withCause({ name: 'TimeoutError' }), 'timeout'],
    ["superagent's timeout (a timeout field)", Object.assign(new Error('Timeout of 5000ms exceeded'), { timeout: 5000 }), 'timeout'],
    ['a reset under fetch (code on the cause)', withCause({ code: 'ECONNRESET' }), 'network error ECONNRESET'],
    [
      'a refused connection under superagent (code on the error)',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'network error ECONNREFUSED',
    ],
    ["the cause's code before the error's", Object.assign(withCause({ code: 'ENOTFOUND' }), { code: 'OTHER' }), 'network error ENOTFOUND'],
    ['an error with no code', new Error('socket hang up'), 'network error'],
    ['a fetch failure whose cause has no code', withCause({ name: 'Error' }), 'network error'],
    ['nothing at all', undefined, 'network error'],
    ['null', null, 'network error'],
  ])('%s', (_, error, said) => {
    expect(describeNetworkError(error)).toBe(said);
  });

  test.each([
    [299, false],
    [300, true],
    [301, true],
    [307, true],
    [399, true],
    [400, false],
    [200, false],
  ])('status %i is a redirect: %s', (status, redirect) => {
    expect(isRedirect(status)).toBe(redirect);
  });
});
