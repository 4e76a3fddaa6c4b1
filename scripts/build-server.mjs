// Bundles the package's server entry (`site-forms/server`, the library's compiled
// dist/server/start.js and the lib it uses) with the owner's settings into one file,
// dist/server/start.mjs, run by `npm run serve`: one module graph to load, not hundreds
// (docs/performance.md).
import { registerHooks } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

// The owner's settings, as the integration reads them (src/integration/integration.ts): the files
// SITE_CONFIG and FORMS_CONFIG name, or site.config.ts and forms.config.ts.
const SITE_FILE = resolve(process.env.SITE_CONFIG || 'site.config.ts');
const FORMS_FILE = resolve(process.env.FORMS_CONFIG || 'forms.config.ts');
const CONFIG_ENTRY = fileURLToPath(import.meta.resolve('site-forms/config'));
// The site's settings get `defineSite` alone from `site-forms/config`, as under Vite (the forms' definitions read the site's language).
const SITE_ONLY_CONFIG = fileURLToPath(new URL('dist/integration/site-config.js', import.meta.resolve('site-forms/package.json')));

/**
 * The file each of the names the settings go by leads to from `importer`: the one rule for the
 * bundle and for this script's own imports (the words of /forms.js, below). `site-forms/config` is
 * bundled in, not left to node_modules: an external copy of `defineForms` would read the package's
 * neutral site settings (its own `#site-config`), so an owner's forms would get English defaults on
 * a German site.
 */
function settingsFile(specifier, importer) {
  if (specifier === '#site-config') return SITE_FILE;
  if (specifier === '#forms-config') return FORMS_FILE;
  if (specifier === 'site-forms/config') return importer === SITE_FILE ? SITE_ONLY_CONFIG : CONFIG_ENTRY;
  return undefined;
}

registerHooks({
  resolve: (specifier, context, nextResolve) => {
    const importer = context.parentURL?.startsWith('file:') ? fileURLToPath(context.parentURL) : undefined;
    const file = settingsFile(specifier, importer);
    return file ? { url: pathToFileURL(file).href, shortCircuit: true } : nextResolve(specifier, context);
  },
});

/** The owner's settings bundled in, by the same rule. */
const ownersSettings = {
  name: 'site-forms-settings',
  setup(build) {
    build.onResolve({ filter: /^(#site-config|#forms-config|site-forms\/config)$/ }, (args) => ({ path: settingsFile(args.path, args.importer) }));
  },
};

/** Beside the pages Astro built: dist/ unless an argument names another folder (`astro build --outDir`). */
const outDir = process.argv[2] ?? 'dist';

await build({
  entryPoints: [fileURLToPath(import.meta.resolve('site-forms/server'))],
  outfile: `${outDir}/server/start.mjs`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  // Packages stay in node_modules, loaded as they are when run from source.
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [ownersSettings],
});

/**
 * The words /forms.js shows when a form on another site names none: the site's language's and each
 * form's own (decision 0168), read as the pages read them, so the script ships one language.
 */
async function siteWords() {
  const { default: settings } = await import(pathToFileURL(SITE_FILE).href);
  const { catalogueFor } = await import(new URL('dist/lib/i18n/catalogues.js', import.meta.resolve('site-forms/package.json')).href);
  const { default: forms } = await import(pathToFileURL(FORMS_FILE).href);
  const texts = catalogueFor(settings.language);
  const words = (form) => ({ busy: form.busyLabel, thanks: form.thanks });
  return {
    failed: texts.client.failed,
    newsletter: { busy: texts.newsletter.busy, thanks: texts.newsletter.thanks, confirmThanks: texts.newsletter.confirmThanks },
    contact: words(forms.contact),
    forms: Object.fromEntries(forms.forms.map((form) => [form.name, words(form)])),
    form: { busy: texts.formDefaults.busy, thanks: texts.formDefaults.thanks },
  };
}

// /forms.js: the forms' script for pages of the owner's site elsewhere, under a name that stays
// the same from build to build (their script tag names it), as a classic script so that
// `document.currentScript` tells it where this server is.
await build({
  entryPoints: [fileURLToPath(new URL('dist/scripts/forms-js.js', import.meta.resolve('site-forms/package.json')))],
  outfile: `${outDir}/client/forms.js`,
  bundle: true,
  platform: 'browser',
  format: 'iife',
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  define: { SITE_WORDS: JSON.stringify(await siteWords()) },
  logLevel: 'warning',
});
