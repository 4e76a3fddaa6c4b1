import * as v from 'valibot';
import { texts } from '../i18n/texts.ts';
import { EMAIL_MAX_LENGTH, INVALID_EMAIL, isEmailAddress } from './email.ts';
import { HONEYPOT_FIELD, RESERVED_FIELD_NAMES } from './reserved.ts';
import { characterCount, cleanText, hasControlCharacters, hasControlCharactersInMultiline, visibleCount, withoutInvisible } from './text.ts';

/** The kinds of field a form can hold, each an HTML control of its own (`textarea`, `select`, or an input of that type). */
export const FIELD_TYPES = ['text', 'email', 'tel', 'url', 'number', 'textarea', 'select', 'checkbox', 'date', 'file'] as const;

/** One of the kinds of field. */
export type FieldType = (typeof FIELD_TYPES)[number];

/**
 * What a visitor reads when a field is refused, one text per rule; each has a default built from the label.
 * Hint: `required` is also what a missing field reads; a rule without its own text falls back to `invalid`.
 */
export type FieldMessages = {
  /** Empty or missing (a required field), or a required checkbox left unticked. */
  required?: string;
  /** Shorter than `minLength`. */
  tooShort?: string;
  /** Longer than `maxLength`. */
  tooLong?: string;
  /** Below `min` (a number or a date). */
  tooSmall?: string;
  /** Above `max` (a number or a date). */
  tooLarge?: string;
  /** Not a value of its type: a malformed address, number, date or web address, or not one of the choices. */
  invalid?: string;
  /** Holds a line break (one-line fields) or a control character. */
  characters?: string;
};

/** One choice of a select: the value on the wire and the words a visitor reads. */
export type Choice = { value: string; label: string };

/** One field of a form, as its owner defines it. */
export type FieldDefinition = {
  /** The name on the wire (`<input name>`), the key of the `errors` object, of the stored value and of the export's column. */
  name: string;
  type: FieldType;
  /** The words of its `<label>`, and of its line in the owner's mail and the admin. */
  label: string;
  /** A sentence under the label (`aria-describedby`). */
  hint?: string | undefined;
  required?: boolean | undefined;
  /** In characters (code points, after trimming), for text-like fields. */
  minLength?: number | undefined;
  maxLength?: number | undefined;
  /** For a number; a date's bounds are `YYYY-MM-DD` text. */
  min?: number | string | undefined;
  max?: number | string | undefined;
  /** The choices of a select, in order. */
  choices?: readonly Choice[] | undefined;
  messages?: FieldMessages | undefined;
  /** The input's `autocomplete` token (`name`, `email`, `tel`…), so browsers fill it in. */
  autocomplete?: string | undefined;
  /** The rows of a textarea. */
  rows?: number | undefined;
  /** What a file field takes: MIME types (`image/png`, `image/*`) and extensions (`.pdf`), checked against the file's own bytes; anything when not set. */
  accept?: readonly string[] | undefined;
  /** The largest file a file field takes, in bytes (DEFAULT_FILE_MAX_SIZE when not set). */
  maxSize?: number | undefined;
  /** How many files a file field takes in one post (1 when not set). */
  maxFiles?: number | undefined;
};

/** The largest file of a file field whose definition sets no `maxSize`: 10 MB. */
export const DEFAULT_FILE_MAX_SIZE = 10 * 1024 * 1024;

/** A file a visitor sent, as the form's rules see it: its name (for display only), size and type (read from its bytes). */
export type SentFile = { name: string; size: number; type: string };

/** A form's thank-you page (the built-in two's and each owner's form's), as a path: /thank-you/<name>/. */
export function thanksPath(name: string): string {
  return `/thank-you/${name}/`;
}

/** The budget of accepted posts per client: how many in how many seconds (RATE_LIMIT_* when not set). */
export type FormLimit = { max: number; windowSeconds: number };

