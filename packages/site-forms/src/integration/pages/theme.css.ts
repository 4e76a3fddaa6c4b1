/**
 * /theme.css: the colours of site.config.ts, written once at build time (the layout links it
 * only when the owner set any). A file of the site's own, so the pages' CSP ('self') allows it.
 */
import { themeStylesheet } from '../../lib/site/define-site.ts';
import { site } from '../../lib/site/site.ts';

export const prerender = true;

export function GET(): Response {
  return new Response(themeStylesheet(site.theme), { headers: { 'Content-Type': 'text/css; charset=utf-8' } });
}
