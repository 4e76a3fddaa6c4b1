import { defineForm, type FormDefinition, type FormErrors, parseForm } from './definition.ts';

/** The limits of docs/api/openapi.yaml, in characters (code points) after trimming. */
export const CONTACT_LIMITS = {
  name: { min: 2, max: 100 },
  message: { min: 10, max: 5000 },
} as const;

/** The texts a visitor reads when a contact field is refused. */
export const CONTACT_MESSAGES = {
  nameLength: `Name must be between ${CONTACT_LIMITS.name.min} and ${CONTACT_LIMITS.name.max} characters`,
  nameCharacters: 'Name must not contain line breaks or control characters',
  messageTooShort: `Message must be at least ${CONTACT_LIMITS.message.min} characters`,
  messageTooLong: `Message must be at most ${CONTACT_LIMITS.message.max} characters`,
  messageCharacters: 'Message must not contain control characters',
  honeypot: 'This field must be left empty',
} as const;

/**
 * The contact form of docs/api/openapi.yaml as a definition: name, email, message and the
 * honeypot, with the spec's limits and messages. The owner's extra fields (forms.config.ts)
 * are added to it by forms/registry.ts.
 * Hint: each rule's message is given, never left to a default, so the wire stays the spec's.
 */
export const CONTACT_FORM: FormDefinition = defineForm({
  name: 'contact',
  title: 'Contact us',
  submitLabel: 'Send message',
  busyLabel: 'Sending...',
  thanks: "Thanks for your message! We'll get back to you soon.",
  fields: [
    {
      name: 'name',
      type: 'text',
      label: 'Name',
      required: true,
      minLength: CONTACT_LIMITS.name.min,
      maxLength: CONTACT_LIMITS.name.max,
      autocomplete: 'name',
      messages: {
        required: CONTACT_MESSAGES.nameLength,
        tooShort: CONTACT_MESSAGES.nameLength,
        tooLong: CONTACT_MESSAGES.nameLength,
        characters: CONTACT_MESSAGES.nameCharacters,
      },
    },
    { name: 'email', type: 'email', label: 'Email address', required: true, autocomplete: 'email' },
    {
      name: 'message',
      type: 'textarea',
      label: 'Message',
      hint: `At least ${CONTACT_LIMITS.message.min} characters.`,
      required: true,
      minLength: CONTACT_LIMITS.message.min,
      maxLength: CONTACT_LIMITS.message.max,
      rows: 8,
      messages: {
        required: CONTACT_MESSAGES.messageTooShort,
        tooShort: CONTACT_MESSAGES.messageTooShort,
        tooLong: CONTACT_MESSAGES.messageTooLong,
        characters: CONTACT_MESSAGES.messageCharacters,
      },
    },
  ],
});

/** A validated contact submission: the spec's four fields. */
export type ContactInput = { name: string; email: string; message: string; honeypot: string };

/** The field-to-messages map of docs/api/openapi.yaml for a failed contact submission. */
export type ContactErrors = Partial<Record<keyof ContactInput, [string, ...string[]]>> & FormErrors;

/**
 * Checks a contact submission, answering the cleaned input or the spec's `errors` object.
 * Hint: each field stops at its first problem so a visitor reads one message per field.
 */
export function parseContact(fields: Record<string, unknown>): { ok: true; input: ContactInput } | { ok: false; errors: ContactErrors } {
  const parsed = parseForm(CONTACT_FORM, fields);
  if (!parsed.ok) return parsed;
  const { name, email, message } = parsed.values;
  return { ok: true, input: { name: String(name), email: String(email), message: String(message), honeypot: '' } };
}
