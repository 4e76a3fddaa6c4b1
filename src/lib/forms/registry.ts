import settings from '#forms-config';
import type { FormDefinition } from './definition.ts';

/**
 * The owner's forms (forms.config.ts at the project's root), as the build read them: the contact
 * form with its extra fields, and the forms of their own.
 * Hint: `#forms-config` is an import of package.json; a build with FORMS_CONFIG set reads another
 * file instead (astro.config.mjs, scripts/build-server.mjs), as SITE_CONFIG does for the site.
 */
export const forms = settings;

/** The contact form the site serves: the spec's four fields and the owner's extra ones. */
export const contactForm: FormDefinition = settings.contact;

/** The owner's own forms, each at /api/forms/<name>. */
export const ownerForms: readonly FormDefinition[] = settings.forms;

/** A form by its name (`contact` or an owner's), or `undefined`. */
export function formNamed(name: string): FormDefinition | undefined {
  return name === 'contact' ? contactForm : ownerForms.find((form) => form.name === name);
}

/** The columns of a submission that hold the fields of the same name, whatever the form. */
export const STORED_IN_COLUMNS: readonly string[] = ['name', 'email', 'message'];

/** The fields of a form kept in a submission's `fields` (JSON): all but name, email and message. */
export function extraFields(form: FormDefinition): FormDefinition['fields'] {
  return form.fields.filter((field) => !STORED_IN_COLUMNS.includes(field.name));
}

/** The extra fields of every form, by name, once each in the order they first appear: the exports' columns. */
export function extraFieldNames(): string[] {
  return [...new Set([contactForm, ...ownerForms].flatMap((form) => extraFields(form).map((field) => field.name)))];
}

/** A field's definition in the form a submission came from, for its label; `undefined` for one no longer defined. */
export function fieldOf(formName: string, fieldName: string): FormDefinition['fields'][number] | undefined {
  return formNamed(formName)?.fields.find((field) => field.name === fieldName);
}
