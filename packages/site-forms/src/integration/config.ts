/** What the owner's site.config.ts and forms.config.ts import (`site-forms/config`), as Vite and TypeScript read it. */
export { defineSite } from '../lib/site/define-site.ts';
export { defineForms } from '../lib/forms/define-forms.ts';
