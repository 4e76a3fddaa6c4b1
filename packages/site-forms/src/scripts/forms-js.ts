/**
 * The entry of /forms.js (decision 0168): finds this server's origin from the script's own `src`
 * and enhances the page's forms that post here (src/scripts/forms-anywhere.ts).
 * Hint: `document.currentScript` is only set while a classic script runs, so it is read first;
 * `SITE_WORDS` is put in by scripts/build-server.mjs from the site's language catalogue.
 */
import { enhanceForeignForms, type SiteWords } from './forms-anywhere.ts';

declare const SITE_WORDS: SiteWords;

const source = (document.currentScript as HTMLScriptElement | null)?.src;
const server = new URL(source || location.href).origin;
const run = () => enhanceForeignForms(document, server, SITE_WORDS);
// With `defer` the page is parsed already; a script tag without it waits for the forms below it.
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run, { once: true });
else run();
