import * as v from 'valibot';
import { cleanText, hasControlCharacters } from './text.ts';

/** The message of SPEC.md 4.1 and 4.2 for an email address that is missing or malformed. */
export const INVALID_EMAIL = 'Please enter a valid email address';

/** The longest address SMTP can carry (RFC 5321 path limit less the angle brackets). */
export const EMAIL_MAX_LENGTH = 254;

/**
 * An email address field: missing counts as empty, text is cleaned, and the length is
 * checked before the pattern so the pattern never sees a long input.
 * Hint: valibot's email pattern has no nested quantifiers, so it runs in linear time.
 */
export const EmailField = v.pipe(
  v.optional(v.string(INVALID_EMAIL), ''),
  v.transform(cleanText),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const value = dataset.value;
    if (value.length > EMAIL_MAX_LENGTH || hasControlCharacters(value) || !v.is(EMAIL_PATTERN, value)) {
      addIssue({ message: INVALID_EMAIL });
    }
  }),
);

const EMAIL_PATTERN = v.pipe(v.string(), v.email());
