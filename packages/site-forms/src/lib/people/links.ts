import { createHash, randomBytes } from 'node:crypto';
import type { Sql, SqlSession } from '../sql/sql.ts';
import { createPeopleStore, type EnvOwner, type Person, type Role } from './store.ts';

// Invitations and password-reset links (issue 42, table `admin_links`): a token given once, kept
// as its SHA-256, used once on every instance by one conditional UPDATE. Decision 0287.

/** What a link is for: joining as a new person, or setting the password of one who exists. */
export type LinkKind = 'invite' | 'reset';

/** A token as the link carries it: `sfl_` and 32 random bytes in base64url (43 characters). */
export const LINK_TOKEN = /^sfl_[A-Za-z0-9_-]{43}$/;

/** How long an invitation stays open: 72 hours. */
export const INVITE_LIFETIME_MS = 72 * 60 * 60 * 1000;

/** How long a reset link stays open: one hour. */
export const RESET_LIFETIME_MS = 60 * 60 * 1000;

/** A link as the admin lists it: never its token. */
export type Link = {
  id: number;
  kind: LinkKind;
  /** Lower-cased. */
  email: string;
  /** The person a reset link is for; an invitation's is `null` until it is accepted. */
  userId: number | null;
  /** An invitation's role and forms (`null`: every form). */
  role: Role | null;
  forms: string[] | null;
  /** Who made it: `person:<id>` or `cli`. */
  createdBy: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
};

/** A link made, with its token, given here and nowhere else. */
export type MadeLink = { token: string; link: Link };

/** An invitation to make. */
export type NewInvite = { email: string; role: Role; forms?: readonly string[] | null; createdBy: string };

/** What the person following a link chose: their name (an invitation), and a password hash (`null`: none, a passkey follows). */
export type Acceptance = { name?: string; passwordHash: string | null };

/**
 * What following a link came to: the person it made or changed, or `invalid` (unknown, used,
 * expired or revoked: one answer for all four) or `email-taken` (someone has the address by now).
 */
export type Accepted = { ok: true; kind: LinkKind; person: Person } | { ok: false; reason: 'invalid' | 'email-taken' };

/** The links, over the store's SQL. */
export interface Links {
  /** Opens an invitation; any open link to the address is revoked. `email-taken`: a person has it. */
  invite(invite: NewInvite, now: Date): Promise<MadeLink | { reason: 'email-taken' }>;
  /** Opens a reset link for a person with an email; any open link to the address is revoked. */
  reset(person: Pick<Person, 'id' | 'email'>, createdBy: string, now: Date): Promise<MadeLink | undefined>;
  /** The open link of a token, without using it (a GET, a mail scanner's prefetch). */
  peek(token: string, now: Date): Promise<Link | undefined>;
  /**
   * Uses a link, once on every instance, and makes the person (invitation) or sets their password
   * and ends their sessions (reset) in the same transaction.
   */
  accept(token: string, acceptance: Acceptance, now: Date): Promise<Accepted>;
  /** The links neither used, revoked nor expired, oldest first. */
  open(now: Date): Promise<Link[]>;
  /** Revokes an open link; answers whether there was one. */
  revoke(id: number, now: Date): Promise<boolean>;
}

const COLUMNS = 'id, kind, email, user_id, role, forms, created_by, created_at, expires_at, used_at, revoked_at';

type Row = {
  id: number | string;
  kind: string;
  email: string;
  user_id: number | string | null;
  role: string | null;
  forms: string | null;
  created_by: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  revoked_at: string | null;
};

/** Thrown inside the acceptance's transaction to roll the use of the link back. */
class Taken extends Error {}

/**
 * The links in table `admin_links`; `env` is the first owner's configuration, for the people store.
 * Hint: the token is 32 random bytes, so a plain SHA-256 is enough (as for sessions and API keys).
 * Times are ISO 8601 text in both engines, so `expires_at > ?` compares them as text.
 */
