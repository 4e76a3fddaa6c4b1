import { randomBytes } from 'node:crypto';
import { type FormScope, scopeClause } from '../access/permissions.ts';
import { type Change, parseReasons, type SubmissionMachine } from '../submissions/machine.ts';
import type { ContactInput } from '../forms/contact.ts';
import type { Sql } from '../sql/sql.ts';
import { type DigestTime, digestDue, type HeldDigest } from './digest.ts';
import type { UsedChallenges } from './used-challenges.ts';

/** Why a message was held, and where it came from when Akismet may need telling later. */
export type HeldDetails = { reasons: readonly string[]; ip?: string | undefined; userAgent?: string | undefined };

/** The answer of an owner's correction: no such message, or its state before and whether it changed (or will, once its send ends). */
export type Correction = Change;

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
  /**
   * How many messages were held after `since` (ever, when undefined), and the newest `limit` of
   * them, newest first, each cut to its start; of the forms of `scope` only (every form unless given).
   */
  heldSince(since: string | undefined, limit: number, scope?: FormScope): Promise<HeldDigest>;
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
  takeDigest(
    now: Date,
    options?: { at?: DigestTime | undefined; force?: boolean },
  ): Promise<{ previous: string | undefined; undo(): Promise<void> } | undefined>;
}

const DIGEST_SETTING = 'spam_digest_sent_at';

/** How much of each held message the digest reads: more than its one line shows. */
const HELD_PREVIEW_CHARACTERS = 300;
const SECRET_SETTING = 'proof_secret';

/** The spam filter's repository over the store's SQL (SQLite or PostgreSQL). */
export function createSpamStore(sql: Sql, machine: SubmissionMachine): SpamStore {
  const setting = async (name: string) => (await sql.get<{ value: string }>('SELECT value FROM settings WHERE name = ?', [name]))?.value;
  return {
    async hold(input, { reasons, ip, userAgent }) {
      return (await machine.receive({ ...input, held: reasons, ip, userAgent })).id;
    },
    release: (id) => machine.release(id),
    markSpam: (id) => machine.hold(id),
    async details(id) {
      const row = await sql.get<{ spam_reasons: string | null; client_ip: string | null; user_agent: string | null }>(
        'SELECT spam_reasons, client_ip, user_agent FROM submissions WHERE id = ?',
        [id],
      );
      if (!row || row.spam_reasons === null) return undefined;
      return { reasons: parseReasons(row.spam_reasons), ip: row.client_ip, userAgent: row.user_agent };
    },
    async heldSince(since, limit, scope = { all: true }) {
      const after = since ?? '';
      const forms = scopeClause(sql.engine, scope);
      const only = forms.sql === '' ? '' : ` AND ${forms.sql}`;
      const counted = await sql.get<{ count: number | string }>(`SELECT COUNT(*) AS count FROM submissions WHERE status = 'spam' AND created_at > ?${only}`, [
        after,
        ...forms.params,
      ]);
      // The newest few, each message cut to its start: the digest shows one line of each,
      // and a flood of held messages must not be read into memory whole.
      const rows = await sql.all<{ id: number | string; created_at: string; name: string; message: string; spam_reasons: string | null }>(
        `SELECT id, created_at, name, SUBSTR(message, 1, ${HELD_PREVIEW_CHARACTERS}) AS message, spam_reasons FROM submissions
          WHERE status = 'spam' AND created_at > ?${only} ORDER BY id DESC LIMIT ?`,
        [after, ...forms.params, limit],
      );
      const newest = rows.map((row) => ({
        id: Number(row.id),
        createdAt: row.created_at,
        name: row.name,
        message: row.message,
        reasons: parseReasons(row.spam_reasons),
      }));
      return { count: Number(counted?.count ?? 0), newest };
    },
    deleteHeldBefore: (cutoff) => machine.removeReceivedBefore(new Date(cutoff), undefined, { heldOnly: true }),
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
    async takeDigest(now, { at, force = false } = {}) {
      await sql.run(`INSERT INTO settings (name, value) VALUES (?, '') ON CONFLICT (name) DO NOTHING`, [DIGEST_SETTING]);
      const stored = (await setting(DIGEST_SETTING)) ?? '';
      const previous = stored || undefined;
      if (!force && !digestDue(previous, now, at)) return undefined;
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
