import { describe, expect, test } from 'vitest';
import { findTarget, pathOf } from '../../../packages/site-forms/src/lib/pipeline/routes.ts';

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
