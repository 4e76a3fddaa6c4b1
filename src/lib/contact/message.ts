import type { SmtpConfig } from '../mail/settings.ts';
import { type ContactEmail, type ContactEmailSite, headerText, literalInHeader, UNSAFE_IN_HEADER } from '../mail/email.ts';
import type { Submission } from './outbox.ts';

/** What of a submission goes into its email. */
export type ContactEmailSource = Pick<Submission, 'id' | 'createdAt' | 'name' | 'email' | 'message'>;

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
  return {
    from: { name: headerText(site.senderName), address: smtp.from },
    to: smtp.to,
    ...(email && { replyTo: { name: name.includes('=?') ? '' : name, address: email } }),
    subject: `[${siteName}] New message from ${literalInHeader(name)}`,
    text: `${submission.message}\n\n-- \nFrom: ${name} <${email ?? headerText(submission.email)}>\nSent: ${created.toISOString()} (contact message #${submission.id} on ${siteName})\n${where}`,
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
 * Whether a stored address is a bare `local@domain` that can go into Reply-To as it is.
 * Hint: one holding `=?` could be taken for an encoded word by a lenient mail program; it
 * stays in the body, where nothing decodes it, and Reply-To is left out.
 */
function isPlainAddress(value: string): boolean {
  return !UNSAFE_IN_HEADER.test(value) && !value.includes('=?') && /^[^\s<>()[\]",;:\\@]+@[^\s<>()[\]",;:\\@]+$/u.test(value);
}
