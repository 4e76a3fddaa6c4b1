/**
 * The names the service gives a meaning of its own: the columns of a message in the exports and
 * the fields of a post the server reads itself. A field of a form may take none of them but the
 * three the contact form fills, so this file is the one list of them (issue 30, item 4).
 * Hint: it sits in forms/, below contact/ and spam/, so that the check of a form's definition
 * can read it; the export and the spam filter take their names from here.
 */

/** The columns of a submission that hold the fields of the same name, whatever the form. */
export const STORED_IN_COLUMNS: readonly string[] = ['name', 'email', 'message'];

/** The fields of one message in an export, named as in JSON. */
export const EXPORT_COLUMNS = [
  'id',
  'createdAt',
  'name',
  'email',
  'message',
  'status',
  'attempts',
  'nextAttemptAt',
  'lastError',
  'sentAt',
  'spamReasons',
] as const;

/** The name of the spam trap on the wire (docs/api/openapi.yaml). */
export const HONEYPOT_FIELD = 'honeypot';

/** The form field that carries the solved proof, named as ALTCHA's widget names it. */
export const PROOF_FIELD = 'altcha';

/** The form field Cloudflare's widget fills with its token. */
export const TURNSTILE_FIELD = 'cf-turnstile-response';

/** The field of the newsletter's confirmation and unsubscribe forms that carries the consent's token. */
export const TOKEN_FIELD = 'token';

/** Where a person without JavaScript goes after a post from the owner's own site (decision 0167). */
export const NEXT_FIELD = '_next';

/**
 * The names a field may not take: the columns of the exports (but the three the contact form
 * fills), `form` and `fields`, which the export and the webhooks add, and the fields the server
 * reads itself (the spam trap, the proof of work, Turnstile's token, the confirmation's token, `_next`).
 */
export const RESERVED_FIELD_NAMES: readonly string[] = [
  ...EXPORT_COLUMNS.filter((column) => !STORED_IN_COLUMNS.includes(column)),
  'form',
  'fields',
  HONEYPOT_FIELD,
  PROOF_FIELD,
  TURNSTILE_FIELD,
  TOKEN_FIELD,
  NEXT_FIELD,
];
