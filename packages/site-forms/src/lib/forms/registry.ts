import settings from '#forms-config';
import { displayValue, type FormDefinition, ownValue } from './definition.ts';
import type { FormsSettings } from './define-forms.ts';
import { STORED_IN_COLUMNS } from './reserved.ts';

/**
 * The owner's forms (forms.config.ts at the project's root), as the build read them: the contact
 * form with its extra fields, and the forms of their own.
 * Hint: `#forms-config` is an import of package.json; a build with FORMS_CONFIG set reads another
 * file instead (src/integration/integration.ts, scripts/build-server.mjs), as SITE_CONFIG does for the site.
 */
export const forms = settings;

/** The contact form the site serves: the spec's four fields and the owner's extra ones. */
export const contactForm: FormDefinition = settings.contact;

/** The owner's own forms, each at /api/forms/<name>. */
export const ownerForms: readonly FormDefinition[] = settings.forms;

/** A form by its name (`contact` or an owner's) among the site's forms (or `set`), or `undefined`. */
export function formNamed(name: string, set: FormsSettings = forms): FormDefinition | undefined {
  return name === 'contact' ? set.contact : set.forms.find((form) => form.name === name);
}

/** The fields of a form kept in a submission's `fields` (JSON): all but name, email and message. */
export function extraFields(form: FormDefinition): FormDefinition['fields'] {
  return form.fields.filter((field) => !STORED_IN_COLUMNS.includes(field.name));
}

/** The extra fields of every form (of the site, or `set`), by name, once each in the order they first appear: the exports' columns. */
export function extraFieldNames(set: FormsSettings = forms): string[] {
  return [...new Set([set.contact, ...set.forms].flatMap((form) => extraFields(form).map((field) => field.name)))];
}

/** A field's definition in the form a submission came from, for its label; `undefined` for one no longer defined. */
export function fieldOf(formName: string, fieldName: string, set: FormsSettings = forms): FormDefinition['fields'][number] | undefined {
  return formNamed(formName, set)?.fields.find((field) => field.name === fieldName);
}

/** The label of a field by its name: from the first form (the contact form first) that has it, else the name itself. */
export function labelOf(fieldName: string, set: FormsSettings = forms): string {
  for (const form of [set.contact, ...set.forms]) {
    const field = form.fields.find((f) => f.name === fieldName);
    if (field) return field.label;
  }
  return fieldName;
}

/** One extra field of a submission as the owner reads it: its name, its label, its value as shown. */
export type PresentedField = { key: string; label: string; value: string };

/**
 * The extra fields of a submission of `formName` (its `fields`), in its form's order, each with
 * the label its form gives it and its value as shown (a choice's label, Yes or No, '' when
 * empty): the one presentation the owner's mail, the admin and the inbox command read.
 * `message`, given, is shown at the message field's place (an owner's form's mail lists it there).
 * Hint: a field its form no longer defines follows, with its name as its label and its stored
 * value, so nothing stored is hidden from the owner. A file field has no value here: its files
 * are rows of the files table, which each reader lists itself (names, sizes, downloads).
 */
export function presentFields(formName: string, fields: Readonly<Record<string, unknown>>, set: FormsSettings = forms, message?: string): PresentedField[] {
  const presented: PresentedField[] = [];
  const listed = new Set<string>();
  for (const field of formNamed(formName, set)?.fields ?? []) {
    listed.add(field.name);
    if (field.type === 'file') continue;
    if (field.name === 'message' && message !== undefined) presented.push({ key: field.name, label: field.label, value: message });
    else if (!STORED_IN_COLUMNS.includes(field.name))
      presented.push({ key: field.name, label: field.label, value: displayValue(field, ownValue(fields, field.name)) });
  }
  for (const [key, value] of Object.entries(fields)) if (!listed.has(key)) presented.push({ key, label: key, value: displayValue(undefined, value) });
  return presented;
}

/** A form's title by its name, or the name itself when the form is no longer defined. */
export function formTitleOf(formName: string, set: FormsSettings = forms): string {
  return formNamed(formName, set)?.title ?? formName;
}