/** A form, as its owner defines it: the page renders it, the server validates it, the store and the owner's mail follow it. */
export type FormDefinition = {
  /** `[a-z][a-z0-9-]*`: its endpoint is /api/forms/<name>, its thank-you page /thank-you/<name>/. */
  name: string;
  /** The page's heading and the form's accessible name; the owner's mail says "New <title> from …". */
  title: string;
  fields: readonly FieldDefinition[];
  /** The submit button's words, and what it says while sending. */
  submitLabel: string;
  busyLabel: string;
  /** What the visitor reads once it is sent (in place of the form, and on the thank-you page). */
  thanks: string;
  /** Its own budget of accepted posts per client; the site's (RATE_LIMIT_MAX) when not set. */
  limit?: FormLimit | undefined;
  /**
   * Its own addresses (one, or a list): its mail goes there and to the people who chose it,
   * instead of CONTACT_TO (people/recipients.ts).
   */
  to?: string | readonly string[] | undefined;
  /** The hidden field people never see and bots fill in (`honeypot`), refused when not empty. */
  honeypot: boolean;
  /** The path of the page that places it (`/<name>` unless given): where "start again" links lead. */
  page: string;
  /** The words of its link to `page` in the site's menu (its title unless given); `false` leaves it out of the menu. */
  nav: string | false;
};

/** What an owner writes: the rest has defaults. */
export type FormDefinitionInput = Pick<FormDefinition, 'name' | 'title' | 'fields'> & Partial<Omit<FormDefinition, 'name' | 'title' | 'fields'>>;

/** The message of a filled-in spam trap. */
export const HONEYPOT_MESSAGE = texts.validation.honeypot;

/** What a ticked checkbox sends (`<input type="checkbox" value="yes">`): the one value that ticks it. */
export const CHECKBOX_VALUE = 'yes';

/**
 * A value of a record of fields by the field's name, only when the record holds it itself.
 * Hint: a field may be named `constructor` or `toString`; read from a plain object where it is
 * absent, such a name finds the object's prototype's function, not nothing.
 */
export function ownValue<T>(record: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/** The longest text a text-like field takes when its definition sets no `maxLength`. */
export const DEFAULT_MAX_LENGTH = { text: 200, email: EMAIL_MAX_LENGTH, tel: 40, url: 2000, textarea: 5000 } as const;

/** Whether a type of field holds typed text (and so takes `minLength` and `maxLength`): the types with a default length. */
export function isTextLike(type: FieldType): type is keyof typeof DEFAULT_MAX_LENGTH {
  return Object.hasOwn(DEFAULT_MAX_LENGTH, type);
}

/** The value of a field once validated: text, a number (or `null` when an optional one is empty), a ticked box. */
export type FieldValue = string | number | boolean | null;

/** A validated submission: each field's value by its name. */
export type FormValues = Record<string, FieldValue>;

/** The `errors` object of docs/api/openapi.yaml: each failing field's messages. */
export type FormErrors = Record<string, [string, ...string[]]>;

const WIRE_NAME = /^[a-z][a-zA-Z0-9_-]{0,39}$/;
const FORM_NAME = /^[a-z][a-z0-9-]{0,39}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const ACCEPT_ENTRY = /^(?:[a-z0-9][a-z0-9.+-]*\/(?:\*|[a-z0-9][a-z0-9.+-]*)|\.[a-z0-9][a-z0-9.+-]{0,19})$/;

const text = (what: string) => v.pipe(v.string(`${what} must be text`), v.trim(), v.nonEmpty(`${what} is empty`), v.maxLength(500, `${what} is too long`));
const count = (what: string) => v.pipe(v.number(`${what} must be a number`), v.integer(`${what} must be a whole number`), v.minValue(0, `${what} is negative`));
const bound = v.union([v.number(), v.pipe(v.string(), v.regex(DATE))], 'must be a number, or a date as YYYY-MM-DD');

const FieldShape = v.strictObject({
  name: v.pipe(v.string(), v.regex(WIRE_NAME, 'must start with a lower-case letter and hold only letters, digits, - and _ (40 at most)')),
  type: v.picklist(FIELD_TYPES, `must be one of ${FIELD_TYPES.join(', ')}`),
  label: text('the label'),
  hint: v.optional(text('the hint')),
  required: v.optional(v.boolean('must be true or false')),
  minLength: v.optional(count('minLength')),
  maxLength: v.optional(v.pipe(count('maxLength'), v.minValue(1, 'must be at least 1'))),
  min: v.optional(bound),
  max: v.optional(bound),
  choices: v.optional(v.pipe(v.array(v.strictObject({ value: text('a choice value'), label: text('a choice label') })), v.minLength(1, 'is empty'))),
  messages: v.optional(
    v.strictObject({
      required: v.optional(text('the message')),
      tooShort: v.optional(text('the message')),
      tooLong: v.optional(text('the message')),
      tooSmall: v.optional(text('the message')),
      tooLarge: v.optional(text('the message')),
      invalid: v.optional(text('the message')),
      characters: v.optional(text('the message')),
    }),
  ),
  autocomplete: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9 -]{1,60}$/, 'must be an autocomplete token such as tel'))),
  rows: v.optional(v.pipe(count('rows'), v.minValue(1, 'must be at least 1'), v.maxValue(50, 'must be at most 50'))),
  accept: v.optional(
    v.pipe(
      v.array(v.pipe(v.string(), v.regex(ACCEPT_ENTRY, 'must be a MIME type such as image/png or image/*, or an extension such as .pdf'))),
      v.minLength(1, 'is empty'),
    ),
  ),
  maxSize: v.optional(v.pipe(count('maxSize'), v.minValue(1, 'must be at least 1'))),
  maxFiles: v.optional(v.pipe(count('maxFiles'), v.minValue(1, 'must be at least 1'), v.maxValue(20, 'must be at most 20'))),
});

