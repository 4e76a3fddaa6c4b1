import { describe, expect, test } from 'vitest';
import { applyOriginPolicy, isAddressedToSite, type OriginSettings, publicOrigin } from '../../packages/site-forms/src/lib/http/origin.ts';

/** No proxy, no PUBLIC_URL: the site is whatever Host says, over http. */
const DIRECT: OriginSettings = { publicUrl: undefined, trustProxy: 0, allowedOrigins: [] };
/** Behind one TLS-terminating proxy that reports the scheme and host. */
const PROXIED: OriginSettings = { publicUrl: undefined, trustProxy: 1, allowedOrigins: [] };
/** The public address named outright. */
const NAMED: OriginSettings = { publicUrl: 'https://www.example.com', trustProxy: 1, allowedOrigins: [] };
/** One foreign site allowed to post. */
const WITH_BLOG: OriginSettings = { ...DIRECT, allowedOrigins: ['https://blog.example.com'] };

function request(method: string, headers: Record<string, string>): Request {
  return new Request('http://ignored.invalid/api/contact', { method, headers });
}

/** What a visitor's script observes: the status, the CORS header, and the error text. */
function observe(settings: OriginSettings, method: string, headers: Record<string, string>) {
  const policy = applyOriginPolicy(request(method, headers), settings);
  if ('headers' in policy) return { status: 'passes', allowOrigin: policy.headers['access-control-allow-origin'] ?? null, error: null };
  if ('preflight' in policy) return { status: 204, allowOrigin: policy.preflight['access-control-allow-origin'] ?? null, error: null };
  return { status: policy.refuse.status, allowOrigin: null, error: policy.refuse.error };
}

const FOREIGN = 'Forms on this site cannot be posted from another website';
const MISDIRECTED = 'This site does not answer to that address';
const PREFLIGHT = { 'access-control-request-method': 'POST' };