export function createLinks(sql: Sql, env: EnvOwner): Links {
  const people = createPeopleStore(sql, env);
  const make = async (
    tx: SqlSession,
    fields: { kind: LinkKind; email: string; userId: number | null; role: Role | null; forms: string | null; createdBy: string },
    now: Date,
  ) => {
    const at = now.toISOString();
    // A newer link to an address revokes the older: only the last one mailed works.
    await tx.run('UPDATE admin_links SET revoked_at = ? WHERE email = ? AND used_at IS NULL AND revoked_at IS NULL', [at, fields.email]);
    const token = newToken();
    const lifetime = fields.kind === 'invite' ? INVITE_LIFETIME_MS : RESET_LIFETIME_MS;
    const row = await tx.get<Row>(
      `INSERT INTO admin_links (token_hash, kind, email, user_id, role, forms, created_by, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${COLUMNS}`,
      [
        tokenHash(token),
        fields.kind,
        fields.email,
        fields.userId,
        fields.role,
        fields.forms,
        fields.createdBy,
        at,
        new Date(now.getTime() + lifetime).toISOString(),
      ],
    );
    return { token, link: toLink(row!) };
  };
  const OPEN = 'used_at IS NULL AND revoked_at IS NULL AND expires_at > ?';

  return {
    invite(invite, now) {
      const email = invite.email.trim().toLowerCase();
      return sql.transaction(async (tx) => {
        if (await people.within(tx).findByEmail(email)) return { reason: 'email-taken' } as const;
        const forms = invite.forms == null ? null : JSON.stringify([...new Set(invite.forms)]);
        return make(tx, { kind: 'invite', email, userId: null, role: invite.role, forms, createdBy: invite.createdBy }, now);
      });
    },
    async reset(person, createdBy, now) {
      if (!person.email) return undefined;
      const email = person.email;
      return sql.transaction((tx) => make(tx, { kind: 'reset', email, userId: person.id, role: null, forms: null, createdBy }, now));
    },
    async peek(token, now) {
      if (!LINK_TOKEN.test(token)) return undefined;
      const row = await sql.get<Row>(`SELECT ${COLUMNS} FROM admin_links WHERE token_hash = ? AND ${OPEN}`, [tokenHash(token), now.toISOString()]);
      return row && toLink(row);
    },
    async accept(token, acceptance, now) {
      if (!LINK_TOKEN.test(token)) return { ok: false, reason: 'invalid' };
      const at = now.toISOString();
      try {
        return await sql.transaction(async (tx): Promise<Accepted> => {
          // The one statement that decides: of two accepts on any instances, one changes the row.
          const row = await tx.get<Row>(`UPDATE admin_links SET used_at = ? WHERE token_hash = ? AND ${OPEN} RETURNING ${COLUMNS}`, [at, tokenHash(token), at]);
          if (!row) return { ok: false, reason: 'invalid' };
          const link = toLink(row);
          const within = people.within(tx);
          if (link.kind === 'invite') {
            const made = await within.create(
              {
                email: link.email,
                name: acceptance.name ?? '',
                role: link.role ?? 'reader',
                forms: link.forms,
                passwordHash: acceptance.passwordHash,
                origin: 'invited',
              },
              now,
            );
            if (!made.ok) throw new Taken();
            await tx.run('UPDATE admin_links SET user_id = ? WHERE id = ?', [made.person.id, link.id]);
            return { ok: true, kind: 'invite', person: made.person };
          }
          const changed =
            acceptance.passwordHash === null
              ? { ok: true as const, person: await within.find(link.userId ?? -1) }
              : await within.update(link.userId ?? -1, { passwordHash: acceptance.passwordHash }, now);
          // The person was removed: their links were revoked with them, so this is a race lost.
          if (!changed.ok || !changed.person) return { ok: false, reason: 'invalid' };
          // A reset is what a person does who lost a device or fears a stolen password: the
          // sessions begun before it end with it, on every instance (decision 0304).
          await tx.run('DELETE FROM admin_person_sessions WHERE user_id = ?', [changed.person.id]);
          return { ok: true, kind: 'reset', person: changed.person };
        });
      } catch (error) {
        if (error instanceof Taken) return { ok: false, reason: 'email-taken' };
        throw error;
      }
    },
    async open(now) {
      return (await sql.all<Row>(`SELECT ${COLUMNS} FROM admin_links WHERE ${OPEN} ORDER BY id`, [now.toISOString()])).map(toLink);
    },
    async revoke(id, now) {
      const at = now.toISOString();
      return (await sql.run(`UPDATE admin_links SET revoked_at = ? WHERE id = ? AND ${OPEN}`, [at, id, at])).changes === 1;
    },
  };
}

/** A new token: `sfl_` and 32 random bytes. */
function newToken(): string {
  return `sfl_${randomBytes(32).toString('base64url')}`;
}

/** What the table keeps of a token. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function toLink(row: Row): Link {
  return {
    id: Number(row.id),
    kind: row.kind as LinkKind,
    email: row.email,
    userId: row.user_id === null ? null : Number(row.user_id),
    role: row.role as Role | null,
    forms: row.forms === null ? null : (JSON.parse(row.forms) as string[]),
    createdBy: row.created_by,
    createdAt: new Date(row.created_at),
    expiresAt: new Date(row.expires_at),
    usedAt: row.used_at ? new Date(row.used_at) : null,
    revokedAt: row.revoked_at ? new Date(row.revoked_at) : null,
  };
}