/** An address of the owner's (`to`): like CONTACT_TO, on a one-label domain if need be. */
const ownAddress = v.pipe(
  v.string(),
  v.check((value) => isEmailAddress(value, { dotless: true }), 'must be an email address'),
);

const FormShape = v.strictObject({
  name: v.pipe(v.string(), v.regex(FORM_NAME, 'must start with a lower-case letter and hold only a-z, 0-9 and - (40 at most)')),
  title: text('the title'),
  fields: v.pipe(v.array(FieldShape), v.minLength(1, 'needs at least one field'), v.maxLength(50, 'holds more than 50 fields')),
  submitLabel: v.optional(text('the submit label')),
  busyLabel: v.optional(text('the busy label')),
  thanks: v.optional(text('the thanks')),
  limit: v.optional(
    v.strictObject({
      max: v.pipe(count('max'), v.minValue(1, 'must be at least 1')),
      windowSeconds: v.pipe(count('windowSeconds'), v.minValue(1, 'must be at least 1')),
    }),
  ),
  to: v.optional(
    v.union([ownAddress, v.pipe(v.array(ownAddress), v.minLength(1, 'needs at least one address'))], 'must be an email address or a list of them'),
  ),
  honeypot: v.optional(v.boolean('must be true or false')),
  page: v.optional(v.pipe(v.string(), v.regex(/^\/[a-z0-9/_.-]{0,200}$/, 'must be a path of the site, such as /quote'))),
  nav: v.optional(
    v.union(
      [v.literal(false), v.pipe(text('the menu label'), v.maxLength(40, 'the menu label is longer than 40 characters'))],
      'must be the words of its menu link, or false',
    ),
  ),
});

/**
 * Checks a form's definition and fills in its defaults; throws naming the bad setting, so a
 * mistake stops the build and the start rather than reaching a visitor.
 * Hint: besides each setting's shape it refuses what only the whole can show: two fields of one
 * name, a reserved name, choices on a field that is not a select, bounds the wrong way round.
 */
