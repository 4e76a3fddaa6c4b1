/** The forms of an owner who has no forms.config.ts and gives none to `siteForms()`: the contact and newsletter forms alone. */
import { defineForms } from '../../lib/forms/define-forms.ts';

export default defineForms({});
