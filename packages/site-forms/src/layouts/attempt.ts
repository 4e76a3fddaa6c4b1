/**
 * What src/layouts/LayoutAttempt.astro needs beyond a render: the one warning a layout gets, and the
 * order of a page rendered into a string (issue 39 item 3, decision 0196).
 */
import { describeError, type Logger } from '../lib/log.ts';

/** The layouts already warned of in this process: one warning each, however many pages fall back. */
const warned = new Set<string>();

/** Logs once that the owner's `layout` could not render one of our pages, with its error (no stack). */
export function warnLayoutOnce(layout: string, error: unknown, logger: Logger | undefined): void {
  if (warned.has(layout)) return;
  warned.add(layout);
  const fields = { layout, error: describeError(error), fallback: 'the plain layout of site-forms' };
  if (logger) logger.warn('layout.failed', fields);
  else console.warn(`site-forms: layout.failed ${JSON.stringify(fields)}`);
}

/**
 * A page rendered into a string has the head content Astro adds (the stylesheets' links) before its
 * `<html>`: it goes back to the end of its `<head>`. A page without both is left as it is.
 */
export function headInPlace(page: string): string {
  const start = page.search(/<html[\s>]/i);
  if (start <= 0) return page;
  const rest = page.slice(start);
  const close = rest.search(/<\/head\s*>/i);
  if (close === -1) return page;
  return `${rest.slice(0, close)}${page.slice(0, start)}${rest.slice(close)}`;
}
