import { randomBytes } from 'node:crypto';
import { parseReasons } from '../contact/outbox.ts';
import type { ContactInput } from '../forms/contact.ts';
import type { Sql } from '../store/sql.ts';
import { digestDue, type HeldMessage } from './digest.ts';
import type { UsedChallenges } from './used-challenges.ts';

/** Why a message was held, and where it came from when Akismet may need telling later. */
export type HeldDetails = { reasons: readonly string[]; ip?: string | undefined; userAgent?: string | undefined };

/** The answer of an owner's correction: no such message, or its status before and whether it changed. */
export type Correction = { found: false } | { found: true; from: string; changed: boolean };

/** What the spam filter keeps in the database (decision 0093), in either engine. */
export interface SpamStore {
  /** Stores a message judged spam with its reasons; it is never due for delivery. */
  hold(input: ContactInput, details: HeldDetails): Promise<number>;
  /** "Not spam": a held message joins the delivery queue (or goes back to `sent` if it was sent before); once. */
  release(id: number): Promise<Correction>;
  /** "Spam": a pending, failed or sent message becomes held; a pending one is then not sent. */
  markSpam(id: number): Promise<Correction>;
  /** The reasons and origin of a message, when it was ever judged spam. */
  details(id: number): Promise<{ reasons: string[]; ip: string | null; userAgent: string | null } | undefined>;
  /** The messages held after `since` (every held one when undefined), oldest first. */
  heldSince(since: string | undefined): Promise<HeldMessage[]>;
  /** Deletes held messages that arrived before `cutoff`; answers how many. */
  deleteHeldBefore(cutoff: string): Promise<number>;
  /** The used-challenge record in the database, shared by every instance. */
  readonly usedChallenges: UsedChallenges & { deleteExpired(now: number): Promise<number> };
  /** The secret that signs challenges: made once, then the same for every instance and restart. */
  proofSecret(): Promise<string>;
  /**
   * Takes the day's digest: answers the time of the previous one when a digest is due and no
   * other instance took it, else undefined. `undo` gives it back when sending failed.
   */
  takeDigest(now: Date): Promise<{ previous: string | undefined; undo(): Promise<void> } | undefined>;
}

const DIGEST_SETTING = 'spam_digest_sent_at';
const SECRET_SETTING = 'proof_secret';

