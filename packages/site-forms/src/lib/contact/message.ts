import type { FormDefinition } from '../forms/definition.ts';
import { contactForm, formNamed, forms, presentFields } from '../forms/registry.ts';
import { formatTime } from '../i18n/time.ts';
import { language, texts } from '../i18n/texts.ts';
import { openForDownload, planAttachments } from '../files/delivery.ts';
import type { FileRecords, StoredFile } from '../files/files.ts';
import { formatSize } from '../files/size.ts';
import type { FileStorage } from '../files/storage.ts';
import { type ContactEmail, type ContactEmailSite, headerText, literalInHeader, type MailAttachment, UNSAFE_IN_HEADER } from '../mail/email.ts';
import type { SmtpConfig } from '../mail/mailer-settings.ts';
import type { Submission } from './outbox.ts';
import { ourPath } from '../http/mount.ts';
import { type MailForm, mailRecipients } from '../people/recipients.ts';

/** What of a submission goes into its email; a form's own fields (decision 0131) when it has any. */
export type ContactEmailSource = Pick<Submission, 'id' | 'createdAt' | 'name' | 'email' | 'message'> & Partial<Pick<Submission, 'form' | 'fields'>>;

/**
 * Builds the email for the site owner from a stored submission (docs/api/openapi.yaml): the
 * sender's name in the subject, the message as the body, the sender as Reply-To, in the site's
 * language around the owner's own labels and titles (decision 0145).
 * `recipients` are whom it goes to (people/recipients.ts), the form's own addresses or CONTACT_TO
 * when not given; the Message-ID and Date are the same whoever it goes to.
 * Hint: `From`, `To` and the envelope come only from configuration and the admin's people; the visitor's name is
 * cleaned of control characters here although validation already refuses them, because a
 * header is the one place where a stray line break turns text into instructions.
 */
export function composeContactEmail(
  submission: ContactEmailSource,
  smtp: SmtpConfig,
  site: ContactEmailSite,
  files?: MailFilePlan,
  recipients?: readonly string[],
): ContactEmail {
  const words = texts.ownerMail;
  const name = headerText(submission.name) || words.unnamed;
  const email = isPlainAddress(submission.email) ? submission.email : undefined;
  const created = new Date(submission.createdAt);
  const siteName = headerText(site.name);
  const where = site.adminOrigin === undefined ? '' : `${words.readIt(`${site.adminOrigin}${ourPath(`/admin/messages/${submission.id}`)}`)}\n`;
  const form = formNamed(submission.form ?? 'contact');
  const owners = form && form !== contactForm ? form : undefined;
  // The people's choices (people/recipients.ts, read by the caller at each try), or, without
  // them, the form's own addresses or CONTACT_TO: the envelope is only ever these, never a visitor's text.
  const list = recipients && recipients.length > 0 ? [...recipients] : mailRecipients([], ownerMailForm(submission.form), smtp.to);
  const to = list.length === 1 ? list[0]! : list;
  const title = owners && headerText(owners.title);
  // In the site's language and time zone: a German owner reads `28. November 2026 um 18:14 MEZ`, not ISO 8601 in UTC.
  const sent = formatTime(created, language, site.timeZone ?? 'UTC');
  return {
    from: { name: headerText(site.senderName), address: smtp.from },
    to,
    ...(email && { replyTo: { name: name.includes('=?') ? '' : name, address: email } }),
    subject: title ? words.formSubject(siteName, literalInHeader(title), literalInHeader(name)) : words.contactSubject(siteName, literalInHeader(name)),
    text: `${bodyOf(submission, form)}${files ? filesSection(files) : ''}\n\n-- \n${words.from(name, email ?? headerText(submission.email))}\n${
      title ? words.formSent(sent, title, submission.id, siteName) : words.contactSent(sent, submission.id, siteName)
    }\n${where}`,
    messageId: contactMessageId(submission, smtp),
    // The time the visitor wrote, not the time of this attempt, so that every attempt
    // sends the very same message.
    date: created,
    envelope: { from: smtp.from, to: list },
  };
}

/**
 * A message's form as its mail's recipients need it: its name and, for an owner's form, its own
 * addresses (forms.config.ts `to`); the contact form's mail goes to CONTACT_TO and the people.
 */
export function ownerMailForm(name: string | undefined): MailForm {
  const form = formNamed(name ?? 'contact');
  return form && form !== contactForm ? { name: form.name, to: form.to } : { name: name ?? 'contact' };
}

