/**
 * `site-forms/config` as the owner's site.config.ts gets it under Vite: `defineSite` alone.
 * Hint: the forms' definitions read the site's language (src/lib/i18n/texts.ts reads
 * site.config.ts), so a site.config.ts that loaded them too would wait on itself.
 */
export { defineSite } from '../lib/site/define-site.ts';
