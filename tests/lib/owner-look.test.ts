import { describe, expect, test } from 'vitest';
import { existingPage } from '../../packages/site-forms/src/lib/forms/pages.ts';
import { refererPage } from '../../packages/site-forms/src/lib/http/next.ts';
import { inlineSources, withInlineSources } from '../../packages/site-forms/src/lib/http/security-headers.ts';
import { layoutWarning, requiredPropsWeDoNotPass } from '../../packages/site-forms/src/integration/integration.ts';
import { headInPlace } from '../../packages/site-forms/src/layouts/attempt.ts';

/**
 * The pure parts of issue 39's items 3 to 5: the page a visitor came from, the owner's pages, the
 * hashes of a layout's inline blocks, the props a layout needs, the head of a page rendered into a string.
 * The Chromium proof on an owner's site is tests/e2e/foreign-site-owner-look.test.ts.
 */

describe('refererPage: the owner’s page a visitor came from', () => {
  const origin = 'https://shop.example';
  test.each([
    ['the about page', 'https://shop.example/ueber-uns', '/ueber-uns'],
    ['with its query', 'https://shop.example/blog/post?x=1', '/blog/post?x=1'],
    ['the home page', 'https://shop.example/', '/'],
    // A page reached at `//evil.example/` (Astro routes it as `/evil.example/`) never links off-site.
    ['a path that starts with two slashes, as one', 'https://shop.example//evil.example/x', '/evil.example/x'],
    ['a path that starts with a backslash and a slash, as one', 'https://shop.example/\\/evil.example/', '/evil.example/'],
  ])('%s is taken', (_, referer, page) => expect(refererPage(referer, origin)).toBe(page));

  test.each([
    ['no Referer', undefined],
    ['another origin', 'https://evil.example/ueber-uns'],
    ['another port', 'https://shop.example:8443/ueber-uns'],
    ['our API', 'https://shop.example/api/contact?draft=abc'],
    ['our thank-you page', 'https://shop.example/thank-you/contact/'],
    ['the admin', 'https://shop.example/admin/messages'],
    ['the newsletter’s confirm page', 'https://shop.example/newsletter/confirm?token=x'],
    ['not an address', 'nonsense'],
  ])('%s is not', (_, referer) => expect(refererPage(referer, origin)).toBeUndefined());

  test('an owner’s page whose name begins like ours is theirs', () => {
    expect(refererPage('https://shop.example/administration', origin)).toBe('/administration');
    expect(refererPage('https://shop.example/apiary', origin)).toBe('/apiary');
  });
});

describe('existingPage: a link only to a page of the site', () => {
  const pages = ['^\\/$', '^\\/ueber-uns\\/?$', '^\\/blog\\/([^/]+?)\\/?$'];
  test('a page the routes match is kept, with its query', () => {
    expect(existingPage('/ueber-uns', pages)).toBe('/ueber-uns');
    expect(existingPage('/blog/first?x=1', pages)).toBe('/blog/first?x=1');
  });
  test('a page no route matches is left out', () => expect(existingPage('/contact', pages)).toBeUndefined());
  test('routes not known (outside a build): the path as it is', () => expect(existingPage('/contact', null)).toBe('/contact'));
});

describe('inlineSources: the hashes of a layout’s inline blocks', () => {
  test('each <style> and each <script> without src, hashed as written, once', () => {
    const html =
      '<html><head><style>:root{--font-x:"X"}</style><style>:root{--font-x:"X"}</style>' +
      '<script type="module" src="/_astro/a.js"></script><script>document.documentElement.dataset.theme="dark"</script></head></html>';
    // echo -n ':root{--font-x:"X"}' | openssl dgst -sha256 -binary | base64
    expect(inlineSources(html)).toEqual({
      styles: ["'sha256-O40O/KrofACDXqiWaR2RIE+v+C11piaaaxU5WIyM15Q='"],
      scripts: ["'sha256-zTSXYZ/r74pY7Te+wyYtgDRsO/hpzo1oFZH8wmJQwSA='"],
    });
  });
  test('a page without inline blocks needs nothing', () => expect(inlineSources('<p>Danke</p>')).toEqual({ styles: [], scripts: [] }));
});

describe('withInlineSources: the policy of one page', () => {
  const policy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:";
  test('the hashes join style-src and script-src, and nothing else changes', () => {
    expect(withInlineSources(policy, { styles: ["'sha256-a'"], scripts: ["'sha256-b'", "'sha256-c'"] })).toBe(
      "default-src 'self'; script-src 'self' 'sha256-b' 'sha256-c'; style-src 'self' 'sha256-a'; img-src 'self' data:",
    );
  });
  test('no hashes: the policy as it was', () => expect(withInlineSources(policy, { styles: [], scripts: [] })).toBe(policy));
});

describe('requiredPropsWeDoNotPass: what the build warns of', () => {
  test('Astro’s blog post layout: pubDate', () => {
    const layout =
      '---\ninterface Props {\n  title: string;\n  description?: string;\n  pubDate: Date;\n  updatedDate?: Date;\n}\nconst { pubDate } = Astro.props;\n---\n<html></html>\n';
    expect(requiredPropsWeDoNotPass(layout)).toEqual(['pubDate']);
    expect(layoutWarning('./src/layouts/Post.astro', ['pubDate'])).toMatch(/^the layout \.\/src\/layouts\/Post\.astro needs pubDate, /);
  });
  test('a type alias with readonly props', () => {
    expect(requiredPropsWeDoNotPass('---\ntype Props = {\n  readonly title: string;\n  readonly hero: string;\n};\n---\n')).toEqual(['hero']);
  });
  test.each([
    ['only what we pass', '---\ninterface Props {\n  title: string;\n  description: string;\n  path?: string;\n}\n---\n'],
    ['Props from elsewhere', "---\ntype Props = CollectionEntry<'blog'>['data'];\n---\n"],
    ['no Props', '---\nconst x = 1;\n---\n<slot />'],
  ])('%s: nothing to say', (_, layout) => expect(requiredPropsWeDoNotPass(layout)).toEqual([]));
});

describe('headInPlace: a layout rendered into a string', () => {
  test('the head content Astro put before <html> goes to the end of the <head>', () => {
    expect(headInPlace('<link rel="stylesheet" href="/_astro/a.css"><html lang="de"><head><title>T</title></head><body>B</body></html>')).toBe(
      '<html lang="de"><head><title>T</title><link rel="stylesheet" href="/_astro/a.css"></head><body>B</body></html>',
    );
  });
  test('a page that begins with its <html> stays as it is', () => {
    const page = '<html><head></head><body></body></html>';
    expect(headInPlace(page)).toBe(page);
  });
});
