import { describe, expect, test } from 'vitest';
import { readConfig } from '../../packages/site-forms/src/lib/config/config.ts';

/** What a site owner sees at start for a given PUBLIC_URL / TRUST_PROXY. */
function outcome(env: Record<string, string>) {
  const result = readConfig(env);
  return result.ok ? { publicUrl: result.config.publicUrl, trustProxy: result.config.trustProxy } : { problems: result.problems };
}

const NOT_AN_ORIGIN = 'PUBLIC_URL must be the address visitors type, such as https://www.example.com, without a path';

describe('PUBLIC_URL and TRUST_PROXY', () => {
  test.each([
    ['unset: taken from each request', {}, { publicUrl: undefined, trustProxy: 0 }],
    ['empty: taken from each request', { PUBLIC_URL: '' }, { publicUrl: undefined, trustProxy: 0 }],
    ['an https address', { PUBLIC_URL: 'https://www.example.com' }, { publicUrl: 'https://www.example.com', trustProxy: 0 }],
    ['a trailing slash is dropped', { PUBLIC_URL: 'https://www.example.com/' }, { publicUrl: 'https://www.example.com', trustProxy: 0 }],
    [
      'capitals and the default port are normalised as browsers do',
      { PUBLIC_URL: 'https://WWW.Example.com:443' },
      { publicUrl: 'https://www.example.com', trustProxy: 0 },
    ],
    ['another port is kept', { PUBLIC_URL: 'http://localhost:8080' }, { publicUrl: 'http://localhost:8080', trustProxy: 0 }],
    ['one proxy', { TRUST_PROXY: '1' }, { publicUrl: undefined, trustProxy: 1 }],
    ['a path is refused', { PUBLIC_URL: 'https://www.example.com/forms' }, { problems: [NOT_AN_ORIGIN] }],
    ['a query is refused', { PUBLIC_URL: 'https://www.example.com/?a=1' }, { problems: [NOT_AN_ORIGIN] }],
    ['a user is refused', { PUBLIC_URL: 'https://me@www.example.com' }, { problems: [NOT_AN_ORIGIN] }],
    ['another scheme is refused', { PUBLIC_URL: 'ftp://www.example.com' }, { problems: ['PUBLIC_URL must be an absolute http(s) URL'] }],
    ['a bare name is refused', { PUBLIC_URL: 'www.example.com' }, { problems: ['PUBLIC_URL must be an absolute http(s) URL'] }],
    ['TRUST_PROXY past 20 is refused', { TRUST_PROXY: '21' }, { problems: ['TRUST_PROXY must be at most 20'] }],
  ])('%s', (_, env, expected) => {
    expect(outcome(env)).toEqual(expected);
  });
});

describe("CONTACT_FORM_ENDPOINT, for the pages' CSP", () => {
  test.each([
    ['unset: the site itself', {}, undefined],
    ['another site: its origin', { CONTACT_FORM_ENDPOINT: 'https://forms.example.com/api/contact' }, 'https://forms.example.com'],
  ])('%s', (_, env, expected) => {
    const result = readConfig(env);
    expect(result.ok && result.config.contactEndpointOrigin).toBe(expected);
  });
});
