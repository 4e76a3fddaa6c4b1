import type { SmtpConfig } from '../config.ts';
import type { Submission } from './outbox.ts';

/** The characters of `hasControlCharacters` (forms/text.ts): none of them belongs in a header. */
const UNSAFE_IN_HEADER = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/u;

/** The email of one contact message, in the shape nodemailer's `sendMail` takes. */
export type ContactEmail = {
  from: string;
  to: string;
  /** The visitor, as an address object so that nodemailer quotes and encodes the name itself. */
  replyTo?: { name: string; address: string };
  subject: string;
  text: string;
  messageId: string;
  date: Date;
  /** Who the SMTP server is told to deliver to: only the configured owner, whatever the headers say. */
  envelope: { from: string; to: string[] };
};

/** What of a submission goes into its email. */
export type ContactEmailSource = Pick<Submission, 'id' | 'createdAt' | 'name' | 'email' | 'message'>;

/**
 * Builds the email for the site owner from a stored submission (SPEC.md 4.2): the
 * sender's name in the subject, the message as the body, the sender as Reply-To.
 * Hint: `From`, `To` and the envelope come only from configuration; the visitor's name is
 * cleaned of control characters here although validation already refuses them, because a
 * header is the one place where a stray line break turns text into instructions.
 */
export function composeContactEmail(submission: ContactEmailSource, smtp: SmtpConfig): ContactEmail {
  const name = headerText(submission.name) || 'an unnamed visitor';
  const email = isPlainAddress(submission.email) ? submission.email : undefined;
  const created = new Date(submission.createdAt);
  return {
    from: smtp.from,
    to: smtp.to,
    ...(email && { replyTo: { name, address: email } }),
    subject: `New message from ${name}`,
    text: `${submission.message}\n\n-- \nFrom: ${name} <${email ?? headerText(submission.email)}>\nSent: ${created.toISOString()} (contact message #${submission.id})\n`,
    messageId: contactMessageId(submission, smtp),
    // The time the visitor wrote, not the time of this attempt, so that every attempt
    // sends the very same message.
    date: created,
    envelope: { from: smtp.from, to: [smtp.to] },
  };
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

/** Whether a stored address is a bare `local@domain` that can go into Reply-To as it is. */
function isPlainAddress(value: string): boolean {
  return !UNSAFE_IN_HEADER.test(value) && /^[^\s<>()[\]",;:\\@]+@[^\s<>()[\]",;:\\@]+$/u.test(value);
}
