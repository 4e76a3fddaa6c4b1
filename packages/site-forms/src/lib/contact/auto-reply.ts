import { createHash } from 'node:crypto';
import type { SmtpConfig } from '../mail/mailer-settings.ts';
import type { Sql, SqlSession } from '../sql/sql.ts';
import type { TryEnd } from '../webhooks/deliveries.ts';
import type { SiteEvent } from '../webhooks/events.ts';
import { texts } from '../i18n/texts.ts';
import { type ContactEmail, headerText } from '../mail/email.ts';
import type { Mailer } from '../mail/mailer.ts';

/** At most one automatic reply to an address in this long, whatever it sends. */
export const AUTO_REPLY_INTERVAL_MS = 24 * 3600 * 1000;

/** The owner's words for the reply, and how many the site sends in a clock hour at most (config/auto-reply.ts). */
export type AutoReplySettings = { subject: string; text: string; includeMessage: boolean; maxPerHour: number };

/** What the reply needs: the words, the mail server, the site's names, and the record of whom it answered. */
export type AutoReplyDeps = { settings: AutoReplySettings; smtp: SmtpConfig; mailer: Mailer; site: { name: string; senderName: string }; sql: Sql };

/**
 * Answers the sender of an accepted message (a `contact.received` event, delivered durably by the
 * webhook worker), marked as an automatic reply (RFC 3834): only when the post showed a person's
 * browser (a solved proof or Turnstile, stored with the message), at most once a day per address,
 * and at most `maxPerHour` in each clock hour over the whole site (docs/decisions/0149-who-gets-an-automatic-reply.md).
 * Hint: each answer records why nothing was sent as its status: 204 no address, 403 no person
 * shown, 208 answered today, 429 the hour is full. Both caps hold across instances (conditional writes).
 */
export function createAutoReply({ settings, smtp, mailer, site, sql }: AutoReplyDeps): (event: SiteEvent, now: Date) => Promise<TryEnd> {
  return async (event, now) => {
    const data = event.data as { id?: number; name?: string; email?: string; message?: string; createdAt?: string };
    const address = data.email ?? '';
    if (!/^[^\s@<>,;"]+@[^\s@<>,;"]+$/.test(address)) return { kind: 'delivered', status: 204 };
    // A script posts as a browser without JavaScript and confirms on the next page: only a proof stands for a person.
    const message = await sql.get<{ shown_person: number | string }>('SELECT shown_person FROM submissions WHERE id = ?', [data.id ?? 0]);
    if (Number(message?.shown_person) !== 1) return { kind: 'delivered', status: 403 };
    const key = createHash('sha256').update(address.toLowerCase()).digest('hex');
    const hour = now.toISOString().slice(0, 13);
    const taken = await sql.transaction(async (tx) => {
      const previous = await tx.get<{ last_sent_at: string }>('SELECT last_sent_at FROM auto_replies WHERE address_hash = ?', [key]);
      const since = new Date(now.getTime() - AUTO_REPLY_INTERVAL_MS).toISOString();
      // Taken before the send, given back if the send fails: of two instances, one answers.
      const { changes } = await tx.run(
        `INSERT INTO auto_replies (address_hash, last_sent_at) VALUES (?, ?)
         ON CONFLICT (address_hash) DO UPDATE SET last_sent_at = excluded.last_sent_at WHERE auto_replies.last_sent_at <= ?`,
        [key, now.toISOString(), since],
      );
      if (changes === 0) return { kind: 'answered' } as const;
      // One place of the hour, taken by a conditional write: two instances never both take the last one.
      const place = await tx.run(
        `INSERT INTO auto_reply_hours (hour, sent) VALUES (?, 1)
         ON CONFLICT (hour) DO UPDATE SET sent = auto_reply_hours.sent + 1 WHERE auto_reply_hours.sent < ?`,
        [hour, settings.maxPerHour],
      );
      if (place.changes === 0) {
        await forgetAnswer(tx, key, previous);
        return { kind: 'full' } as const;
      }
      return { kind: 'taken', previous } as const;
    });
    // Already answered today: done, without a second mail.
    if (taken.kind === 'answered') return { kind: 'delivered', status: 208 };
    // The site's replies of this hour are all sent: this one is dropped, not put off (the message itself is delivered).
    if (taken.kind === 'full') return { kind: 'delivered', status: 429 };
    const sent = await mailer.send(composeAutoReply(data, settings, smtp, site, now));
    if (sent.ok) return { kind: 'delivered', status: 250 };
    await sql.transaction(async (tx) => {
      await forgetAnswer(tx, key, taken.previous);
      await tx.run('UPDATE auto_reply_hours SET sent = sent - 1 WHERE hour = ? AND sent > 0', [hour]);
    });
    return { kind: 'retry', status: null, error: `the mail server did not take it (${sent.reason})` };
  };
}

/** Gives back an address's answer of the day: its earlier one again, or none. */
async function forgetAnswer(tx: SqlSession, key: string, previous: { last_sent_at: string } | undefined): Promise<void> {
  if (previous) await tx.run('UPDATE auto_replies SET last_sent_at = ? WHERE address_hash = ?', [previous.last_sent_at, key]);
  else await tx.run('DELETE FROM auto_replies WHERE address_hash = ?', [key]);
}

/** The reply itself: from the site to the sender, `Auto-Submitted: auto-replied`, answering replies to the owner. */
export function composeAutoReply(
  data: { id?: number; name?: string; email?: string; message?: string },
  settings: Pick<AutoReplySettings, 'subject' | 'text' | 'includeMessage'>,
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

/** Forgets whom the automatic reply answered before `before`, and the counts of hours before it (the housekeeping keeps two days); answers how many addresses. */
export async function pruneAutoReplies(sql: Sql, before: Date): Promise<number> {
  await sql.run('DELETE FROM auto_reply_hours WHERE hour < ?', [before.toISOString().slice(0, 13)]);
  return (await sql.run('DELETE FROM auto_replies WHERE last_sent_at < ?', [before.toISOString()])).changes;
}
