import type { SmtpConfig } from '../config.ts';
import { displayValue, type FormDefinition } from '../forms/definition.ts';
import { contactForm, formNamed, STORED_IN_COLUMNS } from '../forms/registry.ts';
import type { Submission } from './outbox.ts';

/** The characters of `hasControlCharacters` (forms/text.ts): none of them belongs in a header. */
const UNSAFE_IN_HEADER = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/u;

/** The email of one contact message, in the shape nodemailer's `sendMail` takes. */
export type ContactEmail = {
  /** The configured address under the site's sender name; nodemailer quotes and encodes the name. */
  from: { name: string; address: string };
  to: string;
  /**
   * The visitor, as an address object so that nodemailer quotes and encodes the name itself.
   * Hint: a name holding `=?` is left out (an empty name): nodemailer would put it in quotes,
   * inside which lenient mail programs still decode encoded words; the subject carries it.
   */
  replyTo?: { name: string; address: string };
  subject: string;
  text: string;
  messageId: string;
  date: Date;
  /** Who the SMTP server is told to deliver to: only the configured owner, whatever the headers say. */
  envelope: { from: string; to: string[] };
  /** Headers of our own (`Auto-Submitted` on an automatic reply). */
  headers?: Record<string, string>;
};

/** What of a submission goes into its email; a form's own fields (decision 0131) when it has any. */
export type ContactEmailSource = Pick<Submission, 'id' | 'createdAt' | 'name' | 'email' | 'message'> & Partial<Pick<Submission, 'form' | 'fields'>>;

/** Which site the mail comes from, so that an owner of several sites tells them apart. */
export type ContactEmailSite = {
  /** The site's name, at the start of the subject. */
  name: string;
  /** The display name of `From`. */
  senderName: string;
  /**
   * Where the owner reads the message: the site's public address when PUBLIC_URL is set and the
   * admin is on (a link in the mail), `''` when only the admin is on (its path), `undefined` without the admin.
   */
  adminOrigin: string | undefined;
};

/**
 * Builds the email for the site owner from a stored submission (docs/api/openapi.yaml): the
 * sender's name in the subject, the message as the body, the sender as Reply-To.
 * Hint: `From`, `To` and the envelope come only from configuration; the visitor's name is
 * cleaned of control characters here although validation already refuses them, because a
 * header is the one place where a stray line break turns text into instructions.
 */
export function composeContactEmail(submission: ContactEmailSource, smtp: SmtpConfig, site: ContactEmailSite): ContactEmail {
  const name = headerText(submission.name) || 'an unnamed visitor';
  const email = isPlainAddress(submission.email) ? submission.email : undefined;
  const created = new Date(submission.createdAt);
  const siteName = headerText(site.name);
  const where = site.adminOrigin === undefined ? '' : `Read it in your inbox: ${site.adminOrigin}/admin/messages/${submission.id}\n`;
  const form = formNamed(submission.form ?? 'contact');
  const owners = form && form !== contactForm ? form : undefined;
  // An owner's form may send its mail elsewhere; the envelope follows, still only from configuration.
  const to = owners?.to ?? smtp.to;
  const what = owners ? headerText(owners.title) : 'message';
  return {
    from: { name: headerText(site.senderName), address: smtp.from },
    to,
    ...(email && { replyTo: { name: name.includes('=?') ? '' : name, address: email } }),
    subject: `[${siteName}] New ${literalInHeader(what)} from ${literalInHeader(name)}`,
    text: `${bodyOf(submission, form)}\n\n-- \nFrom: ${name} <${email ?? headerText(submission.email)}>\nSent: ${created.toISOString()} (${owners ? `${what} #${submission.id}` : `contact message #${submission.id}`} on ${siteName})\n${where}`,
    messageId: contactMessageId(submission, smtp),
    // The time the visitor wrote, not the time of this attempt, so that every attempt
    // sends the very same message.
    date: created,
    envelope: { from: smtp.from, to: [to] },
  };
}

/**
 * The body of the owner's mail: the contact form's message, then each extra field with its
 * label; an owner's form lists every field but name and email (in the signature) in form order.
 * Hint: a field no longer in the definition is still listed, by its name, so nothing stored is hidden.
 */
