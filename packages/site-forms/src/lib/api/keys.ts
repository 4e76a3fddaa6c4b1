import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type KeyActor, keyActor, type KeyScope } from '../access/permissions.ts';
import type { Sql } from '../sql/sql.ts';

// The API keys of /api/v1 (issue 42), table `api_keys`: made and shown once, kept as a prefix and
// a hash, looked up at every request with no cache so that a revocation holds at once on every
// instance. Decision 0276.

/** A key as a program sends it: `sfk_`, 12 base32 characters (the prefix, kept), `_`, 43 base64url characters (the secret). */
export const API_KEY = /^sfk_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/;

/** The characters of a key's prefix that are kept and shown (`sfk_` and the 12 base32 characters). */
const PREFIX_LENGTH = 16;

/** The last use is written at most this often: a key used at every request costs one write a minute, not one a request. */
export const LAST_USE_EVERY_MS = 60_000;

/** An API key as the admin and the command line list it: never its secret. */
export type ApiKey = {
  id: number;
  name: string;
  /** `sfk_` and 12 characters, shown as `sfk_ab12…` to tell keys apart. */
  prefix: string;
  scope: KeyScope;
  /** The forms it may read (`newsletter` is the local list); `null` is every form, present and future. */
  forms: string[] | null;
  /** Who made it: `person:<id>` or `cli`. */
  createdBy: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
};

/** A key to make; `forms` defaults to every form. */
export type NewApiKey = { name: string; scope: KeyScope; forms?: readonly string[] | null; createdBy: string };

/** A key made, with the text given once (`key`), or refused: a live key has the name. */
export type KeyCreation = { ok: true; key: string; record: ApiKey } | { ok: false; reason: 'name-taken' };

/** The API keys, over the store's SQL. */
export interface ApiKeys {
  /** Makes a key; its text is in the answer and nowhere else, ever. */
  create(key: NewApiKey, now: Date): Promise<KeyCreation>;
  /** Every key, live and revoked, oldest first. */
  list(): Promise<ApiKey[]>;
  /** Revokes the live key of this name; answers whether there was one. Its name is free again at once. */
  revoke(name: string, now: Date): Promise<boolean>;
  /** Revokes the live key of this id (the admin's Revoke button); answers it as it was, or `undefined` when none was live. */
  revokeById(id: number, now: Date): Promise<ApiKey | undefined>;
  /** The actor of a live key sent by a program, or `undefined` (malformed, unknown, wrong secret, revoked); notes the use. */
  find(key: string, now: Date): Promise<KeyActor | undefined>;
}

const COLUMNS = 'id, name, prefix, scope, forms, created_by, created_at, last_used_at, revoked_at';

type Row = {
  id: number | string;
  name: string;
  prefix: string;
  scope: string;
  forms: string | null;
  created_by: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
};

/**
 * The API keys in table `api_keys`.
 * Hint: the secret is 32 random bytes, so a plain SHA-256 is enough (as for session tokens): no
 * slow hash, whose cost at every request would be a denial of service of its own.
 */
export function createApiKeys(sql: Sql): ApiKeys {
  return {
    async create(key, now) {
      // A prefix taken already (1 in 2^60) is one more try; a live name taken is the answer.
      for (;;) {
        const text = newKey();
        const row = await sql.get<Row>(
          `INSERT INTO api_keys (name, prefix, secret_hash, scope, forms, created_by, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
          [key.name, text.slice(0, PREFIX_LENGTH), hashOf(text), key.scope, listOf(key.forms), key.createdBy, now.toISOString()],
        );
        if (row) return { ok: true, key: text, record: toKey(row) };
        if (await sql.get('SELECT id FROM api_keys WHERE name = ? AND revoked_at IS NULL', [key.name])) return { ok: false, reason: 'name-taken' };
      }
    },
    async list() {
      return (await sql.all<Row>(`SELECT ${COLUMNS} FROM api_keys ORDER BY id`)).map(toKey);
    },
    async revoke(name, now) {
      const { changes } = await sql.run('UPDATE api_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL', [now.toISOString(), name]);
      return changes > 0;
    },
    async revokeById(id, now) {
      const row = await sql.get<Row>(`UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING ${COLUMNS}`, [now.toISOString(), id]);
      return row && toKey(row);
    },
    async find(key, now) {
      if (!API_KEY.test(key)) return undefined;
      const row = await sql.get<Row & { secret_hash: string }>(`SELECT ${COLUMNS}, secret_hash FROM api_keys WHERE prefix = ? AND revoked_at IS NULL`, [
        key.slice(0, PREFIX_LENGTH),
      ]);
      if (!row || !sameHash(row.secret_hash, hashOf(key))) return undefined;
      const id = Number(row.id);
      const since = new Date(now.getTime() - LAST_USE_EVERY_MS + 1).toISOString();
      await sql.run('UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)', [now.toISOString(), id, since]);
      return keyActor({ id, name: row.name, scope: row.scope as KeyScope, forms: parseList(row.forms) });
    },
  };
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** A new key's text: 12 base32 characters from 12 random bytes (each byte's 5 low bits: 256 is a multiple of 32, so unbiased), and 32 random bytes. */
function newKey(): string {
  const prefix = [...randomBytes(12)].map((byte) => BASE32[byte & 31]).join('');
  return `sfk_${prefix}_${randomBytes(32).toString('base64url')}`;
}

function hashOf(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Compared in constant time, so the answer's timing tells nothing about how much of a guess was right. */
function sameHash(stored: string, sent: string): boolean {
  const a = Buffer.from(stored, 'hex');
  const b = Buffer.from(sent, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

function listOf(forms: readonly string[] | null | undefined): string | null {
  return forms == null ? null : JSON.stringify(forms);
}

function parseList(text: string | null): string[] | null {
  return text === null ? null : (JSON.parse(text) as string[]);
}

function toKey(row: Row): ApiKey {
  return {
    id: Number(row.id),
    name: row.name,
    prefix: row.prefix,
    scope: row.scope as KeyScope,
    forms: parseList(row.forms),
    createdBy: row.created_by,
    createdAt: new Date(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : new Date(row.last_used_at),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
  };
}
