import * as v from 'valibot';
import { texts } from '../i18n/texts.ts';
import { defineForm, type FormDefinition, fieldSchema } from './definition.ts';

/**
 * The newsletter form of docs/api/openapi.yaml as a definition: one email address, no honeypot.
 * Hint: its answer stays the spec's single `error` string (newsletter/newsletter-handlers.ts), not an `errors`
 * object; the definition gives its field's rules and markup (NewsletterForm.astro), in the site's
 * language (src/lib/i18n: the spec's words in English).
 */
export const NEWSLETTER_FORM: FormDefinition = defineForm({
  name: 'newsletter',
  title: texts.newsletter.formName,
  submitLabel: texts.newsletter.submit,
  busyLabel: texts.newsletter.busy,
  thanks: texts.newsletter.thanks,
  honeypot: false,
  page: '/',
  fields: [{ name: 'email', type: 'email', label: texts.newsletter.emailLabel, required: true, autocomplete: 'email' }],
});

/** The newsletter form's schema: one email address, checked as the contact form's. */
export const NewsletterSchema = v.object({
  // An email field's value is always text (definition.ts); the schema says so for its callers.
  email: fieldSchema(NEWSLETTER_FORM.fields[0]!) as v.GenericSchema<unknown, string>,
});

/** A validated newsletter subscription. */
export type NewsletterInput = v.InferOutput<typeof NewsletterSchema>;
