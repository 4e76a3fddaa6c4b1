/**
 * Your forms: fields added to the contact form, and forms of your own. Change it, then
 * `npm run build` (or `npm start`) again; a mistake stops the build naming the setting.
 * docs/guide.md#forms-of-your-own says what each setting does; docs/examples/quote/ is a whole form.
 */
import { defineForms } from 'site-forms/config';

export default defineForms({
  // Fields after the contact form's message, for example a phone number:
  // { name: 'phone', type: 'tel', label: 'Phone', hint: 'If you would rather we call you.', autocomplete: 'tel' }
  contactFields: [],
  // Forms of your own, each at /api/forms/<name> with a thank-you page at /thank-you/<name>/,
  // for example the quote form of docs/examples/quote/: import quote from './src/forms/quote.form.ts'; forms: [quote]
  forms: [],
});
