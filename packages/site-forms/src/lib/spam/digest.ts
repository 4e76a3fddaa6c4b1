import type { SmtpConfig } from '../mail/mailer-settings.ts';
import { type CommandStyle, COMMAND_STYLE, toolCommand } from '../commands.ts';
import { formatTime } from '../i18n/time.ts';
import { language, texts } from '../i18n/texts.ts';
import { type ContactEmail, type ContactEmailSite, headerText } from '../mail/email.ts';
import type { SpamReason } from './verdict.ts';
import { ourPath } from '../http/mount.ts';

/** Why a message was held, in the site's language; typed by the reasons, so a new reason without its text fails `npm run check`. */
const REASONS: Record<SpamReason, string> = texts.spamDigest.reasons;

/** A message held as spam, as the digest lists it. */
export type HeldMessage = { id: number; createdAt: string; name: string; message: string; reasons: readonly string[] };

/** What the digest tells: how many were held, and the newest of them. */
export type HeldDigest = { count: number; newest: readonly HeldMessage[] };

/** The digest goes out at most once in this long (issue 13: at most once a day). */
export const DIGEST_INTERVAL_MS = 24 * 3600 * 1000;

/** How many messages the digest lists one by one (the newest); the rest are counted. */
export const DIGEST_LIST_LIMIT = 50;

/** The time of day the owner wants the digest at (`DIGEST_TIME`, UTC). */
export type DigestTime = { hour: number; minute: number };

/**
 * Whether a digest may go out now, given when the last one went (undefined: never): a day after
 * it, or, with a time of day, once that time has passed today and none went since.
 */
export function digestDue(lastSentAt: string | undefined, now: Date, at?: DigestTime): boolean {
  // The first one at the owner's time, not at whatever hour the server first started.
  if (lastSentAt === undefined) return at === undefined || todayAt(now, at) <= now.getTime();
  if (at === undefined) return now.getTime() - Date.parse(lastSentAt) >= DIGEST_INTERVAL_MS;
  return Date.parse(lastSentAt) < latestSlot(now, at);
}

/** When the next digest is due at the owner's time of day, after `now`. */
export function nextDigestAt(now: Date, at: DigestTime): Date {
  return new Date(latestSlot(now, at) + DIGEST_INTERVAL_MS);
}

/** The owner's time of day today, or yesterday's when today's has not come yet (ms). */
function latestSlot(now: Date, at: DigestTime): number {
  const today = todayAt(now, at);
  return today <= now.getTime() ? today : today - DIGEST_INTERVAL_MS;
}

function todayAt(now: Date, { hour, minute }: DigestTime): number {
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), hour, minute);
}

/**
 * The digest email of what was held since the last one, in the site's language (decision 0145):
 * the count, then the newest messages' id, time (in the site's zone), name, first line and
 * reasons, and where to review them (the admin when it is on, else the commands that work where
 * the site runs, decision 0205).
 * Hint: the visitor's text goes only into the body, never a header, and is cut to one line.
 */
export function composeDigest(
  { count, newest }: HeldDigest,
  smtp: SmtpConfig,
  site: ContactEmailSite,
  {
    now,
    retentionDays,
    commandStyle = COMMAND_STYLE,
    to = smtp.to,
    tag,
  }: {
    now: Date;
    retentionDays: number;
    commandStyle?: CommandStyle;
    /** Whom it goes to: CONTACT_TO unless given (a person who asked for it, people/recipients.ts). */
    to?: string;
    /** Told apart from the round's other digests in its Message-ID (a person's id); none for CONTACT_TO's. */
    tag?: string | undefined;
  },
): ContactEmail {
  const words = texts.spamDigest;
  const timeZone = site.timeZone ?? 'UTC';
  const lines = newest.slice(0, DIGEST_LIST_LIMIT).map((m) => {
    const reasons = m.reasons.map((reason) => REASONS[reason as SpamReason] ?? reason).join('; ');
    const at = formatTime(m.createdAt, language, timeZone);
    return `#${m.id}  ${at}  ${oneLine(m.name, 60)}\n    ${oneLine(firstLine(m.message), 100)}\n    ${words.heldBecause(reasons)}`;
  });
  const listed = Math.min(count, lines.length);
  const more = count > listed ? [words.older(count - listed)] : [];
  const inbox = (args: string) => toolCommand('inbox', args, { style: commandStyle });
  const review =
    site.adminOrigin === undefined
      ? words.byCommand(inbox('list --status spam'), inbox('show <id>'), inbox('release <id>'))
      : words.inAdmin(`${site.adminOrigin}${ourPath('/admin/messages?status=spam')}`);
  const text = [words.summary(count), '', ...lines, ...more, '', ...review, words.retention(retentionDays), ''].join('\n');
  const domain = smtp.from.slice(smtp.from.lastIndexOf('@') + 1).toLowerCase();
  return {
    from: { name: headerText(site.senderName), address: smtp.from },
    to,
    subject: words.subject(headerText(site.name), count),
    text,
    messageId: `<spam-digest.${now.getTime()}${tag === undefined ? '' : `.${tag}`}@${domain}>`,
    date: now,
    envelope: { from: smtp.from, to: [to] },
  };
}

function firstLine(text: string): string {
  return text.trim().split(/\r?\n/, 1)[0] ?? '';
}

/** Text on one line, without control characters, cut to `max` characters with an ellipsis. */
function oneLine(text: string, max: number): string {
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/gu, ' ').trim();
  const chars = [...clean];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : clean;
}
