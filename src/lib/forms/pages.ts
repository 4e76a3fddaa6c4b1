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
