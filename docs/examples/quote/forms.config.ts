/**
 * forms.config.ts with the quote form added: the one change besides the two files (README.md beside this one).
 */
import quote from './src/forms/quote.form.ts';
import { defineForms } from 'site-forms/config';

export default defineForms({
  contactFields: [],
  forms: [quote],
});
