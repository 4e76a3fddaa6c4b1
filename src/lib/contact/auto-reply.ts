import { createHash } from 'node:crypto';
import type { SmtpConfig } from '../mail/settings.ts';
import type { Sql } from '../store/sql.ts';
import type { TryEnd } from '../webhooks/deliveries.ts';
import type { SiteEvent } from '../webhooks/events.ts';
import { texts } from '../i18n/texts.ts';
import { type ContactEmail, headerText } from '../mail/email.ts';
import type { Mailer } from '../mail/mailer.ts';

/** At most one automatic reply to an address in this long, whatever it sends. */
export const AUTO_REPLY_INTERVAL_MS = 24 * 3600 * 1000;

/** The owner's words for the reply (config/auto-reply.ts). */
export type AutoReplySettings = { subject: string; text: string; includeMessage: boolean };

/** What the reply needs: the words, the mail server, the site's names, and the record of whom it answered. */
export type AutoReplyDeps = { settings: AutoReplySettings; smtp: SmtpConfig; mailer: Mailer; site: { name: string; senderName: string }; sql: Sql };

/**
 * Answers the sender of an accepted message (a `contact.received` event, delivered durably by the
 * webhook worker), at most once a day per address, marked as an automatic reply (RFC 3834).
 * Hint: it is only ever asked for accepted messages, never held ones, so nobody can make the form
 * mail a stranger; and the once-a-day rule holds across instances (one conditional write).
 */
export function createAutoReply({ settings, smtp, mailer, site, sql }: AutoReplyDeps): (event: SiteEvent, now: Date) => Promise<TryEnd> {
  return async (event, now) => {
    const data = event.data as { id?: number; name?: string; email?: string; message?: string; createdAt?: string };
    const address = data.email ?? '';
    if (!/^[^\s@<>,;"]+@[^\s@<>,;"]+$/.test(address)) return { kind: 'delivered', status: 204 };
    const key = createHash('sha256').update(address.toLowerCase()).digest('hex');
    const previous = await sql.get<{ last_sent_at: string }>('SELECT last_sent_at FROM auto_replies WHERE address_hash = ?', [key]);
    const since = new Date(now.getTime() - AUTO_REPLY_INTERVAL_MS).toISOString();
    // Taken before the send, given back if the send fails: of two instances, one answers.
    const { changes } = await sql.run(
      `INSERT INTO auto_replies (address_hash, last_sent_at) VALUES (?, ?)
       ON CONFLICT (address_hash) DO UPDATE SET last_sent_at = excluded.last_sent_at WHERE auto_replies.last_sent_at <= ?`,
      [key, now.toISOString(), since],
    );
    // Already answered today: done, without a second mail.
    if (changes === 0) return { kind: 'delivered', status: 208 };
    const sent = await mailer.send(composeAutoReply(data, settings, smtp, site, now));
    if (sent.ok) return { kind: 'delivered', status: 250 };
    if (previous) await sql.run('UPDATE auto_replies SET last_sent_at = ? WHERE address_hash = ?', [previous.last_sent_at, key]);
    else await sql.run('DELETE FROM auto_replies WHERE address_hash = ?', [key]);
    return { kind: 'retry', status: null, error: `the mail server did not take it (${sent.reason})` };
  };
}

/** The reply itself: from the site to the sender, `Auto-Submitted: auto-replied`, answering replies to the owner. */
export function composeAutoReply(
  data: { id?: number; name?: string; email?: string; message?: string },
  settings: AutoReplySettings,
  smtp: SmtpConfig,
  site: { name: string; senderName: string },
  now: Date,
): ContactEmail {
  // The sender's words go to an address they typed: nothing of theirs may be a link the reply carries.
  const name = withoutLiveLinks(headerText(data.name ?? '')) || texts.mail.autoReply.nameless;
  const fill = (text: string) => text.replaceAll('{site}', site.name).replaceAll('{name}', name);
  const copy = settings.includeMessage && data.message ? `\n\n-- \n${texts.mail.autoReply.yourMessage}\n\n${withoutLiveLinks(data.message)}\n` : '\n';
  const domain = smtp.from.slice(smtp.from.lastIndexOf('@') + 1).toLowerCase();
  return {
    from: { name: headerText(site.senderName), address: smtp.from },
    to: data.email!,
    // A reply to the automatic reply reaches the owner, not the site's sending address.
    replyTo: { name: headerText(site.senderName), address: smtp.to },
    subject: headerText(fill(settings.subject)),
    text: `${fill(settings.text)}${copy}`,
    messageId: `<auto-reply-${data.id ?? 0}.${now.getTime()}@${domain}>`,
    date: now,
    envelope: { from: smtp.from, to: [data.email!] },
    headers: { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All' },
  };
}

/**
 * A visitor's text with no link a mail program would make live: a scheme's `://` becomes `[:]//`
 * and a dot between a label and a letter `[.]` (`https[:]//win-big[.]com`, `www[.]x[.]com`,
 * `a@x[.]com`), as security reports "defang" the addresses they quote.
 * Hint: numbers keep their dots (3.5); the full-width and ideographic dots that browsers read
 * as dots in a host name are broken too.
 */
export function withoutLiveLinks(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*):\/\//gi, '$1[:]//').replace(/(?<=[\p{L}\p{N}_-])[.\u3002\uff0e\uff61](?=\p{L})/gu, '[.]');
}

/** Forgets whom the automatic reply answered before `before` (the housekeeping keeps two days). */
export async function pruneAutoReplies(sql: Sql, before: Date): Promise<number> {
  return (await sql.run('DELETE FROM auto_replies WHERE last_sent_at < ?', [before.toISOString()])).changes;
}
