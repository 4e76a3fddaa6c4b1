import type { Sql } from '../store/sql.ts';
import type { NewsletterProvider } from './provider.ts';

/** One subscriber of the local provider, as exported. */
export type Subscriber = { email: string; created: string };

/** The subscribers the local provider keeps in the site's own database. */
export interface SubscriberList {
  /** Adds an address (compared without case); an address already there is kept as it was. */
  add(email: string, at: Date): Promise<void>;
  /** Every subscriber, oldest first. */
  list(): Promise<Subscriber[]>;
}

/** The `subscribers` table of the store. */
export function createSubscriberList(sql: Sql): SubscriberList {
  return {
    async add(email, at) {
      // Addresses are compared without case, as every mail provider does.
      await sql.run('INSERT INTO subscribers (email, created_at) VALUES (?, ?) ON CONFLICT (email) DO NOTHING', [email.toLowerCase(), at.toISOString()]);
    },
    list: () => sql.all<Subscriber>('SELECT email, created_at AS created FROM subscribers ORDER BY created_at, email'),
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