describe('the origin policy, as a visitor or an attacker observes it', () => {
  test.each([
    // settings, method, headers, status, allow-origin, error
    ['a post without Origin (curl) passes', DIRECT, 'POST', { host: 'site.test' }, 'passes', null, null],
    ['a post from the site itself over http passes', DIRECT, 'POST', { host: 'site.test', origin: 'http://site.test' }, 'passes', null, null],
    ['a post from another website is refused', DIRECT, 'POST', { host: 'site.test', origin: 'https://evil.test' }, 403, null, FOREIGN],
    ['a PUT from another website is refused', DIRECT, 'PUT', { host: 'site.test', origin: 'https://evil.test' }, 403, null, FOREIGN],
    ['a PATCH from another website is refused', DIRECT, 'PATCH', { host: 'site.test', origin: 'https://evil.test' }, 403, null, FOREIGN],
    ['a DELETE from another website is refused', DIRECT, 'DELETE', { host: 'site.test', origin: 'https://evil.test' }, 403, null, FOREIGN],
    // `null`: a sandboxed frame, a file, a redirect across sites, or a page under `no-referrer` (decision 0143).
    ['a post from an opaque origin (Origin: null) is refused', DIRECT, 'POST', { host: 'site.test', origin: 'null' }, 403, null, FOREIGN],
    ['an opaque origin is refused under PUBLIC_URL too', NAMED, 'POST', { host: 'www.example.com', origin: 'null' }, 403, null, FOREIGN],
    ['a GET from another website passes (it changes nothing)', DIRECT, 'GET', { host: 'site.test', origin: 'https://evil.test' }, 'passes', null, null],
    ['a HEAD from another website passes', DIRECT, 'HEAD', { host: 'site.test', origin: 'https://evil.test' }, 'passes', null, null],
    ['a preflight from another website is refused', DIRECT, 'OPTIONS', { host: 'site.test', origin: 'https://evil.test', ...PREFLIGHT }, 403, null, FOREIGN],
    ['an OPTIONS that is no preflight passes', DIRECT, 'OPTIONS', { host: 'site.test', origin: 'https://evil.test' }, 'passes', null, null],
    [
      'an allowed website posts with CORS',
      WITH_BLOG,
      'POST',
      { host: 'site.test', origin: 'https://blog.example.com' },
      'passes',
      'https://blog.example.com',
      null,
    ],
    [
      'an allowed website gets its preflight',
      WITH_BLOG,
      'OPTIONS',
      { host: 'site.test', origin: 'https://blog.example.com', ...PREFLIGHT },
      204,
      'https://blog.example.com',
      null,
    ],
    [
      'a preflight from the site itself gets 204 without CORS',
      DIRECT,
      'OPTIONS',
      { host: 'site.test', origin: 'http://site.test', ...PREFLIGHT },
      204,
      null,
      null,
    ],
    ['an allowed site over http is not the allowed https one', WITH_BLOG, 'POST', { host: 'site.test', origin: 'http://blog.example.com' }, 403, null, FOREIGN],
    // Without a trusted proxy, X-Forwarded-* is whatever the client wrote.
    [
      'no trusted proxy: the https page is foreign to the http server',
      DIRECT,
      'POST',
      { host: 'site.test', origin: 'https://site.test', 'x-forwarded-proto': 'https' },
      403,
      null,
      FOREIGN,
    ],
    [
      'no trusted proxy: a forged X-Forwarded-Host is ignored',
      DIRECT,
      'POST',
      { host: 'site.test', origin: 'http://evil.test', 'x-forwarded-host': 'evil.test' },
      403,
      null,
      FOREIGN,
    ],
    // Behind nginx terminating TLS (the case of issue 11, item 1).
    [
      'behind a trusted TLS proxy, the https page posts',
      PROXIED,
      'POST',
      { host: 'site.test', origin: 'https://site.test', 'x-forwarded-proto': 'https' },
      'passes',
      null,
      null,
    ],
    [
      'behind a trusted proxy, X-Forwarded-Host wins over Host',
      PROXIED,
      'POST',
      { host: '127.0.0.1:4321', origin: 'https://site.test:8443', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'site.test:8443' },
      'passes',
      null,
      null,
    ],
    [
      'behind a trusted TLS proxy, an http Origin is foreign',
      PROXIED,
      'POST',
      { host: 'site.test', origin: 'http://site.test', 'x-forwarded-proto': 'https' },
      403,
      null,
      FOREIGN,
    ],
    [
      'behind a trusted proxy without X-Forwarded-Proto, http is assumed',
      PROXIED,
      'POST',
      { host: 'site.test', origin: 'http://site.test' },
      'passes',
      null,
      null,
    ],
    [
      'behind a trusted proxy, another website is still refused',
      PROXIED,
      'POST',
      { host: 'site.test', origin: 'https://evil.test', 'x-forwarded-proto': 'https' },
      403,
      null,
      FOREIGN,
    ],
    // PUBLIC_URL alone decides, and refuses requests addressed to another name (DNS rebinding).
    ['PUBLIC_URL: the public page posts', NAMED, 'POST', { host: 'www.example.com', origin: 'https://www.example.com' }, 'passes', null, null],
    [
      'PUBLIC_URL: the page posts even when the proxy reports nothing',
      NAMED,
      'POST',
      { host: '127.0.0.1:4321', origin: 'https://www.example.com' },
      'passes',
      null,
      null,
    ],
    [
      'PUBLIC_URL: DNS rebinding (Host and Origin both evil) is misdirected',
      NAMED,
      'POST',
      { host: 'evil.test', origin: 'http://evil.test' },
      421,
      null,
      MISDIRECTED,
    ],
    ['PUBLIC_URL: a GET under another name is misdirected too', NAMED, 'GET', { host: 'evil.test:4321' }, 421, null, MISDIRECTED],
    [
      'PUBLIC_URL: a forwarded host of another name is misdirected',
      NAMED,
      'POST',
      { host: 'www.example.com', 'x-forwarded-host': 'evil.test' },
      421,
      null,
      MISDIRECTED,
    ],
    ['PUBLIC_URL: the http page of the same name is foreign', NAMED, 'POST', { host: 'www.example.com', origin: 'http://www.example.com' }, 403, null, FOREIGN],
    [
      "PUBLIC_URL: the server's own address as Origin is foreign",
      NAMED,
      'POST',
      { host: '127.0.0.1:4321', origin: 'http://127.0.0.1:4321' },
      403,
      null,
      FOREIGN,
    ],
    ['PUBLIC_URL: curl to 127.0.0.1 without Origin passes', NAMED, 'POST', { host: '127.0.0.1:4321' }, 'passes', null, null],
    ['no Host at all (HTTP/1.0) with an Origin is refused', DIRECT, 'POST', { origin: 'http://site.test' }, 403, null, FOREIGN],
  ])('%s', (_, settings, method, headers, status, allowOrigin, error) => {
    expect(observe(settings, method, headers)).toEqual({ status, allowOrigin, error });
  });

  test('every answer that passes says it varies by Origin', () => {
    const policy = applyOriginPolicy(request('POST', { host: 'site.test', origin: 'http://site.test' }), DIRECT);
    expect(policy).toEqual({ headers: { vary: 'Origin' } });
  });

  test('an allowed preflight names the methods, headers and how long to cache it', () => {
    const policy = applyOriginPolicy(request('OPTIONS', { host: 'site.test', origin: 'https://blog.example.com', ...PREFLIGHT }), WITH_BLOG);
    expect('preflight' in policy && policy.preflight).toEqual({
      'access-control-allow-origin': 'https://blog.example.com',
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': 'Content-Type, Accept',
      'access-control-max-age': '600',
      vary: 'Origin',
    });
  });
});

