/**
 * Where Node finds the owner's settings when it loads this package itself: the integration at
 * config time and the `site-forms` command (decision 0220, which supersedes 0163). Node reads the
 * owner's site.config.ts and forms.config.ts on its own (they are outside node_modules, where it
 * strips types itself from 22.18); this package is JavaScript in dist/, so nothing else is needed.
 * Hint: `#site-config` and `#forms-config` of this package name the owner's site.config.ts and
 * forms.config.ts of the folder the command runs in (or SITE_CONFIG / FORMS_CONFIG) when there
 * are any, else the neutral defaults beside this file, as the integration's Vite aliases do.
 */
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** `.js` in dist/, `.ts` when the tests run this file from source: the modules beside it have the same. */
const EXTENSION = import.meta.url.slice(import.meta.url.lastIndexOf('.'));

/** This package's root folder, as a URL prefix: only its own imports of the settings are redirected. */
const PACKAGE = new URL('../../', import.meta.url).href;

/** A module beside this one, by its name in src/ (`./site-config.ts`). */
const beside = (path: string) => new URL(path.replace(/\.ts$/, EXTENSION), import.meta.url);

/** The owner's settings file (SITE_CONFIG or site.config.ts of the working folder), or this package's neutral one. */
function settingsFile(variable: string, file: string, fallback: string): string {
  const named = process.env[variable];
  const owner = named ? resolve(named) : resolve(file);
  return pathToFileURL(existsSync(owner) ? owner : fileURLToPath(beside(fallback))).href;
}

const SETTINGS: Record<string, () => string> = {
  '#site-config': () => settingsFile('SITE_CONFIG', 'site.config.ts', './defaults/site.config.ts'),
  '#forms-config': () => settingsFile('FORMS_CONFIG', 'forms.config.ts', './defaults/forms.config.ts'),
};

registerHooks({
  resolve(specifier, context, nextResolve) {
    // The owner's site.config.ts gets `defineSite` alone: the forms' definitions read the site's language, and would wait on it.
    if (specifier === 'site-forms/config' && context.parentURL === SETTINGS['#site-config']!()) {
      return { url: beside('./site-config.ts').href, shortCircuit: true };
    }
    const settings = SETTINGS[specifier];
    if (settings && context.parentURL?.startsWith(PACKAGE)) return { url: settings(), shortCircuit: true };
    return nextResolve(specifier, context);
  },
});
