import { createHash, randomBytes } from 'node:crypto';
import type { Sql } from '../sql/sql.ts';

/** How long a confirmation link works. */
export const CONFIRMATION_TTL_MS = 48 * 3600 * 1000;

/** A second signup within this long does not send the confirmation email again. */
export const RESEND_AFTER_MS = 10 * 60 * 1000;

/** What the visitor agreed to, where, and from which (truncated) address: the proof of consent (GDPR Art. 7(1)). */
export type ConsentEvidence = { page: string; text: string; version: string; client: string };

/** One subscriber's record of consent. */
export type ConsentRecord = ConsentEvidence & {
  email: string;
  /** `subscribed`: joined at once, without a confirmation (NEWSLETTER_DOUBLE_OPT_IN off), decision 0206. */
  status: 'pending' | 'confirmed' | 'subscribed' | 'unsubscribed';
  signedUpAt: string;
  confirmedAt: string | null;
};

/**
 * The only writer of consent records: a signup asks (pending, with a single-use confirmation
 * token kept as its SHA-256), the confirmation link confirms it once, the unsubscribe link ends it,
 * and an erasure deletes it.
 */
export interface Consents {
  /**
   * Records a signup's consent as pending and answers the tokens of its confirmation email, or
   * `undefined` when one went out less than RESEND_AFTER_MS ago (no second mail) or the address is confirmed.
   * A pending signup whose link still works keeps its evidence and its link; the new mail's links work beside them.
   */
  request(email: string, evidence: ConsentEvidence, now: Date): Promise<{ confirm: string; unsubscribe: string } | undefined>;
  /** Confirms the signup a token stands for, once, within 48 hours; answers its address. */
  confirm(token: string, now: Date): Promise<string | undefined>;
  /**
   * Records a signup the provider confirms by itself (Mailchimp, Kit), or one that joins at once
   * (`subscribed`, without double opt-in): the evidence, no token.
   * Hint: a `subscribed` signup keeps an address's standing consent (subscribed or confirmed), as its first one.
   */
  record(email: string, evidence: ConsentEvidence, status: 'pending' | 'confirmed' | 'subscribed', now: Date): Promise<void>;
  /** Ends a subscription by its unsubscribe token; answers the address, once. */
  unsubscribe(token: string, now: Date): Promise<string | undefined>;
  /** The record of one address. */
  find(email: string): Promise<ConsentRecord | undefined>;
  /** Every record, newest first, for the exports and the admin. */
  list(): Promise<ConsentRecord[]>;
  /** Deletes the record of an address (an erasure). */
  erase(email: string): Promise<boolean>;
}

type Row = {
  email: string;
  status: ConsentRecord['status'];
  signed_up_at: string;
  confirmed_at: string | null;
  page: string;
  consent_text: string;
  consent_version: string;
  client: string;
};

const COLUMNS = 'email, status, signed_up_at, confirmed_at, page, consent_text, consent_version, client';
const toRecord = (row: Row): ConsentRecord => ({
  email: row.email,
  status: row.status,
  signedUpAt: row.signed_up_at,
  confirmedAt: row.confirmed_at,
  page: row.page,
  text: row.consent_text,
  version: row.consent_version,
  client: row.client,
});
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');
const newToken = () => randomBytes(24).toString('base64url');

