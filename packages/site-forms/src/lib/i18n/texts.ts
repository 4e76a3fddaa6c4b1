import settings from '#site-config';
import { catalogueFor } from './catalogues.ts';

/**
 * The texts of the site's language (`language` in site.config.ts): what every page, form,
 * refusal and visitor's mail reads (decision 0134).
 * Hint: the language is a build setting, read through `#site-config` like the site's name, so the
 * pages Astro builds and the server bundle read the same catalogue.
 */
export const texts = catalogueFor(settings.language);

/** The site's language (`language` in site.config.ts), for what is written in its own way (numbers, sizes). */
export const language = settings.language;
