import { describe, expect, test } from 'vitest';
import { type ContentReason, contentReasons, countLinks, tooFast } from '../../../packages/site-forms/src/lib/spam/content.ts';

const PLAIN = 'Hello, I would like to ask about your opening hours next week.';

describe('links in a message', () => {
  test.each<[string, number]>([
    [PLAIN, 0],
    ['See https://example.com', 1],
    ['See http://a.example and www.b.example/page', 2],
    ['https://a.test https://b.test HTTPS://c.test', 3],
    ['[url=https://pills.test]pills[/url]', 1],
    ['<a href="https://a.test">a</a>', 1],
    ['an email me@example.com is no link', 0],
    ['a sentence.with no space is no link', 0],
  ])('%j holds %d', (text, links) => {
    expect(countLinks(text)).toBe(links);
  });

  test.each<[string, number, ContentReason[]]>([
    ['two links with the default', 2, []],
    ['three links with the default', 3, ['too-many-links']],
    ['one link when none are allowed', 1, []],
  ])('%s', (_, links, reasons) => {
    const message = Array.from({ length: links }, (__, i) => `https://site${i}.test/`).join(' ');
    expect(contentReasons({ name: 'Ada Lovelace', message }, links === 1 ? 1 : undefined)).toEqual(reasons);
  });

  test('no link is allowed with SPAM_MAX_LINKS=0', () => {
    expect(contentReasons({ name: 'Ada', message: 'see www.example.com' }, 0)).toEqual(['too-many-links']);
  });
});

describe('names and markup', () => {
  test.each<[string, ContentReason[]]>([
    ['Ada Lovelace', []],
    ['J.R.R. Tolkien', []],
    ['St. John', []],
    ['Mr.Smith', []],
    ["Siobhán O'Brien-Ní Dhomhnaill", []],
    ['Zoë 2.0', []],
    ['https://pills.test', ['link-in-name']],
    ['Visit www.pills.test', ['link-in-name']],
    ['cheap-pills.shop', ['link-in-name']],
    ['Best deals at casino.online now', ['link-in-name']],
    // A domain in capitals is a domain: the link check ignores case (issue 28, item 7).
    ['Prize Desk WIN-BIG.COM', ['link-in-name']],
    ['CHEAP-PILLS.SHOP', ['link-in-name']],
    ['Visit Casino.Online', ['link-in-name']],
    ['WWW.PILLS.TEST', ['link-in-name']],
    ['HTTPS://PILLS.TEST', ['link-in-name']],
    ['J.R.R. TOLKIEN', []],
    ['ST. JOHN', []],
  ])('the name %j gives %j', (name, reasons) => {
    expect(contentReasons({ name, message: PLAIN })).toEqual(reasons);
  });

  test.each<[string, ContentReason[]]>([
    ['<a href="https://x.test">cheap</a>', ['link-markup']],
    ['<A HREF=https://x.test>cheap</A>', ['link-markup']],
    ['[url=https://x.test]cheap[/url]', ['link-markup']],
    ['[URL]https://x.test[/URL]', ['link-markup']],
    ['[link=https://x.test]cheap[/link]', ['link-markup']],
    ['I use <a> tags and [brackets] in my notes', []],
  ])('the message %j gives %j', (message, reasons) => {
    expect(contentReasons({ name: 'Ada', message })).toEqual(reasons);
  });

  test('every reason is given at once, in a fixed order', () => {
    const message = '<a href="https://a.test">a</a> https://b.test https://c.test';
    expect(contentReasons({ name: 'www.spam.test', message })).toEqual(['too-many-links', 'link-in-name', 'link-markup']);
  });
});

describe('time to submit', () => {
  test.each([
    [0, true],
    [2_999, true],
    [3_000, false],
    [60_000, false],
  ])('a form sent %d ms after its challenge is too fast: %s', (elapsed, fast) => {
    expect(tooFast(1_000_000, 1_000_000 + elapsed)).toBe(fast);
  });
});