export function defineForm(input: FormDefinitionInput): FormDefinition {
  const where = `form ${typeof input?.name === 'string' ? `"${input.name}"` : '(unnamed)'}`;
  const result = v.safeParse(FormShape, input);
  if (!result.success) {
    const issue = result.issues[0];
    throw new Error(`${where}: ${v.getDotPath(issue) ?? 'the definition'} ${issue.message}`);
  }
  const form = result.output;
  const seen = new Set<string>();
  for (const [index, field] of form.fields.entries()) {
    const at = `${where}: fields.${index} (${field.name})`;
    if (seen.has(field.name)) throw new Error(`${at}: a second field named ${field.name}`);
    seen.add(field.name);
    if (RESERVED_FIELD_NAMES.includes(field.name)) throw new Error(`${at}: the name ${field.name} is reserved`);
    requireCoherent(field, at);
  }
  return {
    name: form.name,
    title: form.title,
    fields: form.fields,
    submitLabel: form.submitLabel ?? texts.formDefaults.submit,
    busyLabel: form.busyLabel ?? texts.formDefaults.busy,
    thanks: form.thanks ?? texts.formDefaults.thanks,
    limit: form.limit,
    to: form.to,
    honeypot: form.honeypot ?? true,
    page: form.page ?? `/${form.name}`,
    nav: form.nav ?? form.title,
  };
}

function requireCoherent(field: v.InferOutput<typeof FieldShape>, at: string): void {
  if (field.type === 'select' && !field.choices) throw new Error(`${at}: a select needs its choices`);
  if (field.type !== 'select' && field.choices) throw new Error(`${at}: choices belong to a select only`);
  if (field.choices && new Set(field.choices.map((c) => c.value)).size !== field.choices.length) throw new Error(`${at}: two choices of one value`);
  if (!isTextLike(field.type) && (field.minLength !== undefined || field.maxLength !== undefined))
    throw new Error(`${at}: minLength and maxLength belong to text fields`);
  // Against the type's default too: a text field of minLength 300 and no maxLength (200) could never be filled in.
  const longest = maxLengthOf(field) ?? Number.POSITIVE_INFINITY;
  if ((field.minLength ?? 0) > longest) throw new Error(`${at}: minLength is above maxLength (${longest})`);
  if (field.type !== 'number' && field.type !== 'date' && (field.min !== undefined || field.max !== undefined)) {
    throw new Error(`${at}: min and max belong to number and date fields`);
  }
  const kind = field.type === 'number' ? 'number' : 'string';
  for (const key of ['min', 'max'] as const) {
    if (field[key] !== undefined && typeof field[key] !== kind)
      throw new Error(`${at}: ${key} must be ${kind === 'number' ? 'a number' : 'a date as YYYY-MM-DD'}`);
  }
  if (field.min !== undefined && field.max !== undefined && field.min > field.max) throw new Error(`${at}: min is above max`);
  if (field.rows !== undefined && field.type !== 'textarea') throw new Error(`${at}: rows belong to a textarea`);
  if (field.type !== 'file' && (field.accept !== undefined || field.maxSize !== undefined || field.maxFiles !== undefined))
    throw new Error(`${at}: accept, maxSize and maxFiles belong to a file field`);
}

/** Whether a form takes files: it has a field of type `file` (its posts are then read as a stream, src/lib/files/). */
export function takesFiles(form: FormDefinition): boolean {
  return form.fields.some((field) => field.type === 'file');
}

/** The most characters a text-like field takes: its own `maxLength`, else the default of its type. */
export function maxLengthOf(field: FieldDefinition): number | undefined {
  if (field.maxLength !== undefined) return field.maxLength;
  return isTextLike(field.type) ? DEFAULT_MAX_LENGTH[field.type] : undefined;
}

/**
 * Each rule's message for a field: its own, else one built from its label.
 * Hint: the defaults are the site's language's (src/lib/i18n); the label is the owner's words.
 */
