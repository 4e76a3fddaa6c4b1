/**
 * `import { defineSite, defineForms } from 'site-forms/config'`, as Node loads it: from the
 * owner's site.config.ts and forms.config.ts, which Node reads only after an entry of this
 * package (the integration, the `site-forms` command) has registered the hook that lets it read
 * this package's TypeScript (decision 0163). Vite reads src/integration/config.ts instead.
 * Hint: static re-exports, no top-level await: forms/define-forms.ts may be this module's importer's
 * importer (a form's definition reads the site's language), and awaiting it would never end.
 */
import './node-hooks.mjs';

export { defineForms } from '../lib/forms/define-forms.ts';
export { defineSite } from '../lib/site/define-site.ts';