describe('publicOrigin: the address the browser used', () => {
  test.each([
    ['direct: http and Host', DIRECT, { host: 'site.test:4321' }, 'http://site.test:4321'],
    ['direct: forwarded headers are ignored', DIRECT, { host: 'site.test', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.test' }, 'http://site.test'],
    ['one proxy: its scheme and Host', PROXIED, { host: 'site.test', 'x-forwarded-proto': 'https' }, 'https://site.test'],
    ['one proxy: the scheme in capitals', PROXIED, { host: 'site.test', 'x-forwarded-proto': 'HTTPS' }, 'https://site.test'],
    [
      'one proxy: its forwarded host',
      PROXIED,
      { host: '127.0.0.1:4321', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'site.test:8443' },
      'https://site.test:8443',
    ],
    ['one proxy: the default port is dropped as browsers do', PROXIED, { host: 'site.test:443', 'x-forwarded-proto': 'https' }, 'https://site.test'],
    [
      'one proxy: the rightmost of several values',
      PROXIED,
      { host: 'h', 'x-forwarded-proto': 'http, https', 'x-forwarded-host': 'evil.test, site.test' },
      'https://site.test',
    ],
    [
      'two proxies: the second from the right',
      { ...PROXIED, trustProxy: 2 },
      { host: 'h', 'x-forwarded-proto': 'http, https, http', 'x-forwarded-host': 'evil.test, site.test, inner.test' },
      'https://site.test',
    ],
    ['more proxies than values: the leftmost', { ...PROXIED, trustProxy: 3 }, { host: 'h', 'x-forwarded-proto': 'https' }, 'https://h'],
    ['a scheme that is neither http nor https counts as http', PROXIED, { host: 'site.test', 'x-forwarded-proto': 'ftp' }, 'http://site.test'],
    ['an empty forwarded host falls back to Host', PROXIED, { host: 'site.test', 'x-forwarded-host': ' , ' }, 'http://site.test'],
    ['a bracketed IPv6 host', DIRECT, { host: '[::1]:4321' }, 'http://[::1]:4321'],
    ['PUBLIC_URL wins over everything', NAMED, { host: 'evil.test', 'x-forwarded-proto': 'http' }, 'https://www.example.com'],
  ])('%s', (_, settings, headers, expected) => {
    expect(publicOrigin(new Headers(headers), settings)).toBe(expected);
  });

  test.each([
    ['no Host', {}],
    ['a Host with a path', { host: 'site.test/evil' }],
    ['a Host with a user', { host: 'user@site.test' }],
    ['a Host with a port too large', { host: 'site.test:99999' }],
    ['a broken IPv6 host', { host: '[::::::1::]' }],
    ['a Host with a space', { host: 'site .test' }],
  ])('%s: no origin at all', (_, headers) => {
    expect(publicOrigin(new Headers(headers), DIRECT)).toBeUndefined();
  });
});

describe('isAddressedToSite: refusing other names once PUBLIC_URL is set', () => {
  test.each([
    ['without PUBLIC_URL, any name', DIRECT, { host: 'evil.test' }, true],
    ['the public name', NAMED, { host: 'www.example.com' }, true],
    ['the public name in capitals, with a port', NAMED, { host: 'WWW.Example.COM:8443' }, true],
    ['another name', NAMED, { host: 'evil.test' }, false],
    ['a name that only ends like the public one', NAMED, { host: 'evilwww.example.com' }, false],
    ['a name that only starts like the public one', NAMED, { host: 'www.example.com.evil.test' }, false],
    ["an IPv4 address (an operator's curl)", NAMED, { host: '127.0.0.1:4321' }, true],
    ['an IPv6 address', NAMED, { host: '[::1]:4321' }, true],
    ['localhost', NAMED, { host: 'localhost:4321' }, true],
    ['no Host', NAMED, {}, false],
    ['a malformed Host', NAMED, { host: 'www.example.com/x' }, false],
    ["the trusted proxy's forwarded host decides", NAMED, { host: '127.0.0.1', 'x-forwarded-host': 'evil.test' }, false],
    ['a forwarded host is ignored without a trusted proxy', { ...NAMED, trustProxy: 0 }, { host: 'www.example.com', 'x-forwarded-host': 'evil.test' }, true],
    ['an IPv6 PUBLIC_URL', { ...NAMED, publicUrl: 'https://[2001:db8::1]' }, { host: '[2001:db8::1]' }, true],
  ])('%s', (_, settings, headers, expected) => {
    expect(isAddressedToSite(new Headers(headers), settings)).toBe(expected);
  });
});
