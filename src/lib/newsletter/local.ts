import type { DatabaseSync } from 'node:sqlite';
import type { NewsletterProvider } from './provider.ts';

/**
 * The embedded default: subscribers are kept in the site's own SQLite file, so a new
 * site works end to end before any account is set up.
 */
export function createLocalProvider(db: DatabaseSync): NewsletterProvider {
  const insert = db.prepare('INSERT INTO subscribers (email, created_at) VALUES (?, ?) ON CONFLICT (email) DO NOTHING');
  return {
    name: 'local',
    async subscribe(email) {
      // Addresses are compared without case, as every mail provider does.
      insert.run(email.toLowerCase(), new Date().toISOString());
      return { ok: true };
    },
  };
}
