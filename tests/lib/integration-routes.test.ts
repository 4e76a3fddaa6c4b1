import { describe, expect, test } from 'vitest';
import forms from '#forms-config';
import type { IntegrationResolvedRoute } from 'astro';
import { astroPattern, formRoutes, ourRoutes, ownersRoute } from '../../packages/site-forms/src/integration/integration.ts';
import { isOurs } from '../../packages/site-forms/src/integration/ours.ts';
import { defineForms } from '../../packages/site-forms/src/lib/forms/define-forms.ts';
import { findTarget, ROUTES } from '../../packages/site-forms/src/lib/pipeline/routes.ts';

// The integration injects one on-demand route per address of the API, from a list of its own
// (it is read before Vite can load the handlers): a route added to ROUTES and not to that list
// would be a 404 page in an owner's server, never reaching the middleware.
describe('the routes the integration injects', () => {
  test('are exactly the addresses of ROUTES but the admin’s actions (which /admin/[...rest] takes)', () => {
    // A route whose path ends in a slash takes one id after it (a file's signed link): Astro's `[id]`;
    // a templated route's `{id}` is Astro's `[id]` too.
    const api = ROUTES.filter((route) => route.kind !== 'admin').map((route) => (route.path.endsWith('/') ? `${route.path}[id]` : astroPattern(route.path)));
    expect([...formRoutes(forms)].sort()).toEqual([...api].sort());
  });

  test.each([
    ['/api/v1/messages/{id}', '/api/v1/messages/[id]'],
    ['/api/v1/messages/{id}/spam', '/api/v1/messages/[id]/spam'],
    ['/api/v1/forms/{form}/messages/{id}', '/api/v1/forms/[form]/messages/[id]'],
    ['/api/contact', '/api/contact'],
  ])('a templated route %s is injected as Astro’s %s', (path, pattern) => {
    expect(astroPattern(path)).toBe(pattern);
  });

  test('an owner’s form gets its own address', () => {
    const booking = defineForms({
      forms: [
        {
          name: 'booking',
          title: 'Book a table',
          submitLabel: 'Book',
          busyLabel: 'Booking...',
          thanks: 'Booked.',
          fields: [{ name: 'name', type: 'text', label: 'Name' }],
        },
      ],
    });
    expect(formRoutes(booking).filter((path) => path.startsWith('/api/forms/'))).toEqual(['/api/forms/booking']);
  });
});

// In an owner's server the middleware answers what Astro's router took to a route we injected,
// and a near miss under /api that no route claims; every route of the owner's is theirs,
// whatever its path (issue 39 items 11 and 13, decision 0190).
describe('which requests are ours in an owner’s server', () => {
  const ours = new Set(ourRoutes(forms));
  test.each([
    // [the route Astro chose, the request-target as sent, ours?]
    ['/admin/[...rest]', '/admin/actions/sign-in', true],
    ['/admin/orders', '/admin/orders', false],
    ['/thank-you/[form]', '/thank-you/callback', true],
    ['/thank-you/transfer', '/thank-you/transfer', false],
    ['/newsletter/confirm', '/newsletter/confirm?token=x', true],
    ['/api/search', '/api/search?q=kaffee', false],
    ['/api/contact', '/api/contact', true],
    ['/api/contact', '/%61pi/contact', true],
    ['/404', '/api/nothing', true],
    ['/404', '/api/forms/nothing', true],
    ['/404', '/no-such-page', false],
    ['/[slug]', '/api-docs', false],
  ])('Astro’s route %s for %s: ours is %s', (routePattern, target, expected) => {
    expect(isOurs(routePattern, findTarget(target), ours)).toBe(expected);
  });

  test('every page and address the integration injects is ours, the owner’s form’s too', () => {
    const withBooking = new Set(
      ourRoutes(
        defineForms({
          forms: [
            { name: 'booking', title: 'Book', submitLabel: 'Book', busyLabel: '…', thanks: 'Booked.', fields: [{ name: 'name', type: 'text', label: 'Name' }] },
          ],
        }),
      ),
    );
    for (const pattern of ['/theme.css', '/admin', '/admin/messages/[id]', '/thank-you/[form]', '/api/health', '/api/files/[id]', '/api/forms/booking'])
      expect([pattern, isOurs(pattern, findTarget(pattern), withBooking)]).toEqual([pattern, true]);
  });
});

// Under `astro dev` the dispatcher hands on what Astro's router takes to the owner's own route:
// the first route that matches, in Astro's order of priority (decision 0190).
describe('a route of the owner’s under astro dev', () => {
  const route = (pattern: string, patternRegex: RegExp, origin: 'project' | 'external' | 'internal') =>
    ({ pattern, patternRegex, origin }) as IntegrationResolvedRoute;
  const routes = [
    route('/admin/orders', /^\/admin\/orders\/?$/, 'project'),
    route('/api/contact', /^\/api\/contact\/?$/, 'external'),
    route('/api/[name]', /^\/api\/([^/]+?)\/?$/, 'project'),
    route('/admin/[...rest]', /^\/admin(?:\/(.*?))?\/?$/, 'external'),
    route('/404', /^\/404\/?$/, 'internal'),
  ];
  test.each([
    ['/admin/orders', true],
    ['/admin/actions/sign-in', false],
    ['/api/contact', false],
    ['/api/search', true],
    ['/api/forms/nothing', false],
  ])('%s: the owner’s is %s', (pathname, expected) => {
    expect(ownersRoute(routes, pathname)).toBe(expected);
  });
});
