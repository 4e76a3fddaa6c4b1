import { describe, expect, test } from 'vitest';
import { isDocumentNavigation } from '../../packages/site-forms/src/lib/http/navigation.ts';

const request = (headers: Record<string, string>) => new Request('http://site.test/api/contact', { method: 'POST', headers });

// What Chromium sends for a native form post, and what it sends for the script's fetch.
const CHROMIUM_FORM_POST = {
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
  'sec-fetch-dest': 'document',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-site': 'same-origin',
  'sec-fetch-user': '?1',
};
const CHROMIUM_SCRIPT_FETCH = { accept: 'application/json', 'sec-fetch-dest': 'empty', 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'same-origin' };

describe('isDocumentNavigation', () => {
  test.each<[string, Record<string, string>, boolean]>([
    ['a browser posting the form itself', CHROMIUM_FORM_POST, true],
    ['a form posted inside a frame (dest iframe, mode navigate)', { 'sec-fetch-dest': 'iframe', 'sec-fetch-mode': 'navigate' }, true],
    ['only Sec-Fetch-Dest: document', { 'sec-fetch-dest': 'document' }, true],
    ['only Sec-Fetch-Mode: navigate, in capitals', { 'sec-fetch-mode': 'NAVIGATE' }, true],
    ['the form script’s fetch', CHROMIUM_SCRIPT_FETCH, false],
    ['a fetch that asks for HTML: fetch metadata wins over Accept', { ...CHROMIUM_SCRIPT_FETCH, accept: 'text/html' }, false],
    ['only Sec-Fetch-Site, from a fetch', { 'sec-fetch-site': 'same-origin', accept: 'text/html' }, false],
    ['an older browser’s form post: HTML preferred, no fetch metadata', { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }, true],
    ['HTML preferred through a wildcard of its type', { accept: 'text/*, application/json;q=0.5' }, true],
    ['no headers at all (curl without -H, tests)', {}, false],
    ['curl’s default Accept: */*', { accept: '*/*' }, false],
    ['JSON asked for explicitly', { accept: 'application/json' }, false],
    ['JSON preferred over HTML', { accept: 'text/html;q=0.5, application/json' }, false],
    ['HTML and JSON equally', { accept: 'text/html, application/json' }, false],
    ['HTML refused with q=0 by a more specific range', { accept: '*/*, text/html;q=0' }, false],
    ['a malformed quality counts as 0', { accept: 'text/html;q=abc' }, false],
    ['only Sec-Fetch-Dest of a fetch, HTML preferred', { 'sec-fetch-dest': 'empty', accept: 'text/html' }, false],
    ['only Sec-Fetch-Mode of a fetch, HTML preferred', { 'sec-fetch-mode': 'cors', accept: 'text/html' }, false],
    ['only Sec-Fetch-User, HTML preferred', { 'sec-fetch-user': '?1', accept: 'text/html' }, false],
    ['HTML at q=0.5 and JSON not mentioned', { accept: 'text/html;q=0.5, image/png' }, true],
    ['HTML at q=0.5 over JSON at q=0.4', { accept: 'text/html;q=0.5, application/json;q=0.4' }, true],
    ['JSON through the full wildcard at a higher quality than HTML', { accept: 'text/html;q=0.5, */*;q=0.9' }, false],
    ['HTML twice: the first of equally specific ranges counts', { accept: 'text/html;q=0.9, text/html;q=0.1, application/json;q=0.5' }, true],
    ['a quality after another parameter', { accept: 'text/html;level=1;q=0.8, application/json;q=0.5' }, true],
  ])('%s → %s', (_, headers, expected) => {
    expect(isDocumentNavigation(request(headers))).toBe(expected);
  });
});
