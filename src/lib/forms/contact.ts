import * as v from 'valibot';
import { EmailField } from './email.ts';
import { characterCount, cleanText, hasControlCharacters, hasControlCharactersInMultiline, visibleCount } from './text.ts';

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

const textField = (message: string) => v.pipe(v.optional(v.string(message), ''), v.transform(cleanText));

/**
 * The contact form of docs/api/openapi.yaml; every failing field is reported at once.
 * Hint: each field stops at its first problem so a visitor reads one message per field.
 */
export const ContactSchema = v.object({
  name: v.pipe(
    textField(CONTACT_MESSAGES.nameLength),
    v.check((s) => !hasControlCharacters(s), CONTACT_MESSAGES.nameCharacters),
    v.check((s) => between(characterCount(s), CONTACT_LIMITS.name), CONTACT_MESSAGES.nameLength),
    // The minimum counts what a reader sees: two zero-width spaces are no name.
    v.check((s) => visibleCount(s) >= CONTACT_LIMITS.name.min, CONTACT_MESSAGES.nameLength),
  ),
  email: EmailField,
  message: v.pipe(
    textField(CONTACT_MESSAGES.messageTooShort),
    v.check((s) => !hasControlCharactersInMultiline(s), CONTACT_MESSAGES.messageCharacters),
    v.check((s) => characterCount(s) >= CONTACT_LIMITS.message.min, CONTACT_MESSAGES.messageTooShort),
    v.check((s) => characterCount(s) <= CONTACT_LIMITS.message.max, CONTACT_MESSAGES.messageTooLong),
  ),
  // Not trimmed: a bot that fills the trap with spaces is still a bot.
  honeypot: v.pipe(v.optional(v.string(CONTACT_MESSAGES.honeypot), ''), v.maxLength(0, CONTACT_MESSAGES.honeypot)),
});

/** A validated contact submission. */
export type ContactInput = v.InferOutput<typeof ContactSchema>;

/** The field-to-messages map of docs/api/openapi.yaml for a failed contact submission. */
export type ContactErrors = Partial<Record<keyof ContactInput, [string, ...string[]]>>;

/** Checks a contact submission, answering the cleaned input or the spec's `errors` object. */
export function parseContact(fields: Record<string, unknown>): { ok: true; input: ContactInput } | { ok: false; errors: ContactErrors } {
  const result = v.safeParse(ContactSchema, fields, { abortPipeEarly: true });
  if (result.success) return { ok: true, input: result.output };
  return { ok: false, errors: v.flatten<typeof ContactSchema>(result.issues).nested ?? {} };
}

function between(n: number, { min, max }: { min: number; max: number }): boolean {
  return n >= min && n <= max;
}