export function messagesOf(field: FieldDefinition): Required<FieldMessages> {
  const own = field.messages ?? {};
  const max = maxLengthOf(field);
  const say = texts.validation;
  const { label } = field;
  const invalid = own.invalid ?? (field.type === 'email' ? INVALID_EMAIL : defaultInvalid(field));
  // A required email's missing value reads as a malformed one, as the spec's contact form does.
  const required = own.required ?? (field.type === 'email' ? invalid : field.type === 'checkbox' ? say.unticked(label) : say.required(label));
  return {
    required,
    tooShort: own.tooShort ?? say.tooShort(label, field.minLength ?? 0),
    tooLong: own.tooLong ?? say.tooLong(label, max ?? 0),
    tooSmall: own.tooSmall ?? say.tooSmall(label, String(field.min ?? '')),
    tooLarge: own.tooLarge ?? say.tooLarge(label, String(field.max ?? '')),
    invalid,
    characters: own.characters ?? (field.type === 'textarea' ? say.controlCharacters(label) : say.lineBreaks(label)),
  };
}

function defaultInvalid(field: FieldDefinition): string {
  const say = texts.validation;
  switch (field.type) {
    case 'number':
      return say.notNumber(field.label);
    case 'date':
      return say.notDate(field.label);
    case 'url':
      return say.notWebAddress(field.label);
    case 'tel':
      return say.notPhone(field.label);
    case 'select':
      return say.notChoice(field.label);
    default:
      return say.invalid(field.label);
  }
}

// A phone number as people write one: digits with spaces, dots, dashes, brackets and a leading +.
const PHONE = /^\+?[0-9 ().-]+$/;

/** The schema of one field: what a visitor may send, cleaned, and one message for its first problem. */
export function fieldSchema(field: FieldDefinition): v.GenericSchema<unknown, FieldValue> {
  const m = messagesOf(field);
  const required = field.required === true;
  const wire = v.optional(v.string(m.required), '');
  if (field.type === 'checkbox') {
    // A ticked box sends its value ("yes"); an unticked one sends nothing, and a script's "no" or "0" ticks nothing.
    return v.pipe(
      wire,
      v.transform((value) => value === CHECKBOX_VALUE),
      v.check((ticked) => ticked || !required, m.required),
    );
  }
  const empty = (value: string) => value === '';
  // An optional field left empty is stored empty; its rules apply to what a visitor typed.
  const rule = (check: (value: string) => boolean, message: string) => v.check<string, string>((value) => (!required && empty(value)) || check(value), message);
  const cleaned = v.pipe(wire, v.transform(cleanText));
  // A one-line field (a name) loses the characters that show as nothing, before it is trimmed and counted.
  const oneLine = v.pipe(
    wire,
    v.transform((value: string) => cleanText(withoutInvisible(value))),
  );
  const max = maxLengthOf(field);
  const min = field.minLength ?? (required ? 1 : 0);
  switch (field.type) {
    case 'text':
    case 'tel':
    case 'url':
      return v.pipe(
        oneLine,
        rule((s) => !empty(s), min > 1 ? m.tooShort : m.required),
        rule((s) => !hasControlCharacters(s), m.characters),
        rule((s) => characterCount(s) >= min, m.tooShort),
        rule((s) => max === undefined || characterCount(s) <= max, m.tooLong),
        // The minimum counts what a reader sees: two zero-width spaces are no name.
        rule((s) => visibleCount(s) >= min, m.tooShort),
        rule((s) => field.type !== 'tel' || (PHONE.test(s) && s.replace(/\D/g, '').length >= 5), m.invalid),
        rule((s) => field.type !== 'url' || isWebAddress(s), m.invalid),
      );
    case 'textarea':
      return v.pipe(
        cleaned,
        rule((s) => !empty(s), min > 1 ? m.tooShort : m.required),
        rule((s) => !hasControlCharactersInMultiline(s), m.characters),
        rule((s) => characterCount(s) >= min, m.tooShort),
        rule((s) => max === undefined || characterCount(s) <= max, m.tooLong),
      );
    case 'email':
      return v.pipe(
        cleaned,
        rule((s) => !empty(s), m.required),
        rule((s) => isEmailAddress(s), m.invalid),
        rule((s) => max === undefined || s.length <= max, m.tooLong),
      );
    case 'select':
      return v.pipe(
        wire,
        rule((s) => !empty(s), m.required),
        rule((s) => field.choices!.some((choice) => choice.value === s), m.invalid),
      );
    case 'date':
      return v.pipe(
        cleaned,
        rule((s) => !empty(s), m.required),
        rule((s) => isDate(s), m.invalid),
        rule((s) => field.min === undefined || s >= String(field.min), m.tooSmall),
        rule((s) => field.max === undefined || s <= String(field.max), m.tooLarge),
      );
    case 'file':
      // The reader (src/lib/files/) has checked each file's size and type; here only the count.
      // Stored as nothing in `fields`: the files table keeps a message's files.
      return v.pipe(
        v.optional(v.union([v.array(v.any()), v.string()], m.required), ''),
        v.transform((value): readonly unknown[] => (Array.isArray(value) ? value : [])),
        v.check((files) => files.length > 0 || !required, m.required),
        v.check((files) => files.length <= (field.maxFiles ?? 1), texts.validation.tooManyFiles(field.label, field.maxFiles ?? 1)),
        v.transform(() => null),
      );
    case 'number':
      return v.pipe(
        cleaned,
        rule((s) => !empty(s), m.required),
        rule((s) => /^-?\d{1,15}(?:\.\d{1,6})?$/.test(s), m.invalid),
        rule((s) => field.min === undefined || Number(s) >= Number(field.min), m.tooSmall),
        rule((s) => field.max === undefined || Number(s) <= Number(field.max), m.tooLarge),
        v.transform((s) => (empty(s) ? null : Number(s))),
      );
  }
}