/** The consent records over the store's SQL (SQLite or PostgreSQL). */
export function createConsents(sql: Sql): Consents {
  return {
    request: (email, evidence, now) =>
      sql.transaction(async (tx) => {
        const key = email.toLowerCase();
        const existing = await tx.get<{ status: string; last_sent_at: string | null; confirm_expires_at: string | null }>(
          'SELECT status, last_sent_at, confirm_expires_at FROM newsletter_consents WHERE email = ?',
          [key],
        );
        if (existing?.status === 'confirmed') return undefined;
        if (existing?.last_sent_at && now.getTime() - Date.parse(existing.last_sent_at) < RESEND_AFTER_MS) return undefined;
        const confirm = newToken();
        const unsubscribe = newToken();
        const at = now.toISOString();
        const expires = new Date(now.getTime() + CONFIRMATION_TTL_MS).toISOString();
        if (existing?.status === 'pending' && existing.confirm_expires_at && existing.confirm_expires_at > at) {
          // The same signup asked again (perhaps by someone else, from elsewhere): the first
          // evidence and the first mail's links stay; this mail's links work beside them (decision 0141).
          await tx.run(
            `UPDATE newsletter_consents SET resent_confirm_hash = ?, resent_unsubscribe_hash = ?, confirm_expires_at = ?, last_sent_at = ? WHERE email = ?`,
            [hashOf(confirm), hashOf(unsubscribe), expires, at, key],
          );
          return { confirm, unsubscribe };
        }
        await tx.run(
          `INSERT INTO newsletter_consents (email, status, signed_up_at, page, consent_text, consent_version, client, confirm_token_hash, confirm_expires_at, unsubscribe_token_hash, last_sent_at)
           VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (email) DO UPDATE SET status = 'pending', signed_up_at = excluded.signed_up_at, confirmed_at = NULL, page = excluded.page,
             consent_text = excluded.consent_text, consent_version = excluded.consent_version, client = excluded.client,
             confirm_token_hash = excluded.confirm_token_hash, confirm_expires_at = excluded.confirm_expires_at,
             unsubscribe_token_hash = excluded.unsubscribe_token_hash, last_sent_at = excluded.last_sent_at,
             resent_confirm_hash = NULL, resent_unsubscribe_hash = NULL`,
          [key, at, evidence.page, evidence.text, evidence.version, evidence.client, hashOf(confirm), expires, hashOf(unsubscribe), at],
        );
        return { confirm, unsubscribe };
      }),

    async confirm(token, now) {
      const row = await sql.get<{ email: string }>(
        `UPDATE newsletter_consents SET status = 'confirmed', confirmed_at = ?, confirm_token_hash = NULL, resent_confirm_hash = NULL
         WHERE (confirm_token_hash = ? OR resent_confirm_hash = ?) AND status = 'pending' AND confirm_expires_at > ? RETURNING email`,
        [now.toISOString(), hashOf(token), hashOf(token), now.toISOString()],
      );
      return row?.email;
    },

    async record(email, evidence, status, now) {
      const at = now.toISOString();
      await sql.run(
        `INSERT INTO newsletter_consents (email, status, signed_up_at, confirmed_at, page, consent_text, consent_version, client)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (email) DO UPDATE SET status = excluded.status, signed_up_at = excluded.signed_up_at, confirmed_at = excluded.confirmed_at,
           page = excluded.page, consent_text = excluded.consent_text, consent_version = excluded.consent_version, client = excluded.client
         ${status === 'subscribed' ? "WHERE newsletter_consents.status NOT IN ('subscribed', 'confirmed')" : ''}`,
        [email.toLowerCase(), status, at, status === 'confirmed' ? at : null, evidence.page, evidence.text, evidence.version, evidence.client],
      );
    },

    async unsubscribe(token, now) {
      const row = await sql.get<{ email: string }>(
        `UPDATE newsletter_consents SET status = 'unsubscribed', unsubscribe_token_hash = NULL, confirm_token_hash = NULL,
           resent_unsubscribe_hash = NULL, resent_confirm_hash = NULL, last_sent_at = ?
         WHERE unsubscribe_token_hash = ? OR resent_unsubscribe_hash = ? RETURNING email`,
        [now.toISOString(), hashOf(token), hashOf(token)],
      );
      return row?.email;
    },

    async find(email) {
      const row = await sql.get<Row>(`SELECT ${COLUMNS} FROM newsletter_consents WHERE email = ?`, [email.toLowerCase()]);
      return row ? toRecord(row) : undefined;
    },

    async list() {
      return (await sql.all<Row>(`SELECT ${COLUMNS} FROM newsletter_consents ORDER BY signed_up_at DESC, email`)).map(toRecord);
    },

    async erase(email) {
      return (await sql.run('DELETE FROM newsletter_consents WHERE email = ?', [email.toLowerCase()])).changes === 1;
    },
  };
}

/**
 * The part of a client's address a consent record keeps: an IPv4 /24 or an IPv6 /48, never the
 * whole. An IPv4 address a dual-stack socket reports as `::ffff:a.b.c.d` is kept as IPv4.
 */
export function truncatedClient(ip: string): string {
  const v4 = /^(?:::ffff:)?(\d+\.\d+\.\d+)\.\d+$/i.exec(ip);
  if (v4) return `${v4[1]}.0/24`;
  const groups = ipv6Groups(ip);
  if (!groups) return 'unknown';
  // The first three groups, without leading zeros; zero groups at the end fold into the "::".
  const prefix = groups.slice(0, 3).map((group) => Number.parseInt(group, 16).toString(16));
  while (prefix.at(-1) === '0') prefix.pop();
  return `${prefix.join(':')}::/48`;
}

/** The eight groups of an IPv6 address, "::" expanded (a zone such as `%eth0` dropped), or undefined if it is not one. */
function ipv6Groups(ip: string): string[] | undefined {
  const address = ip.split('%')[0]!.toLowerCase();
  const halves = address.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  // Without "::" all eight groups are written; with it, it stands for at least one.
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  return groups.every((group) => /^[0-9a-f]{1,4}$/.test(group)) ? groups : undefined;
}

/** A consent text's version: the first 12 hex digits of its SHA-256, so a changed text is a new version. */
export function consentVersion(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}