/**
 * A message's files as its mail carries them: attached (within MAIL_ATTACH_MAX_BYTES), only named
 * to be downloaded from the admin, or named as gone (no longer in the storage when the mail was made).
 */
export type MailFilePlan = {
  attached: readonly Pick<StoredFile, 'name' | 'size'>[];
  linked: readonly Pick<StoredFile, 'name' | 'size'>[];
  gone?: readonly Pick<StoredFile, 'name' | 'size'>[];
};

/** Where the owner's mail finds a message's files, and how many bytes of them it may carry (MAIL_ATTACH_MAX_BYTES). */
export type MailFiles = { records: Pick<FileRecords, 'filesOf'>; storage: Pick<FileStorage, 'open'>; maxBytes: number };

/**
 * The owner's mail of a message with its files: each listed in the body, the first within
 * `maxBytes` together attached as streams read while the mail is sent, the rest to download
 * from the admin (whose link the mail has when the admin is on). A message without files gets
 * `composeContactEmail`'s mail, byte for byte.
 * Hint: the split depends on the stored files alone, so every retry sends the same mail; a file
 * gone from the storage is named as gone and the mail goes with the others, while a file the
 * storage cannot open now (an outage) fails this attempt, which the worker retries.
 */
export async function composeOwnerMail(
  submission: ContactEmailSource,
  smtp: SmtpConfig,
  site: ContactEmailSite,
  files: MailFiles,
  recipients?: readonly string[],
): Promise<ContactEmail> {
  const stored = await files.records.filesOf(submission.id);
  if (stored.length === 0) return composeContactEmail(submission, smtp, site, undefined, recipients);
  const { attached, linked } = planAttachments(stored, files.maxBytes);
  const attachments: MailAttachment[] = [];
  const riding: StoredFile[] = [];
  const gone: StoredFile[] = [];
  try {
    for (const file of attached) {
      // Missing (removed by hand, a bucket emptied) is `undefined`: named as gone, so the message is still delivered.
      // Anything else is thrown without the storage's own words (an S3 provider's), kept out of the message's history.
      const content = await openForDownload(files.storage, file.storageKey);
      if (content === undefined) gone.push(file);
      else {
        attachments.push({ filename: file.name, contentType: file.type, content });
        riding.push(file);
      }
    }
  } catch (error) {
    for (const attachment of attachments) attachment.content.destroy();
    throw error;
  }
  return {
    ...composeContactEmail(submission, smtp, site, { attached: riding, linked, gone }, recipients),
    ...(attachments.length > 0 && { attachments }),
  };
}

/** The files' lines of the body: each file's name and size, and whether it is attached, only linked or gone. */
function filesSection({ attached, linked, gone = [] }: MailFilePlan): string {
  const words = texts.ownerMail;
  const size = (bytes: number) => formatSize(bytes, language);
  const lines = [
    ...attached.map((f) => words.attached(f.name, size(f.size))),
    ...linked.map((f) => words.notAttached(f.name, size(f.size))),
    ...gone.map((f) => words.gone(f.name, size(f.size))),
  ];
  return lines.length === 0 ? '' : `\n\n${words.files}\n${lines.join('\n')}`;
}

/**
 * The body of the owner's mail: the contact form's message, then each extra field with its
 * label (`presentFields`, as the admin shows them); an owner's form lists every field but name
 * and email (in the signature) in form order, its message at its place.
 */
function bodyOf(submission: ContactEmailSource, form: FormDefinition | undefined): string {
  const owners = form !== undefined && form.name !== 'contact';
  const presented = presentFields(form?.name ?? submission.form ?? 'contact', submission.fields ?? {}, forms, owners ? submission.message : undefined);
  const lines = presented.map(({ label, value }) => {
    const shown = value || texts.values.empty;
    return shown.includes('\n') ? `${label}:\n${shown}` : `${label}: ${shown}`;
  });
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
 * Whether a stored address is a bare `local@domain` that can go into Reply-To as it is.
 * Hint: one holding `=?` could be taken for an encoded word by a lenient mail program; it
 * stays in the body, where nothing decodes it, and Reply-To is left out.
 */
function isPlainAddress(value: string): boolean {
  return !UNSAFE_IN_HEADER.test(value) && !value.includes('=?') && /^[^\s<>()[\]",;:\\@]+@[^\s<>()[\]",;:\\@]+$/u.test(value);
}