function isWebAddress(value: string): boolean {
  if (!/^https?:\/\//i.test(value)) return false;
  try {
    return new URL(value).hostname.includes('.');
  } catch {
    return false;
  }
}

function isDate(value: string): boolean {
  if (!DATE.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/**
 * The valibot schema of a whole form: every field, and the honeypot when the form has one.
 * Hint: parse it with `abortPipeEarly` (parseForm does) so a visitor reads one message per field.
 */
export function formSchema(form: FormDefinition): v.ObjectSchema<Record<string, v.GenericSchema<unknown, FieldValue>>, undefined> {
  const entries: Record<string, v.GenericSchema<unknown, FieldValue>> = {};
  for (const field of form.fields) entries[field.name] = fieldSchema(field);
  // Not trimmed: a bot that fills the trap with spaces is still a bot.
  if (form.honeypot) entries[HONEYPOT_FIELD] = v.pipe(v.optional(v.string(HONEYPOT_MESSAGE), ''), v.maxLength(0, HONEYPOT_MESSAGE));
  return v.object(entries);
}

const SCHEMAS = new WeakMap<FormDefinition, ReturnType<typeof formSchema>>();

/** Checks a submission against its form: every field's cleaned value, or the spec's `errors` object. */
export function parseForm(form: FormDefinition, fields: Record<string, unknown>): { ok: true; values: FormValues } | { ok: false; errors: FormErrors } {
  let schema = SCHEMAS.get(form);
  if (!schema) {
    schema = formSchema(form);
    SCHEMAS.set(form, schema);
  }
  const result = v.safeParse(schema, fields, { abortPipeEarly: true });
  if (result.success) return { ok: true, values: result.output as FormValues };
  return { ok: false, errors: (v.flatten(result.issues).nested ?? {}) as FormErrors };
}

/** The fields a person types into, in form order: what a refused post's page shows again. */
export function visibleFieldNames(form: FormDefinition): string[] {
  return form.fields.map((field) => field.name);
}

/**
 * A stored value as the owner reads it in the mail, the admin and the exports, and a visitor on the
 * page that asks to confirm: the site's language's "Yes"/"No" for a box, a choice's label.
 */
export function displayValue(field: FieldDefinition | undefined, value: unknown): string {
  if (value === null || value === undefined || value === '') return '';
  if (field?.type === 'checkbox' || typeof value === 'boolean') return value === true ? texts.values.yes : texts.values.no;
  if (field?.type === 'select') return field.choices?.find((choice) => choice.value === value)?.label ?? String(value);
  return String(value);
}
