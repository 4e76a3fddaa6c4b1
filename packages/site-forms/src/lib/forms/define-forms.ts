import { CONTACT_FORM } from './contact.ts';
import { defineForm, type FieldDefinition, type FormDefinition, type FormDefinitionInput } from './definition.ts';

/** What forms.config.ts holds: fields added to the contact form, and the owner's other forms. */
export type FormsSettingsInput = {
  /** Fields after the contact form's message (for example a phone number); the built-in four stay as the spec has them. */
  contactFields?: readonly FieldDefinition[];
  /** The owner's forms, each posted to /api/forms/<name> (docs/examples/quote/ shows one). */
  forms?: readonly (FormDefinition | FormDefinitionInput)[];
};

/** Every form of the site, checked: the contact form with its extra fields, and the owner's forms. */
export type FormsSettings = { contact: FormDefinition; forms: readonly FormDefinition[] };

/** The names an owner's form may not take: the built-in forms and the pages under /thank-you/. */
const TAKEN_NAMES = ['contact', 'newsletter', 'confirm-subscription', 'unsubscribed'];

/**
 * Checks forms.config.ts: the contact form's extra fields and each owner's form, throwing with the
 * file, the form and the setting named, so a mistake stops the build and the start.
 */
export function defineForms(input: FormsSettingsInput = {}): FormsSettings {
  try {
    const contact = defineForm({ ...CONTACT_FORM, fields: [...CONTACT_FORM.fields, ...(input.contactFields ?? [])] });
    const forms = (input.forms ?? []).map((form) => defineForm(form));
    const names = new Set<string>();
    for (const form of forms) {
      if (TAKEN_NAMES.includes(form.name)) throw new Error(`form "${form.name}": the name ${form.name} is taken by the site`);
      if (names.has(form.name)) throw new Error(`form "${form.name}": a second form of that name`);
      names.add(form.name);
    }
    return { contact, forms };
  } catch (error) {
    throw new Error(`forms.config.ts: ${(error as Error).message}`);
  }
}
