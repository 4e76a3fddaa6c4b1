import { describe, expect, test } from 'vitest';
import { backLink, homeLink, isHeadless, nextAddress, pageOfPost } from '../../../packages/site-forms/src/lib/http/next.ts';

/** The forms server at forms.example.com, the owner's static site at www.example.org. */
const SETTINGS = { publicUrl: 'https://forms.example.com', allowedOrigins: ['https://www.example.org', 'http://127.0.0.1:8080'] };

describe('where a person goes after a post: `_next`', () => {
  test.each([
    ['a page of an allowed origin', 'https://www.example.org/thanks/', 'https://www.example.org/thanks/'],
    ['with a query and a fragment', 'https://www.example.org/thanks?from=contact#top', 'https://www.example.org/thanks?from=contact#top'],
    ['an allowed origin with its port', 'http://127.0.0.1:8080/done.html', 'http://127.0.0.1:8080/done.html'],
    ['a page of this site (PUBLIC_URL)', 'https://forms.example.com/thank-you/contact', 'https://forms.example.com/thank-you/contact'],
    ['the host in capitals, normalised', 'https://WWW.EXAMPLE.ORG/thanks', 'https://www.example.org/thanks'],
  ])('%s is followed', (_, value, expected) => {
    expect(nextAddress(value, SETTINGS)).toBe(expected);
  });

  test.each([
    ['another site', 'https://evil.test/'],
    ['a scheme-relative address', '//evil.test'],
    ['a scheme-relative address of an allowed host', '//www.example.org/thanks'],
    ['a path', '/thanks'],
    ['javascript:', 'javascript:alert(1)'],
    ['JavaScript: in capitals, with spaces', ' JavaScript:alert(1)'],
    ['data:', 'data:text/html,<script>alert(1)</script>'],
    ['an allowed name as the start of another host', 'https://forms.example.com.evil.test/'],
    ['an allowed name as the start of another host, allowed origin', 'https://www.example.org.evil.test/thanks'],
    ['userinfo that names the allowed host', 'https://www.example.org@evil.test/'],
    ['userinfo on the allowed host itself', 'https://user:secret@www.example.org/thanks'],
    ['a backslash trick', 'https://www.example.org\\@evil.test/'],
    ['backslashes for slashes', 'https:\\\\evil.test/'],
    ['the allowed host over another scheme', 'http://www.example.org/thanks'],
    ['the allowed host on another port', 'https://www.example.org:8443/thanks'],
    ['a line break inside', 'https://www.example.org/\r\nLocation: https://evil.test/'],
    ['a tab inside the scheme', 'ht\ttps://www.example.org/'],
    ['ftp of an allowed host', 'ftp://www.example.org/'],
    ['empty', ''],
    ['an address past 2,000 characters', `https://www.example.org/${'a'.repeat(2000)}`],
  ])('%s is ignored', (_, value) => {
    expect(nextAddress(value, SETTINGS)).toBeUndefined();
  });

  test('a file or a missing field is ignored', () => {
    expect(nextAddress(undefined, SETTINGS)).toBeUndefined();
    expect(nextAddress(new File(['https://www.example.org/'], 'next.txt'), SETTINGS)).toBeUndefined();
  });

  test('without PUBLIC_URL, this site counts only as ALLOWED_ORIGINS lists it: never read from Host', () => {
    expect(nextAddress('https://forms.example.com/thank-you/contact', { publicUrl: undefined, allowedOrigins: [] })).toBeUndefined();
    expect(nextAddress('https://www.example.org/thanks', { publicUrl: undefined, allowedOrigins: ['https://www.example.org'] })).toBe(
      'https://www.example.org/thanks',
    );
  });
});

describe('the link back to the owner’s page on a refusal', () => {
  test('the Referer when it is on an allowed origin', () => {
    expect(backLink({ referer: 'https://www.example.org/contact/', next: 'https://www.example.org/thanks' }, SETTINGS)).toBe(
      'https://www.example.org/contact/',
    );
  });

  test('the home of `_next`’s origin when the Referer is this site’s own (a second try from the refusal page)', () => {
    expect(backLink({ referer: 'https://forms.example.com/api/contact?draft=x', next: 'https://www.example.org/thanks' }, SETTINGS)).toBe(
      'https://www.example.org/',
    );
  });

  test('none for a post from this site’s own pages without `_next`', () => {
    expect(backLink({ referer: 'https://forms.example.com/contact', next: undefined }, SETTINGS)).toBeUndefined();
    expect(backLink({ referer: undefined, next: undefined }, SETTINGS)).toBeUndefined();
  });

  test('never another site named by the Referer', () => {
    expect(backLink({ referer: 'https://evil.test/', next: undefined }, SETTINGS)).toBeUndefined();
    expect(backLink({ referer: 'javascript:alert(1)', next: undefined }, SETTINGS)).toBeUndefined();
  });
});

describe('the page a post came from (issue 39 item 9b)', () => {
  test.each([
    [
      'the Referer on an allowed origin',
      { referer: 'https://www.example.org/contact/', origin: 'https://www.example.org' },
      'https://www.example.org/contact/',
    ],
    ['the Origin’s home when the browser sent no Referer', { referer: undefined, origin: 'https://www.example.org' }, 'https://www.example.org/'],
    [
      'the Origin’s home when the Referer is this site’s',
      { referer: 'https://forms.example.com/contact', origin: 'http://127.0.0.1:8080' },
      'http://127.0.0.1:8080/',
    ],
    ['none from this site’s own pages', { referer: 'https://forms.example.com/contact', origin: 'https://forms.example.com' }, undefined],
    ['none from another site', { referer: 'https://evil.test/page', origin: 'https://evil.test' }, undefined],
    ['none for `Origin: null`', { referer: undefined, origin: 'null' }, undefined],
  ])('%s', (_, came, expected) => {
    expect(pageOfPost(came, SETTINGS)).toBe(expected);
  });

  test('a refusal’s link back takes the Origin before `_next`’s home', () => {
    expect(backLink({ referer: undefined, origin: 'http://127.0.0.1:8080', next: 'https://www.example.org/thanks' }, SETTINGS)).toBe('http://127.0.0.1:8080/');
  });
});

describe('a headless server’s way back (issue 39 items 9b and 9d, decision 0211)', () => {
  test('a server is headless when ALLOWED_ORIGINS names the owner’s site', () => {
    expect(isHeadless(SETTINGS)).toBe(true);
    expect(isHeadless({ allowedOrigins: [] })).toBe(false);
  });

  test.each([
    ['`back` on an allowed origin', 'http://127.0.0.1:8080/news/', 'http://127.0.0.1:8080/news/'],
    ['no `back`: the first allowed origin’s home', null, 'https://www.example.org/'],
    ['`back` on another site: the first allowed origin’s home', 'https://evil.test/', 'https://www.example.org/'],
    ['`back` on this site’s own origin is no way back to the owner’s', 'https://forms.example.com/', 'https://www.example.org/'],
    ['`back` that is no address', 'javascript:alert(1)', 'https://www.example.org/'],
  ])('%s', (_, back, expected) => {
    expect(homeLink(back, SETTINGS)).toBe(expected);
  });

  test('none for a server that is not headless: its own home is the way back', () => {
    expect(homeLink('https://www.example.org/news/', { allowedOrigins: [] })).toBeUndefined();
  });
});
