import { randomBytes } from 'node:crypto';
import { ourPath } from '../http/mount.ts';
import { type ContactEmail, headerText } from '../mail/email.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { SmtpConfig } from '../mail/mailer-settings.ts';
import type { LinkKind } from './links.ts';

// The mail that carries an invitation or a sign-in link (issue 42, decision 0289): from
// CONTACT_FROM to the one person, in English like the admin. When it cannot go (SMTP off, the
// send failed, the address had its mails for the day), the owner who asked is shown the link once.

/** The address of a link: `/admin/welcome/<token>` under the site's origin (and its mount path). */
export function linkUrl(origin: string, token: string): string {
  return `${origin}${ourPath(`/admin/welcome/${token}`)}`;
}

/** One link mail to write. */
export type LinkMailing = {
  kind: LinkKind;
  /** The person's address (lower-cased). */
  to: string;
  url: string;
  expiresAt: Date;
  /** Who asked for it: the inviter's name, or none for a reset the person asked themselves. */
  by?: string | undefined;
  /** Under what role an invitation makes them. */
  role?: string | undefined;
};

/** The site a link mail comes from. */
export type LinkMailSite = { name: string; senderName: string };

/**
 * The mail of a link: the subject says what it is and for which site; the body the link, until
 * when it works, who sent it, and that it works once.
 * Hint: names go through `headerText` in the subject and stay plain text in the body.
 */
export function composeLinkMail(mailing: LinkMailing, smtp: Pick<SmtpConfig, 'from'>, site: LinkMailSite, now: Date): ContactEmail {
  const siteName = headerText(site.name);
  const until = `${mailing.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const invite = mailing.kind === 'invite';
  const subject = invite ? `You are invited to the inbox of ${siteName}` : `Your sign-in link for the inbox of ${siteName}`;
  const opening = invite
    ? `${mailing.by ? headerText(mailing.by) : 'The owner'} invited you to read the messages of ${siteName}${mailing.role ? ` as ${mailing.role}` : ''}.`
    : `${mailing.by ? `${headerText(mailing.by)} sent you a link` : 'Someone asked for a link'} to set a new password for the inbox of ${siteName}.`;
  const closing = invite
    ? 'Open the link, choose your name and a password, and you are in.'
    : 'Open the link and choose a new password. If you did not ask for it, ignore this mail: your password stays as it is.';
  const text = [opening, '', mailing.url, '', `The link works once, until ${until}.`, closing, ''].join('\n');
  const domain = smtp.from.slice(smtp.from.lastIndexOf('@') + 1).toLowerCase();
  return {
    from: { name: headerText(site.senderName), address: smtp.from },
    to: mailing.to,
    subject,
    text,
    messageId: `<link.${now.getTime()}.${randomBytes(6).toString('hex')}@${domain}>`,
    date: now,
    envelope: { from: smtp.from, to: [mailing.to] },
  };
}

/** What became of a link mail: `sent`, or why not (then an owner is shown the link). */
export type LinkMailResult = 'sent' | 'off' | 'limited' | 'failed';

/** Sends link mails: SMTP when configured, each address at most as often as `allow` says. */
export type LinkMailer = {
  /** Whether mail can go at all (SMTP_URL set): the reset page is offered only then. */
  on: boolean;
  send(mailing: LinkMailing, now: Date): Promise<LinkMailResult>;
  /**
   * Mails a link that `make` makes only once the address may have another mail: a reset anyone
   * can ask for must not revoke the last link mailed when no new one would go (decision 0304).
   * `nothing` when `make` made none.
   */
  sendMade(to: string, make: () => Promise<LinkMailing | undefined>, now: Date): Promise<LinkMailResult | 'nothing'>;
};

/**
 * The link mailer over the site's SMTP (`undefined` when off) and the per-address limit; a
 * failed send is logged without the link, whose token must not reach a log.
 */
export function createLinkMailer(options: {
  smtp: Pick<SmtpConfig, 'from'> | undefined;
  mailer: Mailer | undefined;
  site: LinkMailSite;
  allow: (email: string) => Promise<boolean>;
  onFailure?: (reason: string) => void;
}): LinkMailer {
  const { smtp, mailer, site, allow } = options;
  const sendMade: LinkMailer['sendMade'] = async (to, make, now) => {
    if (!smtp || !mailer) return 'off';
    if (!(await allow(to))) return 'limited';
    const mailing = await make();
    if (!mailing) return 'nothing';
    const result = await mailer.send(composeLinkMail(mailing, smtp, site, now));
    if (result.ok) return 'sent';
    options.onFailure?.(result.reason);
    return 'failed';
  };
  return {
    on: smtp !== undefined && mailer !== undefined,
    sendMade,
    // A link made already (an owner's, shown to them when it cannot go): never `nothing`.
    send: (mailing, now) => sendMade(mailing.to, async () => mailing, now) as Promise<LinkMailResult>,
  };
}
