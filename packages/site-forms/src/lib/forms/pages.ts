import type { FormDefinition } from './definition.ts';

/** A route of the site as Astro resolves it (the `astro:routes:resolved` hook): what it matches, what it is, whose it is. */
export type SiteRoute = { patternRegex: RegExp; type: string; origin: string };

/**
 * The owner's forms whose `page` no page of the site serves, one sentence each naming the form and
 * the page: the build stops on them (src/integration/integration.ts), since such a form's "start again" links
 * and its refused posts would lead to a 404.
 * Hint: a dynamic page (`[slug].astro`) counts for every path it matches, as Astro cannot say
 * which of them it builds before it builds them.
 */
export function missingFormPages(forms: readonly FormDefinition[], routes: readonly SiteRoute[]): string[] {
  const pages = routes.filter((route) => route.type === 'page' && route.origin === 'project');
  return forms
    .filter((form) => !pages.some((route) => route.patternRegex.test(form.page)))
    .map((form) => `form "${form.name}" names the page ${form.page}, and no page of src/pages is ${form.page}`);
}

/** The owner's pages, as the patterns of their routes' regular expressions (`virtual:site-forms/pages`). */
export function ownerPagePatterns(routes: readonly SiteRoute[]): string[] {
  return routes.filter((route) => route.type === 'page' && route.origin === 'project').map((route) => route.patternRegex.source);
}

/**
 * `path` when a page of the site serves it, else undefined: a link of ours leads only to a page that
 * exists (issue 39 item 4). `pages` is null when the routes are not known (a module loaded outside a
 * build): the path is then taken as it is.
 */
export function existingPage(path: string, pages: readonly string[] | null): string | undefined {
  if (pages === null) return path;
  const pathname = path.split(/[?#]/)[0]!;
  return pages.some((pattern) => new RegExp(pattern).test(pathname)) ? path : undefined;
}
