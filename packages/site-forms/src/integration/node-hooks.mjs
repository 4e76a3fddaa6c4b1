/**
 * Lets Node itself load this package's TypeScript when it is installed under an owner's
 * node_modules, where Node refuses to strip types (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING):
 * an in-thread load hook strips the types of this package's own `.ts` files, and nothing else's
 * (decision 0163). Imported first by every entry Node loads itself: the integration at config
 * time, `site-forms/config` and the `site-forms` command.
 * Hint: `#site-config` and `#forms-config` of this package name the owner's site.config.ts and
 * forms.config.ts of the folder the command runs in (or SITE_CONFIG / FORMS_CONFIG) when there
 * are any, else the neutral defaults beside this file, as the integration's Vite aliases do.
 */
import { existsSync, readFileSync } from 'node:fs';
import { registerHooks, stripTypeScriptTypes } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The package's root folder, as a URL prefix: only files under it are stripped. */
const PACKAGE = new URL('../../', import.meta.url).href;

/** The owner's settings file of `name` (site or forms), or this package's neutral one. */
function settingsFile(variable, file, fallback) {
  const owner = process.env[variable] ? resolve(process.env[variable]) : resolve(file);
  return pathToFileURL(existsSync(owner) ? owner : fileURLToPath(new URL(fallback, import.meta.url))).href;
}

const SETTINGS = {
  '#site-config': () => settingsFile('SITE_CONFIG', 'site.config.ts', './defaults/site.config.ts'),
  '#forms-config': () => settingsFile('FORMS_CONFIG', 'forms.config.ts', './defaults/forms.config.ts'),
};

/** Whether this package is installed under node_modules (else it is the starter's workspace, which Node strips itself). */
const INSTALLED = PACKAGE.includes('/node_modules/');

registerHooks({
  resolve(specifier, context, nextResolve) {
    // The owner's site.config.ts gets `defineSite` alone: the forms' definitions read the site's language, and would wait on it.
    if (specifier === 'site-forms/config' && context.parentURL === SETTINGS['#site-config']()) {
      return { url: new URL('./site-config.ts', import.meta.url).href, shortCircuit: true };
    }
    const settings = SETTINGS[specifier];
    if (settings && context.parentURL?.startsWith(PACKAGE)) return { url: settings(), shortCircuit: true };
    return nextResolve(specifier, context);
  },
  // Under node_modules only: a checkout (the starter's workspace) is stripped by Node itself.
  load(url, context, nextLoad) {
    if (!INSTALLED || !url.startsWith(PACKAGE) || !url.endsWith('.ts')) return nextLoad(url, context);
    return { format: 'module', source: strip(readFileSync(fileURLToPath(url), 'utf8')), shortCircuit: true };
  },
});

/**
 * The types stripped as Node strips them for our checkout. Node warns once per process that
 * `stripTypeScriptTypes` is experimental: a line in every owner's terminal and log that is about
 * us, not them, so that one warning, raised inside the call, is not passed on.
 */
function strip(source) {
  const emitWarning = process.emitWarning;
  process.emitWarning = (warning, ...rest) => {
    if (String(warning).includes('stripTypeScriptTypes')) return;
    emitWarning.call(process, warning, ...rest);
  };
  try {
    return stripTypeScriptTypes(source, { mode: 'strip' });
  } finally {
    process.emitWarning = emitWarning;
  }
}
