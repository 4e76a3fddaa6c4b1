import { describe, expect, test } from 'vitest';
import { findTarget, pathOf, type Route, type RouteHandler, routeTable } from '../../../packages/site-forms/src/lib/pipeline/routes.ts';

/** What `findTarget` makes of a request-target, as a word and the route's path. */
function where(rawTarget: string): string {
  const target = findTarget(rawTarget);
  return target.kind === 'route' ? `route ${target.route.path}` : target.kind;
}

describe('findTarget: only an exact path is a route', () => {
  test.each([
    ['/api/contact', 'route /api/contact'],
    ['/api/newsletter', 'route /api/newsletter'],
    ['/api/health', 'route /api/health'],
    ['/api/contact?utm=x', 'route /api/contact'],
    ['/api/contact#top', 'route /api/contact'],
    ['http://example.com/api/contact', 'route /api/contact'],
  ])('%s is %s', (rawTarget, expected) => {
    expect(where(rawTarget)).toBe(expected);
  });
});

describe('findTarget: a path a lenient router could take for a route is a near miss (a JSON 404)', () => {
  test.each([
    ['//api/contact'],
    ['/api//contact'],
    ['/%61pi/contact'],
    ['/api/%63ontact'],
    ['/%2561pi/contact'],
    ['/api/contact/'],
    ['/api/contact/.'],
    ['/api/contact/..'],
    ['/api/x/../contact'],
    ['/x/../api/contact'],
    ['/%20api/contact'],
    ['/api;x/contact'],
    ['/./api/contact'],
    ['/API/contact'],
    ['/api/Contact'],
    ['/api/contact;x=1'],
    ['/api\\contact'],
    ['/api/contact%20'],
    ['/api'],
    ['/api/'],
    ['/api/unknown'],
    ['/api/%E0%A4%A'],
    ['http://example.com//api/contact'],
  ])('%s', (rawTarget) => {
    expect(where(rawTarget)).toBe('near-miss');
  });
});

describe('findTarget: everything else is left to the pages', () => {
  test.each([
    ['/'],
    ['/contact'],
    ['/contact/'],
    ['/thank-you/contact/'],
    ['/apiary'],
    ['/apiary/contact'],
    ['/x/api/contact'],
    ['/favicon.ico'],
    ['*'],
    ['/%'],
    // Decoded three times at most: a fourth encoding is left as it is, and is no /api.
    ['/%25252561pi/contact'],
  ])('%s', (rawTarget) => {
    expect(where(rawTarget)).toBe('elsewhere');
  });
});

