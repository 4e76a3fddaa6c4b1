import { describe, expect, test } from 'vitest';
// Astro's own check, read here only, to hold our copy to it: the library imports nothing of Astro's private modules.
import { isForbiddenCrossOriginRequest } from '../../node_modules/astro/dist/core/app/origin-check.js';
import { crossSiteRefusal, isCrossSiteFormPost } from '../../packages/site-forms/src/integration/origin-check.ts';

// The integration turns Astro's `security.checkOrigin` off and makes the same check for the owner's
// routes (decisions 0190, 0229): a copy, as Astro exports it nowhere public (withastro/astro#14944).
// Each request below is put to both; an Astro whose check changes fails here, not in an owner's site.
const PAGE = new URL('https://www.baeckerei-korn.example/orders/new');
const METHODS = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE', 'PROPFIND'];
const ORIGINS = [undefined, PAGE.origin, 'https://evil.example', 'http://www.baeckerei-korn.example', 'null'];
const TYPES = [
  undefined,
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'text/plain;charset=UTF-8',
  'Application/X-WWW-Form-Urlencoded',
  'application/json',
  'application/xml',
];

const requests = METHODS.flatMap((method) =>
  ORIGINS.flatMap((origin) =>
    TYPES.map((type) => {
      const headers = new Headers();
      if (origin) headers.set('origin', origin);
      if (type) headers.set('content-type', type);
      return { name: `${method} from ${origin ?? 'no origin'} as ${type ?? 'no type'}`, request: new Request(PAGE, { method, headers }) };
    }),
  ),
);

describe('the owner’s routes keep Astro’s origin check, decided as Astro decides it', () => {
  test.each(requests)('$name', ({ request }) => {
    expect(isCrossSiteFormPost(request, PAGE)).toBe(isForbiddenCrossOriginRequest(request, PAGE, false));
  });

  test('both refuse a cross-site form post and take the same post from the page’s own origin', () => {
    const post = (origin: string) => new Request(PAGE, { method: 'POST', headers: { origin, 'content-type': 'application/x-www-form-urlencoded' } });
    expect([isCrossSiteFormPost(post('https://evil.example'), PAGE), isCrossSiteFormPost(post(PAGE.origin), PAGE)]).toEqual([true, false]);
  });

  test('the refusal is Astro’s own: 403, its words', async () => {
    const refusal = crossSiteRefusal(new Request(PAGE, { method: 'PATCH' }));
    expect(refusal.status).toBe(403);
    await expect(refusal.text()).resolves.toBe('Cross-site PATCH form submissions are forbidden');
  });
});
