/**
 * Where the links of our pages lead in the site they are in (issue 39 item 4): only to pages that
 * exist there. The owner's pages are the integration's `virtual:site-forms/pages`.
 */
import pages from 'virtual:site-forms/pages';
import { existingPage } from '../lib/forms/pages.ts';
import { refererPage } from '../lib/http/next.ts';

/** `path` when the site has a page there, else undefined (the link is left out). */
export function linkIfPage(path: string): string | undefined {
  return existingPage(path, pages);
}

/** What a page rendered for a request knows of it; a page built ahead has no request to read. */
type Rendered = { request: Request; url: URL; isPrerendered: boolean };

/**
 * The page a form was on, to go back to: the visitor's `Referer` when it is one of the owner's pages
 * (rendered on demand only), else `fallback` when the site has that page, else undefined.
 */
export function formPageOf(astro: Rendered, fallback: string): string | undefined {
  const came = astro.isPrerendered ? undefined : refererPage(astro.request.headers.get('referer'), astro.url.origin);
  return came ?? linkIfPage(fallback);
}
