import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Sql } from '../sql/sql.ts';
import { ourPath } from '../http/mount.ts';

/** The parts of a download link as a request carries them: the file's id from the path, `expires` and `signature` from the query. */
export type FileLinkParts = { id: string; expires: string; signature: string };

/** What a link is worth: it opens its file, it did until its end, or it was never ours (altered, another file's, malformed). */
export type FileLinkCheck = 'valid' | 'expired' | 'invalid';

/** Signs and checks the download links that webhooks and chat alerts carry instead of a file's bytes. */
export type FileLinks = {
  /** The path of a link to one file, open for the configured lifetime from `now`. */
  sign(fileId: string, now?: Date): Promise<string>;
  /** Whether a link opens its file at `now`. */
  verify(parts: FileLinkParts, now?: Date): Promise<FileLinkCheck>;
};

/** The setting that keeps the links' key, beside the proof-of-work secret (spam/spam-store.ts). */
const KEY_SETTING = 'file_link_secret';

/** The path of every link; the file's id follows it. */
export const FILE_LINK_PATH = '/api/files/';

/**
 * Download links signed with HMAC-SHA256 over the file's id and the link's end, in unix seconds:
 * `/api/files/<id>?expires=<unix>&signature=<hex>`. The key is made once and kept in the store,
 * so every instance and every restart signs and checks alike (as the challenge secret).
 * Hint: the end is in the signed text, so a link cannot be made to last longer; the id too, so
 * a link of one file never opens another.
 */
export function createFileLinks(sql: Sql, { lifetimeSeconds }: { lifetimeSeconds: number }): FileLinks {
  let key: Promise<Buffer> | undefined;
  const keyOf = () =>
    (key ??= readKey(sql).catch((error: unknown) => {
      // An outage now must not stay the answer after the store is back.
      key = undefined;
      throw error;
    }));
  return {
    async sign(fileId, now = new Date()) {
      const expires = Math.floor(now.getTime() / 1000) + lifetimeSeconds;
      const signature = mac(await keyOf(), fileId, String(expires)).toString('hex');
      return `${ourPath(FILE_LINK_PATH)}${encodeURIComponent(fileId)}?expires=${expires}&signature=${signature}`;
    },
    async verify({ id, expires, signature }, now = new Date()) {
      // Only the digits a link of ours has: `12e9`, `+5` or ` 5` would read as numbers too.
      if (!/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return 'invalid';
      const expected = mac(await keyOf(), id, expires);
      if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'invalid';
      return Number(expires) * 1000 > now.getTime() ? 'valid' : 'expired';
    },
  };
}

function mac(key: Buffer, id: string, expires: string): Buffer {
  // A line break cannot be part of an id in a path, so the two parts never run into each other.
  return createHmac('sha256', key).update(`${id}\n${expires}`).digest();
}

async function readKey(sql: Sql): Promise<Buffer> {
  // Whoever inserts first wins; every instance then reads the same value.
  await sql.run('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [KEY_SETTING, randomBytes(32).toString('hex')]);
  const row = await sql.get<{ value: string }>('SELECT value FROM settings WHERE name = ?', [KEY_SETTING]);
  return Buffer.from(row!.value, 'hex');
}
