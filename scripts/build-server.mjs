// Bundles the package's server entry (`site-forms/server`, the library's compiled
// dist/server/start.js and the lib it uses) with the owner's settings into one file,
// dist/server/start.mjs, run by `npm run serve`: one module graph to load, not hundreds
// (docs/performance.md).
import { registerHooks } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

// The settings this script imports itself (the words of /forms.js, below) are the files SITE_CONFIG
// and FORMS_CONFIG name, as for the bundles: the texts a form's defaults come from follow the
// site's language, not the one of the site.config.ts that package.json's `#site-config` names.
const NAMED_CONFIGS = { '#site-config': process.env.SITE_CONFIG || 'site.config.ts', '#forms-config': process.env.FORMS_CONFIG || 'forms.config.ts' };
// The site's settings get `defineSite` alone from `site-forms/config`, as under Vite (the forms' definitions read the site's language).
const SITE_ONLY_CONFIG = new URL('dist/integration/site-config.js', import.meta.resolve('site-forms/package.json')).href;
registerHooks({
  resolve: (specifier, context, nextResolve) => {
    if (specifier === 'site-forms/config' && context.parentURL === pathToFileURL(resolve(NAMED_CONFIGS['#site-config'])).href) {
      return { url: SITE_ONLY_CONFIG, shortCircuit: true };
    }
    const file = NAMED_CONFIGS[specifier];
    return file ? { url: pathToFileURL(resolve(file)).href, shortCircuit: true } : nextResolve(specifier, context);
  },
});

/** The site's settings, bundled in: site.config.ts, or the file SITE_CONFIG names (as the integration, src/integration/integration.ts, reads it). */
const siteConfig = {
  name: 'site-config',
  setup(build) {
    build.onResolve({ filter: /^#site-config$/ }, () => ({ path: resolve(process.env.SITE_CONFIG || 'site.config.ts') }));
  },
};

/**
 * `site-forms/config` as the owner's settings import it, bundled in, not left to node_modules: an
 * external copy of `defineForms` would read the package's neutral site settings (its own
 * `#site-config`), so an owner's forms would get English defaults on a German site. The site's file
 * gets `defineSite` alone, as under Vite and in the hook above.
 */
const CONFIG_ENTRY = fileURLToPath(import.meta.resolve('site-forms/config'));
const ownersConfigImports = {
  name: 'site-forms-config',
  setup(build) {
    const siteFile = resolve(process.env.SITE_CONFIG || 'site.config.ts');
    build.onResolve({ filter: /^site-forms\/config$/ }, (args) => ({ path: args.importer === siteFile ? fileURLToPath(SITE_ONLY_CONFIG) : CONFIG_ENTRY }));
  },
};

/** The owner's forms, bundled in: forms.config.ts, or the file FORMS_CONFIG names (as the integration, src/integration/integration.ts, reads it). */
const formsConfig = {
  name: 'forms-config',
  setup(build) {
    build.onResolve({ filter: /^#forms-config$/ }, () => ({ path: resolve(process.env.FORMS_CONFIG || 'forms.config.ts') }));
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
  plugins: [siteConfig, formsConfig, ownersConfigImports],
});

/**
 * The words /forms.js shows when a form on another site names none: the site's language's and each
 * form's own (decision 0168), read as the pages read them, so the script ships one language.
 */
async function siteWords() {
  const { default: settings } = await import(pathToFileURL(resolve(process.env.SITE_CONFIG || 'site.config.ts')).href);
  const { catalogueFor } = await import(new URL('dist/lib/i18n/catalogues.js', import.meta.resolve('site-forms/package.json')).href);
  const { default: forms } = await import(pathToFileURL(resolve(process.env.FORMS_CONFIG || 'forms.config.ts')).href);
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