/** The spam filter's repository over the store's SQL (SQLite or PostgreSQL). */
export function createSpamStore(sql: Sql): SpamStore {
  const setting = async (name: string) => (await sql.get<{ value: string }>('SELECT value FROM settings WHERE name = ?', [name]))?.value;
  return {
    async hold(input, { reasons, ip, userAgent }) {
      const now = new Date().toISOString();
      const row = await sql.transaction((tx) =>
        tx.get<{ id: number | string }>(
          `INSERT INTO submissions (created_at, name, email, message, status, next_attempt_at, spam_reasons, client_ip, user_agent)
           VALUES (?, ?, ?, ?, 'spam', NULL, ?, ?, ?) RETURNING id`,
          [now, input.name, input.email, input.message, JSON.stringify(reasons), ip ?? null, userAgent ?? null],
        ),
      );
      return Number(row!.id);
    },
    release: (id) =>
      sql.transaction(async (tx) => {
        const row = await tx.get<{ status: string; sent_at: string | null }>('SELECT status, sent_at FROM submissions WHERE id = ?', [id]);
        if (!row) return { found: false };
        if (row.status !== 'spam') return { found: true, from: row.status, changed: false };
        const now = new Date().toISOString();
        // A message sent before it was marked goes back to `sent`: release never sends a message twice.
        const { changes } = row.sent_at
          ? await tx.run(`UPDATE submissions SET status = 'sent' WHERE id = ? AND status = 'spam'`, [id])
          : await tx.run(
              `UPDATE submissions SET status = 'pending', attempts = 0, next_attempt_at = ?, last_error = NULL, lease_until = NULL WHERE id = ? AND status = 'spam'`,
              [now, id],
            );
        if (changes === 1) {
          await tx.run(`INSERT INTO delivery_attempts (submission_id, attempted_at, outcome, error) VALUES (?, ?, 'requeued', ?)`, [
            id,
            now,
            'released from spam by the owner',
          ]);
        }
        return { found: true, from: 'spam', changed: changes === 1 };
      }),
    markSpam: (id) =>
      sql.transaction(async (tx) => {
        const row = await tx.get<{ status: string; spam_reasons: string | null }>('SELECT status, spam_reasons FROM submissions WHERE id = ?', [id]);
        if (!row) return { found: false };
        if (row.status === 'spam') return { found: true, from: 'spam', changed: false };
        const reasons = [...parseReasons(row.spam_reasons).filter((r) => r !== 'marked-by-owner'), 'marked-by-owner'];
        const { changes } = await tx.run(`UPDATE submissions SET status = 'spam', next_attempt_at = NULL, spam_reasons = ? WHERE id = ? AND status = ?`, [
          JSON.stringify(reasons),
          id,
          row.status,
        ]);
        return { found: true, from: row.status, changed: changes === 1 };
      }),
    async details(id) {
      const row = await sql.get<{ spam_reasons: string | null; client_ip: string | null; user_agent: string | null }>(
        'SELECT spam_reasons, client_ip, user_agent FROM submissions WHERE id = ?',
        [id],
      );
      if (!row || row.spam_reasons === null) return undefined;
      return { reasons: parseReasons(row.spam_reasons), ip: row.client_ip, userAgent: row.user_agent };
    },
    async heldSince(since) {
      const rows = await sql.all<{ id: number | string; created_at: string; name: string; message: string; spam_reasons: string | null }>(
        `SELECT id, created_at, name, message, spam_reasons FROM submissions WHERE status = 'spam' AND created_at > ? ORDER BY id`,
        [since ?? ''],
      );
      return rows.map((row) => ({
        id: Number(row.id),
        createdAt: row.created_at,
        name: row.name,
        message: row.message,
        reasons: parseReasons(row.spam_reasons),
      }));
    },
    async deleteHeldBefore(cutoff) {
      return (await sql.run(`DELETE FROM submissions WHERE status = 'spam' AND created_at < ?`, [cutoff])).changes;
    },
    usedChallenges: {
      async claim(id, expiresAtMs) {
        const { changes } = await sql.run('INSERT INTO used_challenges (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING', [
          id,
          new Date(expiresAtMs).toISOString(),
        ]);
        return changes === 1;
      },
      async deleteExpired(now) {
        return (await sql.run('DELETE FROM used_challenges WHERE expires_at <= ?', [new Date(now).toISOString()])).changes;
      },
    },
    async proofSecret() {
      // Whoever inserts first wins; every instance then reads the same value.
      await sql.run('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [SECRET_SETTING, randomBytes(32).toString('hex')]);
      return (await setting(SECRET_SETTING))!;
    },
    async takeDigest(now) {
      await sql.run(`INSERT INTO settings (name, value) VALUES (?, '') ON CONFLICT (name) DO NOTHING`, [DIGEST_SETTING]);
      const stored = (await setting(DIGEST_SETTING)) ?? '';
      const previous = stored || undefined;
      if (!digestDue(previous, now)) return undefined;
      // Compare-and-set: of several instances, only the one whose update changed the row sends.
      const taken = now.toISOString();
      const { changes } = await sql.run('UPDATE settings SET value = ? WHERE name = ? AND value = ?', [taken, DIGEST_SETTING, stored]);
      if (changes !== 1) return undefined;
      return {
        previous,
        undo: async () => {
          await sql.run('UPDATE settings SET value = ? WHERE name = ? AND value = ?', [stored, DIGEST_SETTING, taken]);
        },
      };
    },
  };
}