// The REST API's addresses hold values (`/api/v1/messages/{id}`, issue 42): a table of this
// test's own, since the suite's table has no templated route yet.
describe('findTarget: a templated route takes one segment per parameter', () => {
  const ok: RouteHandler = () => ({ kind: 'data', status: 200, body: { success: true } });
  const api = (path: string, extra: Partial<Route> = {}): Route => ({ path, kind: 'api', methods: { GET: ok }, ...extra });
  const table = routeTable([
    api('/api/contact'),
    api('/api/v1/messages/{id}'),
    api('/api/v1/messages/{id}/spam'),
    // An exact path wins over a pattern it also fits, wherever it stands in the table.
    api('/api/v1/messages/export'),
    api('/api/v1/forms/{form}/messages/{id}'),
    api('/api/v1/numbered/{n}', { params: { n: /^[0-9]+$/ } }),
  ]);
  /** The route's path and its parameters, or the kind of target. */
  const found = (rawTarget: string) => {
    const target = findTarget(rawTarget, table);
    return target.kind === 'route' ? [target.route.path, { ...target.params }] : target.kind;
  };

  test.each<[string, string, Record<string, string>]>([
    ['/api/v1/messages/12', '/api/v1/messages/{id}', { id: '12' }],
    ['/api/v1/messages/12?fields=all', '/api/v1/messages/{id}', { id: '12' }],
    ['http://example.com/api/v1/messages/12', '/api/v1/messages/{id}', { id: '12' }],
    ['/api/v1/messages/12/spam', '/api/v1/messages/{id}/spam', { id: '12' }],
    ['/api/v1/messages/export', '/api/v1/messages/export', {}],
    ['/api/v1/forms/contact/messages/7', '/api/v1/forms/{form}/messages/{id}', { form: 'contact', id: '7' }],
    ['/api/v1/numbered/42', '/api/v1/numbered/{n}', { n: '42' }],
    // Decoded once: a percent-encoded slash is part of the value, never a separator, and `%25` stays one `%`.
    ['/api/v1/messages/caf%C3%A9', '/api/v1/messages/{id}', { id: 'café' }],
    ['/api/v1/messages/a%2Fb', '/api/v1/messages/{id}', { id: 'a/b' }],
    ['/api/v1/messages/a%2Fb/spam', '/api/v1/messages/{id}/spam', { id: 'a/b' }],
    ['/api/v1/messages/%252F', '/api/v1/messages/{id}', { id: '%2F' }],
  ])('%s is %s with %o', (rawTarget, path, params) => {
    expect(found(rawTarget)).toEqual([path, params]);
  });

  test.each([
    ['/api/v1/messages/'],
    ['/api/v1/messages'],
    ['/api/v1//messages/12'],
    ['//api/v1/messages/12'],
    ['/api/v1/messages//12'],
    ['/api/v1/messages/12/'],
    ['/api/v1/messages/12/x'],
    ['/api/v1/messages/12/spam/'],
    ['/api/v1/forms//messages/7'],
    ['/api/v1/numbered/x'],
    ['/api/v1/numbered/%34%32x'],
    // Dot segments are what a lenient router resolves, never a value.
    ['/api/v1/messages/.'],
    ['/api/v1/messages/..'],
    ['/api/v1/messages/%2E%2E'],
    ['/api/v1/messages/%E0%A4%A'],
    ['/%61pi/v1/messages/12'],
    ['/API/v1/messages/12'],
    ['/api/V1/messages/12'],
    // No leading slash: not origin-form, whatever its segments.
    ['api/v1/messages/12'],
  ])('%s is a near miss', (rawTarget) => {
    expect(found(rawTarget)).toBe('near-miss');
  });

  test('an address outside the API is left to the pages, however it looks', () => {
    expect(found('/apiary/v1/messages/12')).toBe('elsewhere');
    expect(found('/v1/messages/12')).toBe('elsewhere');
  });

  test('the parameters are read-only, and an exact route has none', () => {
    const target = findTarget('/api/v1/messages/12', table);
    expect(target.kind === 'route' && Object.isFrozen(target.params)).toBe(true);
    const exact = findTarget('/api/contact', table);
    expect(exact.kind === 'route' && [exact.params, Object.isFrozen(exact.params)]).toEqual([{}, true]);
  });

  test.each([
    ['a parameter first', '/{tenant}/messages'],
    ['a parameter inside a segment', '/api/v1/messages/m{id}'],
    ['a parameter without a name', '/api/v1/messages/{}'],
    ['one name twice', '/api/v1/forms/{id}/messages/{id}'],
    ['a check of a parameter it does not have', '/api/v1/messages/{id}'],
  ])('a table with %s is refused', (_, path) => {
    const check = path === '/api/v1/messages/{id}' ? { params: { n: /^[0-9]+$/ } } : {};
    expect(() => routeTable([api(path, check)])).toThrow(/route/);
  });

  test('a check that keeps state between requests (the g or y flag) is refused', () => {
    expect(() => routeTable([api('/api/v1/numbered/{n}', { params: { n: /^[0-9]+$/g } })])).toThrow(/route/);
    expect(() => routeTable([api('/api/v1/numbered/{n}', { params: { n: /[0-9]+/y } })])).toThrow(/route/);
  });

  test('two patterns of the same shape are refused', () => {
    expect(() => routeTable([api('/api/v1/messages/{id}'), api('/api/v1/messages/{key}')])).toThrow(/route/);
  });

  test('a templated route answers JSON only (the admin’s posts and the forms’ pages keep exact paths)', () => {
    expect(() => routeTable([{ path: '/api/forms/{name}', kind: 'form', methods: { POST: ok } }])).toThrow(/route/);
    expect(() => routeTable([{ path: '/admin/actions/{name}', kind: 'admin', methods: {} }])).toThrow(/route/);
  });
});

describe('pathOf', () => {
  test.each([
    ['/api/contact?x=1', '/api/contact'],
    ['/a#b?c', '/a'],
    ['https://host:8080', '/'],
    ['https://host:8080/x?y', '/x'],
    ['HTTP://host/p', '/p'],
    ['//api/contact', '//api/contact'],
    ['*', '*'],
    // An address in the query is no absolute-form: only one at the start is.
    ['/api/contact?to=http://example.org/x', '/api/contact'],
  ])('the path of %s is %s', (rawTarget, path) => {
    expect(pathOf(rawTarget)).toBe(path);
  });
});
