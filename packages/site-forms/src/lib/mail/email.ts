import type { Readable } from 'node:stream';

/**
 * What every mail the site sends is made of, whoever it goes to (the owner's copy of a message,
 * the digest, a subscriber's confirmation, an automatic reply): its shape, the site it comes
 * from, and text made safe for headers.
 */

/** The characters of `hasControlCharacters` (forms/text.ts): none of them belongs in a header. */
export const UNSAFE_IN_HEADER = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/u;

/** The email of one contact message, in the shape nodemailer's `sendMail` takes. */
export type ContactEmail = {
  /** The configured address under the site's sender name; nodemailer quotes and encodes the name. */
  from: { name: string; address: string };
  /** One address, or several (nodemailer writes them as one comma list). */
  to: string | string[];
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
  /** Who the SMTP server is told to deliver to: only configured addresses and the admin's people, whatever the headers say. */
  envelope: { from: string; to: string[] };
  /** Headers of our own (`Auto-Submitted` on an automatic reply). */
  headers?: Record<string, string>;
  /**
   * Files read as the mail is sent (a message's files, within MAIL_ATTACH_MAX_BYTES), never a
   * path or a URL nodemailer would open itself; the sender lets go of each stream after the send.
   */
  attachments?: MailAttachment[];
};

/** One attached file: the visitor's name (nodemailer encodes it), the type read from its bytes, its bytes as a stream. */
export type MailAttachment = { filename: string; contentType: string; content: Readable };

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
  /** The IANA time zone the mail's times are written in (site.config.ts `timeZone`); UTC unless given. */
  timeZone?: string;
};

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
