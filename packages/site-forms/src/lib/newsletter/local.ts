import type { Sql } from '../sql/sql.ts';
import type { NewsletterProvider } from './provider.ts';

/** One subscriber of the local provider, as exported; with double opt-in, the record of their consent. */
export type Subscriber = { email: string; created: string; consent?: SubscriberConsent };

/** What a subscriber agreed to, as the exports show it (newsletter/consents.ts keeps it). */
export type SubscriberConsent = { status: string; signedUpAt: string; confirmedAt: string | null; text: string; version: string; page: string; client: string };

/** The subscribers the local provider keeps in the site's own database. */
export interface SubscriberList {
  /** Adds an address (compared without case); an address already there is kept as it was. */
  add(email: string, at: Date): Promise<void>;
  /** Every subscriber, oldest first. */
  list(): Promise<Subscriber[]>;
  /** Takes an address off the list (an unsubscribe); answers whether it was there. */
  remove(email: string): Promise<boolean>;
}

/** The `subscribers` table of the store. */
export function createSubscriberList(sql: Sql): SubscriberList {
  return {
    async add(email, at) {
      // Addresses are compared without case, as every mail provider does.
      await sql.run('INSERT INTO subscribers (email, created_at) VALUES (?, ?) ON CONFLICT (email) DO NOTHING', [email.toLowerCase(), at.toISOString()]);
    },
    async list() {
      const rows = await sql.all<{
        email: string;
        created: string;
        status: string | null;
        signed_up_at: string;
        confirmed_at: string | null;
        consent_text: string;
        consent_version: string;
        page: string;
        client: string;
      }>(
        `SELECT s.email, s.created_at AS created, c.status, c.signed_up_at, c.confirmed_at, c.consent_text, c.consent_version, c.page, c.client
         FROM subscribers s LEFT JOIN newsletter_consents c ON c.email = s.email ORDER BY s.created_at, s.email`,
      );
      return rows.map(({ email, created, status, signed_up_at, confirmed_at, consent_text, consent_version, page, client }) =>
        status === null
          ? { email, created }
          : {
              email,
              created,
              consent: { status, signedUpAt: signed_up_at, confirmedAt: confirmed_at, text: consent_text, version: consent_version, page, client },
            },
      );
    },
    remove: async (email) => (await sql.run('DELETE FROM subscribers WHERE email = ?', [email.toLowerCase()])).changes === 1,
  };
}

/**
 * The embedded default: subscribers are kept in the site's own database, so a new site works
 * end to end before any account is set up.
 */
export function createLocalProvider(subscribers: SubscriberList): NewsletterProvider {
  return {
    name: 'local',
    async subscribe(email) {
      await subscribers.add(email, new Date());
      return { ok: true };
    },
  };
}
