import { createHash, randomBytes } from 'node:crypto';
import type { HousekeepingJob } from '../housekeeping.ts';
import type { Engine, Sql, SqlSession } from './sql.ts';

/** How long a draft is kept: a person who reloads a refused form within this time sees it again (decision 0133). */
export const DRAFT_LIFETIME_MS = 30 * 60 * 1000;

/**
 * What the drafts may hold at most, so that refused posts cannot become a store of arbitrary
 * data: one draft's bytes (a post's body is at most 64 KiB, its messages are the server's
 * own), and all live drafts together; past either, `save` keeps nothing. One client keeps its
 * `clientDrafts` newest: its older ones give way to a new one, never another client's.
 * Hint: 800 refused posts of 60 KiB from one address filled the 32 MiB in 4.7 s and left every
 * other visitor without drafts for half an hour; now one address holds at most 10 × 96 KiB,
 * and filling the store takes some 35 addresses. A person refused ten times in half an hour
 * still finds the page of each of their last ten posts.
 */
export const DRAFT_LIMITS = { draftBytes: 96 * 1024, liveDrafts: 5_000, liveBytes: 32 * 1024 * 1024, clientDrafts: 10 };

/** What a draft is looked up with: its id, the route it belongs to and the client that made it. */
export type DraftKey = { id: string; route: string; client: string };

/** A draft as it was kept: its content, as the pipeline wrote it, and when. */
export type StoredDraft = { content: string; createdAt: Date };

/**
 * The refused posts of people without JavaScript, kept briefly so the page they are sent to can
 * show them again, on any instance. The content is the pipeline's (a form's view as JSON): this
 * store knows SQL, ids and bounds, not forms.
 */
export interface FormDrafts {
  /** Keeps a draft for `route`, made by `client`; answers its new id, or undefined when nothing was kept (too large, too many). */
  save(draft: { route: string; client: string; content: string }, now?: Date): Promise<string | undefined>;
  /** A live draft of this route and client; undefined when the id is unknown, expired, or another route's or client's. */
  read(key: DraftKey, now?: Date): Promise<StoredDraft | undefined>;
  /** Deletes the drafts expired at `now`; answers how many. */
  prune(now: Date): Promise<number>;
}

/**
 * The drafts in the database (`form_drafts`), shared by every instance.
 * Hint: the id is 24 random bytes and only its SHA-256 is stored, so neither a backup nor the
 * table gives a working address; the client is stored hashed with the id, so that the address
 * alone, passed on, opens nothing for another visitor.
 */
export function createFormDrafts(sql: Sql, limits = DRAFT_LIMITS): FormDrafts {
  return {
    async save({ route, client, content }, now = new Date()) {
      const size = Buffer.byteLength(content);
      if (size > limits.draftBytes) return undefined;
      const owner = hash(`client\n${client}`);
      const at = now.toISOString();
      // The client's own oldest give way first, so that its flood never pushes out anyone else's.
      const mine = await sql.all<{ id_hash: string }>('SELECT id_hash FROM form_drafts WHERE client_key = ? AND expires_at > ? ORDER BY created_at DESC', [
        owner,
        at,
      ]);
      const giveWay = mine.slice(Math.max(limits.clientDrafts - 1, 0)).map((row) => row.id_hash);
      if (giveWay.length > 0) await sql.runOnce(`DELETE FROM form_drafts WHERE id_hash IN (${giveWay.map(() => '?').join(', ')})`, giveWay);
      const live = await sql.get<{ count: number | string; bytes: number | string | null }>(
        'SELECT COUNT(*) AS count, SUM(size) AS bytes FROM form_drafts WHERE expires_at > ?',
        [at],
      );
      if (Number(live?.count ?? 0) >= limits.liveDrafts || Number(live?.bytes ?? 0) + size > limits.liveBytes) return undefined;
      const id = randomBytes(24).toString('base64url');
      // One attempt, no wait for a lock: when the post was refused because another process holds
      // SQLite's file (a 500 after DATABASE_STATEMENT_TIMEOUT_MS), the person should not wait as
      // long again for a draft that would fail too; without one, the page answers the post.
      await sql.runOnce(
        'INSERT INTO form_drafts (id_hash, route, client_hash, client_key, content, size, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [hash(id), route, hash(`${id}\n${client}`), owner, content, size, at, new Date(now.getTime() + DRAFT_LIFETIME_MS).toISOString()],
      );
      return id;
    },

    async read({ id, route, client }, now = new Date()) {
      // Not an id `save` could have made: no need to ask the database.
      if (!/^[A-Za-z0-9_-]{32}$/.test(id)) return undefined;
      const row = await sql.get<{ route: string; client_hash: string; content: string; created_at: string }>(
        'SELECT route, client_hash, content, created_at FROM form_drafts WHERE id_hash = ? AND expires_at > ?',
        [hash(id), now.toISOString()],
      );
      if (!row || row.route !== route || row.client_hash !== hash(`${id}\n${client}`)) return undefined;
      return { content: row.content, createdAt: new Date(row.created_at) };
    },

    async prune(now) {
      return (await sql.run('DELETE FROM form_drafts WHERE expires_at <= ?', [now.toISOString()])).changes;
    },
  };
}

/**
 * Deletes every draft, live or expired, whose content holds `value` as a whole JSON string,
 * without case (an erasure: an address typed into a refused post); answers how many.
 * Hint: matched in the JSON text with its quotes, so `xada@example.org` does not match
 * `ada@example.org`; an erasure is rare, and the drafts are few and bounded (DRAFT_LIMITS).
 */
export async function forgetDraftsHolding(tx: SqlSession, engine: Engine, value: string): Promise<number> {
  const needle = JSON.stringify(value.toLowerCase()).replace(/[\\%_]/g, (c) => `\\${c}`);
  // SQLite's lower() folds A–Z only; sql/sqlite.ts adds fold(), JavaScript's rules.
  const lower = engine === 'sqlite' ? 'fold' : 'lower';
  return (await tx.run(`DELETE FROM form_drafts WHERE ${lower}(content) LIKE ? ESCAPE '\\'`, [`%${needle}%`])).changes;
}

/**
 * The housekeeping's job that deletes expired drafts, every quarter of an hour.
 * Hint: an expired draft is unreadable at once (`read` checks the time); the job only frees the
 * space, so a draft is gone from the database at most 45 minutes after its post.
 */
export function formDraftsJob(drafts: FormDrafts): HousekeepingJob {
  return { name: 'form-drafts', everyMs: DRAFT_LIFETIME_MS / 2, run: async (now) => void (await drafts.prune(now)) };
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}
