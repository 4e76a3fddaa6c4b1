import { describe, expect, test } from 'vitest';
import { contentSecurityPolicy, securityHeaders, securityHeadersFor, TURNSTILE_SOURCES } from '../../packages/site-forms/src/lib/http/security-headers.ts';

const STRICT =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'none'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

describe('the Content-Security-Policy', () => {
  test.each([
    ['by default: only the site itself, nothing framed, framing no one', {}, STRICT],
    [
      'with Turnstile: its script and its frame, nothing else',
      { extraSources: [TURNSTILE_SOURCES] },
      "default-src 'self'; script-src 'self' https://challenges.cloudflare.com; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src https://challenges.cloudflare.com; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
    ],
    [
      'with a contact endpoint elsewhere: the script may connect to it',
      { extraSources: [{ connect: ['https://forms.example.com'] }] },
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' https://forms.example.com; frame-src 'none'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
    ],
    [
      'a source named twice is written once',
      { extraSources: [TURNSTILE_SOURCES, TURNSTILE_SOURCES] },
      "default-src 'self'; script-src 'self' https://challenges.cloudflare.com; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src https://challenges.cloudflare.com; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
    ],
    [
      'under astro dev: Vite inline code and its HMR socket',
      { development: true },
      "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self' ws: wss:; frame-src 'none'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
    ],
  ])('%s', (_, settings, expected) => {
    expect(contentSecurityPolicy(settings)).toBe(expected);
  });
});

describe('the security headers of every answer', () => {
  test.each([
    ['without PUBLIC_URL: no HSTS', undefined, undefined],
    ['PUBLIC_URL over http: no HSTS (it would lock visitors out)', 'http://intranet.example', undefined],
    ['PUBLIC_URL over https: HSTS for a year', 'https://www.example.com', 'max-age=31536000'],
  ])('%s', (_, publicUrl, hsts) => {
    const expected: Record<string, string> = {
      'x-content-type-options': 'nosniff',
      'content-security-policy': STRICT,
      'x-frame-options': 'DENY',
      'referrer-policy': 'strict-origin-when-cross-origin',
    };
    if (hsts) expected['strict-transport-security'] = hsts;
    expect(securityHeaders({ publicUrl })).toEqual(expected);
  });

  test.each([
    ['no contact endpoint elsewhere', undefined, "connect-src 'self';"],
    ['a contact endpoint elsewhere', 'https://forms.example.com', "connect-src 'self' https://forms.example.com;"],
  ])('from the configuration: %s', (_, contactEndpointOrigin, connect) => {
    const headers = securityHeadersFor({ publicUrl: 'https://www.example.com', contactEndpointOrigin });
    expect(headers['content-security-policy']).toContain(connect);
    expect(headers['strict-transport-security']).toBe('max-age=31536000');
  });

  // Decision 0167: a refused post's page on this server carries `_next`, and its corrected post is
  // answered with a redirect to the owner's site, which `form-action` must let the browser follow.
  test.each([
    ['no allowed origins: the site only', [], "form-action 'self';"],
    [
      'the allowed origins: a redirect after a post may go there',
      ['https://www.example.org', 'http://127.0.0.1:8080'],
      "form-action 'self' https://www.example.org http://127.0.0.1:8080;",
    ],
  ])('from the configuration: %s', (_, allowedOrigins, formAction) => {
    const headers = securityHeadersFor({ publicUrl: 'https://forms.example.com', contactEndpointOrigin: undefined, allowedOrigins });
    expect(headers['content-security-policy']).toContain(formAction);
  });

  test('from the configuration under astro dev: the relaxed policy', () => {
    const headers = securityHeadersFor({ publicUrl: undefined, contactEndpointOrigin: undefined }, { development: true });
    expect(headers['content-security-policy']).toContain("script-src 'self' 'unsafe-inline';");
  });
});

describe('Cloudflare Turnstile in the policy (issue 13)', () => {
  const turnstile = { siteKey: '1x00000000000000000000AA', secretKey: 's', baseUrl: 'https://challenges.cloudflare.com' };
  test.each([
    [
      'configured with the filter on',
      { enabled: true, turnstile },
      "script-src 'self' https://challenges.cloudflare.com;",
      'frame-src https://challenges.cloudflare.com;',
    ],
    ['configured with the filter off', { enabled: false, turnstile }, "script-src 'self';", "frame-src 'none';"],
    ['not configured', { enabled: true, turnstile: undefined }, "script-src 'self';", "frame-src 'none';"],
  ])('%s', (_, spam, script, frame) => {
    const policy = securityHeadersFor({ publicUrl: undefined, contactEndpointOrigin: undefined, spam })['content-security-policy'];
    expect(policy).toContain(script);
    expect(policy).toContain(frame);
  });
});