function bodyOf(submission: ContactEmailSource, form: FormDefinition | undefined): string {
  const fields = submission.fields ?? {};
  const lines: string[] = [];
  const line = (label: string, value: string) => lines.push(value.includes('\n') ? `${label}:\n${value}` : `${label}: ${value}`);
  const listed = new Set<string>();
  const owners = form && form.name !== 'contact';
  for (const field of form?.fields ?? []) {
    listed.add(field.name);
    if (field.name === 'name' || field.name === 'email') continue;
    if (field.name === 'message') {
      if (owners) line(field.label, submission.message);
      continue;
    }
    if (STORED_IN_COLUMNS.includes(field.name)) continue;
    line(field.label, displayValue(field, fields[field.name]) || '(empty)');
  }
  for (const [key, value] of Object.entries(fields)) if (!listed.has(key)) line(key, displayValue(undefined, value));
  if (owners) return lines.join('\n');
  return lines.length > 0 ? `${submission.message}\n\n${lines.join('\n')}` : submission.message;
}

/**
 * The Message-ID of a submission's email, the same on every attempt, so that a message
 * sent again after a crash is recognisably the same message (and mail stores that
 * de-duplicate by Message-ID keep one copy).
 */
export function contactMessageId(submission: Pick<Submission, 'id' | 'createdAt'>, smtp: Pick<SmtpConfig, 'from'>): string {
  const domain = smtp.from.slice(smtp.from.lastIndexOf('@') + 1).toLowerCase();
  return `<contact-${submission.id}.${Date.parse(submission.createdAt)}@${domain}>`;
}

/**
 * Text made safe for a header: every control, line or paragraph separator and
 * bidirectional override becomes a space, and runs of spaces become one.
 */
export function headerText(value: string): string {
  return value.replace(new RegExp(UNSAFE_IN_HEADER, 'gu'), ' ').replace(/\s+/gu, ' ').trim();
}

/**
 * A visitor's text as it must stand in a header to reach the owner literally.
 * Hint: text holding `=?` could be read as an RFC 2047 encoded word, and nodemailer leaves a
 * valid one as it is, so `=?UTF-8?Q?Eve=0D=0ABcc:_x@y.z?=` would be decoded by mail
 * programs into a line break and a Bcc; such text is encoded here, whole, as encoded words
 * of our own. Other text is left to nodemailer, which encodes what is not ASCII.
 */
export function literalInHeader(text: string): string {
  return text.includes('=?') ? encodedWords(text) : text;
}

/** The longest run of UTF-8 bytes in one encoded word: 45 bytes are 60 in base64, plus `=?UTF-8?B?…?=`, 72 of RFC 2047's 75. */
const BYTES_PER_WORD = 45;

/**
 * `text` as RFC 2047 encoded words (UTF-8, base64), each within 75 characters, cut between
 * characters so that no word holds half of one, separated by spaces that decoders drop.
 */
export function encodedWords(text: string): string {
  const words: string[] = [];
  let bytes: Buffer[] = [];
  let size = 0;
  const flush = () => {
    words.push(`=?UTF-8?B?${Buffer.concat(bytes).toString('base64')}?=`);
    bytes = [];
    size = 0;
  };
  for (const character of text) {
    const encoded = Buffer.from(character, 'utf8');
    if (size + encoded.length > BYTES_PER_WORD) flush();
    bytes.push(encoded);
    size += encoded.length;
  }
  if (size > 0) flush();
  return words.join(' ');
}

/**
 * Whether a stored address is a bare `local@domain` that can go into Reply-To as it is.
 * Hint: one holding `=?` could be taken for an encoded word by a lenient mail program; it
 * stays in the body, where nothing decodes it, and Reply-To is left out.
 */
function isPlainAddress(value: string): boolean {
  return !UNSAFE_IN_HEADER.test(value) && !value.includes('=?') && /^[^\s<>()[\]",;:\\@]+@[^\s<>()[\]",;:\\@]+$/u.test(value);
}
