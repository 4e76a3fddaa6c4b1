/**
 * `import { defineSite, defineForms } from 'site-forms/config'`, as Node loads it (the
 * integration's check of the form pages, the `site-forms` command): after the hook that lets
 * Node read this package's TypeScript (decision 0163). Vite reads src/integration/config.ts instead.
 */
await import('./node-hooks.mjs');
const site = await import('../lib/site/settings.ts');
const forms = await import('../lib/forms/settings.ts');

export const defineSite = site.defineSite;
export const defineForms = forms.defineForms;
