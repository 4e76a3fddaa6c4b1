import * as v from 'valibot';
import { texts } from '../i18n/texts.ts';
import { cleanText } from './text.ts';

/** The message of docs/api/openapi.yaml for an email address that is missing or malformed (the site's language's). */
export const INVALID_EMAIL = texts.validation.invalidEmail;

/** The longest address SMTP can carry (RFC 5321 path limit less the angle brackets). */
export const EMAIL_MAX_LENGTH = 254;

/**
 * The HTML standard's "valid e-mail address", which a browser's `type=email` accepts: atext
 * and dots, `@`, then labels of letters, digits and inner hyphens (so punycode, `xn--…`, too).
 * Hint: it has none of `,` `"` `<` `>` `;` `:` `\\` `(` `)` `[` `]`, spaces or controls, so an
 * address can never become a second header or recipient; each label's run is bounded, so
 * the pattern runs in linear time.
 */
const VALID_EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/**
 * `?`, `%` and `&`: legal in the standard's local part, but no mailbox a person uses needs
 * them, and in a `mailto:` link they start a query (`?bcc=…&subject=…`) or an escape.
 */
const URL_SYNTAX = /[?%&]/;

/**
 * Whether `value` is an address a browser accepts (less `?`, `%` and `&`), within 254 characters, with a dot in
 * its domain; `dotless` also allows one label, such as `owner@localhost`, for the owner's own.
 * Hint: a visitor's `ada@gmail` is a typo, as no public domain has one label, so the forms refuse it.
 */
export function isEmailAddress(value: string, { dotless = false } = {}): boolean {
  if (value.length > EMAIL_MAX_LENGTH || !VALID_EMAIL.test(value) || URL_SYNTAX.test(value)) return false;
  return dotless || value.slice(value.indexOf('@') + 1).includes('.');
}

/**
 * An email address field: missing counts as empty, text is cleaned, and the length is
 * checked before the pattern so the pattern never sees a long input.
 */
export const EmailField = v.pipe(
  v.optional(v.string(INVALID_EMAIL), ''),
  v.transform(cleanText),
  v.check((value) => isEmailAddress(value), INVALID_EMAIL),
);
