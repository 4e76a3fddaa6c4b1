import { texts } from '../i18n/texts.ts';
import { defineForm, type FormDefinition, type FormErrors } from './definition.ts';

/** The limits of docs/api/openapi.yaml, in characters (code points) after trimming. */
export const CONTACT_LIMITS = {
  name: { min: 2, max: 100 },
  message: { min: 10, max: 5000 },
} as const;

const { validation, contact } = texts;

/** The texts a visitor reads when a contact field is refused, in the site's language (the spec's in English). */
export const CONTACT_MESSAGES = {
  nameLength: validation.nameLength(CONTACT_LIMITS.name.min, CONTACT_LIMITS.name.max),
  nameCharacters: validation.nameCharacters,
  messageTooShort: validation.messageTooShort(CONTACT_LIMITS.message.min),
  messageTooLong: validation.messageTooLong(CONTACT_LIMITS.message.max),
  messageCharacters: validation.messageCharacters,
  honeypot: validation.honeypot,
} as const;

/**
 * The contact form of docs/api/openapi.yaml as a definition: name, email, message and the
 * honeypot, with the spec's limits and messages. The owner's extra fields (forms.config.ts)
 * are added to it by forms/registry.ts.
 * Hint: each rule's message is given, never left to a default, so the wire stays the spec's; its
 * words are the site's language's (src/lib/i18n).
 */
export const CONTACT_FORM: FormDefinition = defineForm({
  name: 'contact',
  title: contact.title,
  submitLabel: contact.submit,
  busyLabel: contact.busy,
  thanks: contact.thanks,
  fields: [
    {
      name: 'name',
      type: 'text',
      label: contact.nameLabel,
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
    { name: 'email', type: 'email', label: contact.emailLabel, required: true, autocomplete: 'email' },
    {
      name: 'message',
      type: 'textarea',
      label: contact.messageLabel,
      hint: contact.messageHint(CONTACT_LIMITS.message.min),
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
