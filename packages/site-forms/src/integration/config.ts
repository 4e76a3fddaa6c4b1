/** What the owner's site.config.ts and forms.config.ts import (`site-forms/config`), as Vite and TypeScript read it. */
export { defineSite } from '../lib/site/define-site.ts';
export { defineForms } from '../lib/forms/define-forms.ts';
/** One form of the owner's own, in a file of its own (docs/examples/quote/quote.form.ts). */
export { defineForm } from '../lib/forms/definition.ts';
