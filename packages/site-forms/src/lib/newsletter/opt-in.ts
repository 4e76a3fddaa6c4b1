import type { IncomingRequest } from '../http/form.ts';
import { texts } from '../i18n/texts.ts';
import { type ContactEmail, headerText } from '../mail/email.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { SmtpConfig } from '../mail/mailer-settings.ts';
import { type ConsentEvidence, type Consents, consentVersion, truncatedClient } from './consents.ts';
import { ourPath } from '../http/mount.ts';

/** Where a newsletter page's visitor lands after asking to subscribe with double opt-in: "check your inbox". */
export const CONFIRM_THANKS = '/thank-you/confirm-subscription/';

/**
 * Double opt-in as the site runs it for the local list and Resend: the signup's consent is
 * recorded as pending and a confirmation email goes out; the address reaches the list only from
 * the link in it (newsletter/newsletter-handlers.ts `handleNewsletterConfirmation`).
 */
export type OptIn = {
  consents: Consents;
  /** Records the consent and sends the confirmation email: `sent`, `not-sent` (one went out minutes ago, or already confirmed), or `failed`. */
  ask(email: string, evidence: ConsentEvidence, now: Date): Promise<'sent' | 'not-sent' | 'failed'>;
};

/** What the confirmation email needs. */
export type OptInDeps = { consents: Consents; mailer: Mailer; smtp: SmtpConfig; site: { name: string; senderName: string }; publicUrl: string };

/** The site's double opt-in. */
export function createOptIn({ consents, mailer, smtp, site, publicUrl }: OptInDeps): OptIn {
  return {
    consents,
    async ask(email, evidence, now) {
      const tokens = await consents.request(email, evidence, now);
      if (!tokens) return 'not-sent';
      const sent = await mailer.send(composeConfirmation(email, tokens, { smtp, site, publicUrl, now }));
      return sent.ok ? 'sent' : 'failed';
    },
  };
}

/**
 * The confirmation email, in the site's language: the link to confirm (48 hours), and one-click
 * unsubscribe by RFC 8058 (`List-Unsubscribe` with the HTTPS address that takes a POST, `List-Unsubscribe-Post`).
 */
export function composeConfirmation(
  email: string,
  tokens: { confirm: string; unsubscribe: string },
  { smtp, site, publicUrl, now }: { smtp: SmtpConfig; site: { name: string; senderName: string }; publicUrl: string; now: Date },
): ContactEmail {
  const confirm = `${publicUrl}${ourPath('/newsletter/confirm/')}?token=${tokens.confirm}`;
  const unsubscribe = `${publicUrl}${ourPath('/newsletter/unsubscribe/')}?token=${tokens.unsubscribe}`;
  const oneClick = `${publicUrl}${ourPath('/api/newsletter/unsubscribe')}?token=${tokens.unsubscribe}`;
  const name = headerText(site.name);
  const domain = smtp.from.slice(smtp.from.lastIndexOf('@') + 1).toLowerCase();
  return {
    from: { name: headerText(site.senderName), address: smtp.from },
    to: email,
    subject: texts.mail.confirmation.subject(name),
    text: [...texts.mail.confirmation.lines(name, confirm, unsubscribe), ''].join('\n'),
    messageId: `<newsletter-confirm.${now.getTime()}.${tokens.unsubscribe.slice(0, 8)}@${domain}>`,
    date: now,
    envelope: { from: smtp.from, to: [email] },
    headers: { 'List-Unsubscribe': `<${oneClick}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click', 'Auto-Submitted': 'auto-generated' },
  };
}

/** The proof of what a visitor agreed to: the page they were on, the consent text of this build, a truncated address. */
export function evidenceOf(request: IncomingRequest, ip: string, text: string): ConsentEvidence {
  let page = '/';
  try {
    const referer = new URL(request.headers.get('referer') ?? '');
    if (referer.origin === new URL(request.url).origin) page = referer.pathname.slice(0, 200);
  } catch {}
  return { page, text, version: consentVersion(text), client: truncatedClient(ip) };
}
