import { createHash, randomBytes } from 'node:crypto';
import { personRef } from '../access/permissions.ts';
import type { Engine, Sql, SqlSession, SqlValue } from '../sql/sql.ts';

/** What a person may do in the admin (access/permissions.ts says what each allows). */
export type Role = 'owner' | 'editor' | 'reader';

/** Every role, in the order the admin lists them. */
export const ROLES: readonly Role[] = ['owner', 'editor', 'reader'];

/** How a person came to be: from ADMIN_PASSWORD_HASH, from `npm run admin -- add-user`, or by an invitation. */
export type PersonOrigin = 'env' | 'cli' | 'invited';

/** One person of the admin, as table `admin_users` keeps them. */
export type Person = {
  id: number;
  /** Lower-cased; `null` only for the first owner made from ADMIN_PASSWORD_HASH without CONTACT_TO. */
  email: string | null;
  name: string;
  role: Role;
  /** The forms they may see (`newsletter` is the local list); `null` is every form, present and future. */
  forms: string[] | null;
  /** Their own PHC string; `null` for none (the first owner's password is ADMIN_PASSWORD_HASH itself). */
  passwordHash: string | null;
  origin: PersonOrigin;
  /** WebAuthn's `user.id`: 32 random bytes as base64url, never the id or the email. */
  userHandle: string;
  /** The forms whose messages are mailed to them; `null` is the default for their role. */
  mailForms: string[] | null;
  /** Whether they get the daily spam digest. */
  digest: boolean;
  overviewVisitedAt: Date | null;
  lastSignInAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
};

/** A person to add; `name` defaults to empty, `forms` to every form. */
export type NewPerson = {
  email: string;
  name?: string;
  role: Role;
  forms?: readonly string[] | null;
  passwordHash?: string | null;
  origin: 'cli' | 'invited';
  digest?: boolean;
};

/** What `update` may change; a field left out stays as it is, `null` sets it to none (forms: every form). */
export type PersonChanges = {
  email?: string;
  name?: string;
  role?: Role;
  forms?: readonly string[] | null;
  passwordHash?: string | null;
  mailForms?: readonly string[] | null;
  digest?: boolean;
};

/** The configuration the first owner comes from: ADMIN_PASSWORD_HASH and CONTACT_TO. */
export type EnvOwner = { passwordHash: string | undefined; contactTo: string | undefined };

/** Why a change to people was refused: expected answers, not errors. */
export type PeopleRefusal = 'not-found' | 'email-taken' | 'last-owner' | 'changed';

/** The mail a person gets (issue 42 item 4): the forms whose messages are mailed to them, and the daily spam digest. */
export type MailChoice = { mailForms: readonly string[]; digest: boolean };

/** A change that happened, with the person as they are after it (or as they were, for a removal). */
export type PeopleOutcome<R extends PeopleRefusal> = { ok: true; person: Person } | { ok: false; reason: R };

/**
 * What `ensureEnvOwner` found: no ADMIN_PASSWORD_HASH (`unset`), its owner removed by an owner
 * (`removed`), made now (`created`), or already there (`present`).
 */
export type EnvOwnerState = 'unset' | 'removed' | 'created' | 'present';

/** The people operations, on the store's connections or inside a caller's transaction. */
export interface PeopleSession {
  find(id: number): Promise<Person | undefined>;
  /** The person with this email, in any case. */
  findByEmail(email: string): Promise<Person | undefined>;
  /** The first owner made from ADMIN_PASSWORD_HASH, while they exist. */
  envOwner(): Promise<Person | undefined>;
  /** Everyone, oldest first. */
  list(): Promise<Person[]>;
  create(person: NewPerson, now: Date): Promise<PeopleOutcome<'email-taken'>>;
  /** Changes a person; taking the owner's role from the last owner is refused. */
  update(id: number, changes: PersonChanges, now: Date): Promise<PeopleOutcome<'not-found' | 'email-taken' | 'last-owner'>>;
  /**
   * Removes a person with everything that lets them in (sessions, passkeys, challenges, links not
   * yet used) and the open links they made, in one transaction; the first owner's password sessions and a tombstone for
   * ADMIN_PASSWORD_HASH go with the first owner. The last owner is refused.
   */
  remove(id: number, now: Date): Promise<PeopleOutcome<'not-found' | 'last-owner'>>;
  /**
   * Removes every passkey of a person and ends their sessions, in one transaction: the way back
   * for someone who lost them all (`npm run admin -- remove-passkeys`, decision 0304). Answers how
   * many passkeys went, or `undefined` when nobody has this id.
   */
  removePasskeys(id: number): Promise<number | undefined>;
  /** Records a sign-in of this person (`last_sign_in_at`). */
  signedIn(id: number, at: Date): Promise<void>;
  /**
   * Sets the mail a person gets, in one conditional write: only while their role and forms are
   * still `checked`, those the choice was checked against (`changed` otherwise, nothing written),
   * so a choice checked before an owner took a form away never lands. Decision 0301.
   */
  chooseMail(id: number, choice: MailChoice, checked: Pick<Person, 'role' | 'forms'>, now: Date): Promise<PeopleOutcome<'not-found' | 'changed'>>;
  /**
   * Makes the first owner from ADMIN_PASSWORD_HASH unless they exist or were removed under this
   * hash; called after the store is ready, by every instance and command, as often as they like.
   */
  ensureEnvOwner(now: Date): Promise<EnvOwnerState>;
}

/** The people of the admin (issue 42), over the store's SQL. */
export interface PeopleStore extends PeopleSession {
  /** The same operations inside the caller's transaction, which then commits or rolls back all of it. */
  within(tx: SqlSession): PeopleSession;
}

/** The setting that holds the SHA-256 of the ADMIN_PASSWORD_HASH whose owner an owner removed. */
export const ENV_OWNER_REMOVED = 'admin_env_owner_removed';

/**
 * The key of the PostgreSQL advisory lock that a removal and the making of the first owner both
 * take first ("envown"), so an instance starting while the first owner is being removed waits for
 * the removal and then reads its tombstone.
 */
export const ENV_OWNER_LOCK_KEY = 0x656e766f776e;

/** The tombstone's value when the first owner was removed while ADMIN_PASSWORD_HASH was unset: it matches no hash. */
const REMOVED_WITHOUT_HASH = 'unset';

/** The setting of the inbox's last visit before people (admin/queries.ts), handed to the first owner. */
const OVERVIEW_VISIT = 'admin_overview_visited_at';

const COLUMNS =
  'id, email, name, role, forms, password_hash, origin, user_handle, mail_forms, digest, overview_visited_at, last_sign_in_at, created_at, updated_at';

type Row = {
  id: number | string;
  email: string | null;
  name: string;
  role: string;
  forms: string | null;
  password_hash: string | null;
  origin: string;
  user_handle: string;
  mail_forms: string | null;
  digest: number | string;
  overview_visited_at: string | null;
  last_sign_in_at: string | null;
  created_at: string;
  updated_at: string;
};

/**
 * The people of the admin in table `admin_users`, with `env` the configuration of the first owner.
 * Hint: the last-owner guard locks every owner's row (`FOR UPDATE`, in id order) before it reads
 * the person it changes, so two instances removing or demoting the last two owners at once are
 * serialised by PostgreSQL and the second sees one owner left; SQLite's write transaction
 * (`BEGIN IMMEDIATE`) serialises them already.
 */
export function createPeopleStore(sql: Sql, env: EnvOwner): PeopleStore {
  const top = operations(sql.engine, sql, (work) => sql.transaction(work), env);
  return { ...top, within: (tx) => operations(sql.engine, tx, (work) => work(tx), env) };
}

function operations(engine: Engine, db: SqlSession, atomically: <T>(work: (tx: SqlSession) => Promise<T>) => Promise<T>, env: EnvOwner): PeopleSession {
  const lockRow = engine === 'postgresql' ? 'FOR UPDATE' : '';
  // SQLite's write transaction (BEGIN IMMEDIATE) serialises these already.
  const lockEnvOwner = async (tx: SqlSession) => {
    if (engine === 'postgresql') await tx.get('SELECT pg_advisory_xact_lock(?) AS locked', [ENV_OWNER_LOCK_KEY]);
  };
  const findIn = async (session: SqlSession, id: number, lock = '') => {
    const row = await session.get<Row>(`SELECT ${COLUMNS} FROM admin_users WHERE id = ? ${lock}`, [id]);
    return row && toPerson(row);
  };
  const emailTaken = async (session: SqlSession, email: string, except?: number) =>
    (await session.get('SELECT id FROM admin_users WHERE email = ? AND id <> ?', [email, except ?? -1])) !== undefined;
  /**
   * Whether `person` is the last owner: every owner's row is locked first, then the person's,
   * so a concurrent removal or demotion of another owner waits for this transaction and counts again.
   */
  const isLastOwner = async (tx: SqlSession, id: number) => {
    const owners = await tx.all<{ id: number | string }>(`SELECT id FROM admin_users WHERE role = 'owner' ORDER BY id ${lockRow}`);
    const person = await findIn(tx, id, lockRow);
    if (!person) return { person, last: false };
    const others = owners.filter((owner) => Number(owner.id) !== id);
    return { person, last: person.role === 'owner' && others.length === 0 };
  };

  return {
    find: (id) => findIn(db, id),
    async findByEmail(email) {
      const row = await db.get<Row>(`SELECT ${COLUMNS} FROM admin_users WHERE email = ?`, [normalEmail(email)]);
      return row && toPerson(row);
    },
    async envOwner() {
      const row = await db.get<Row>(`SELECT ${COLUMNS} FROM admin_users WHERE origin = 'env'`);
      return row && toPerson(row);
    },
    async list() {
      return (await db.all<Row>(`SELECT ${COLUMNS} FROM admin_users ORDER BY id`)).map(toPerson);
    },
    create(person, now) {
      const email = normalEmail(person.email);
      return atomically(async (tx) => {
        if (await emailTaken(tx, email)) return { ok: false, reason: 'email-taken' } as const;
        const at = now.toISOString();
        const row = await tx.get<Row>(
          `INSERT INTO admin_users (email, name, role, forms, password_hash, origin, user_handle, digest, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
          [
            email,
            person.name ?? '',
            person.role,
            listOf(person.forms),
            person.passwordHash ?? null,
            person.origin,
            newUserHandle(),
            person.digest ? 1 : 0,
            at,
            at,
          ],
        );
        // Another instance gave the address to someone between the look and the insert.
        if (!row) return { ok: false, reason: 'email-taken' } as const;
        return { ok: true, person: toPerson(row) } as const;
      });
    },
    update(id, changes, now) {
      return atomically(async (tx) => {
        const demoted = changes.role !== undefined && changes.role !== 'owner';
        const { person, last } = demoted ? await isLastOwner(tx, id) : { person: await findIn(tx, id, lockRow), last: false };
        if (!person) return { ok: false, reason: 'not-found' } as const;
        if (last) return { ok: false, reason: 'last-owner' } as const;
        const email = changes.email === undefined ? undefined : normalEmail(changes.email);
        if (email !== undefined && (await emailTaken(tx, email, id))) return { ok: false, reason: 'email-taken' } as const;
        const set: Array<[string, SqlValue]> = [];
        if (email !== undefined) set.push(['email', email]);
        if (changes.name !== undefined) set.push(['name', changes.name]);
        if (changes.role !== undefined) set.push(['role', changes.role]);
        if (changes.forms !== undefined) set.push(['forms', listOf(changes.forms)]);
        if (changes.passwordHash !== undefined) set.push(['password_hash', changes.passwordHash]);
        if (changes.mailForms !== undefined) set.push(['mail_forms', listOf(changes.mailForms)]);
        if (changes.digest !== undefined) set.push(['digest', changes.digest ? 1 : 0]);
        set.push(['updated_at', now.toISOString()]);
        const row = await tx.get<Row>(`UPDATE admin_users SET ${set.map(([column]) => `${column} = ?`).join(', ')} WHERE id = ? RETURNING ${COLUMNS}`, [
          ...set.map(([, value]) => value),
          id,
        ]);
        return { ok: true, person: toPerson(row!) } as const;
      });
    },
    remove(id, now) {
      return atomically(async (tx) => {
        // Before any row is touched, so that a start making the first owner waits for all of it.
        await lockEnvOwner(tx);
        const { person, last } = await isLastOwner(tx, id);
        if (!person) return { ok: false, reason: 'not-found' } as const;
        if (last) return { ok: false, reason: 'last-owner' } as const;
        await tx.run('DELETE FROM admin_person_sessions WHERE user_id = ?', [id]);
        await tx.run('DELETE FROM admin_passkeys WHERE user_id = ?', [id]);
        await tx.run('DELETE FROM admin_webauthn_challenges WHERE user_id = ?', [id]);
        // Their reset links and any invitation still open to their address, none of which may bring
        // them back; and the links they made, which they may hold (shown to an owner when not mailed).
        await tx.run('UPDATE admin_links SET revoked_at = ? WHERE used_at IS NULL AND revoked_at IS NULL AND (user_id = ? OR email = ? OR created_by = ?)', [
          now.toISOString(),
          id,
          person.email ?? '',
          personRef(id),
        ]);
        if (person.origin === 'env') {
          // The password's sessions from before people are the first owner's too.
          await tx.run('DELETE FROM admin_sessions');
          // Written without a hash too: a first owner made later then knows one was removed before.
          await tx.run('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', [
            ENV_OWNER_REMOVED,
            env.passwordHash ? fingerprint(env.passwordHash) : REMOVED_WITHOUT_HASH,
          ]);
        }
        await tx.run('DELETE FROM admin_users WHERE id = ?', [id]);
        return { ok: true, person } as const;
      });
    },
    removePasskeys(id) {
      return atomically(async (tx) => {
        if (!(await tx.get('SELECT id FROM admin_users WHERE id = ?', [id]))) return undefined;
        const { changes } = await tx.run('DELETE FROM admin_passkeys WHERE user_id = ?', [id]);
        await tx.run('DELETE FROM admin_webauthn_challenges WHERE user_id = ?', [id]);
        await tx.run('DELETE FROM admin_person_sessions WHERE user_id = ?', [id]);
        return changes;
      });
    },
    async signedIn(id, at) {
      await db.run('UPDATE admin_users SET last_sign_in_at = ? WHERE id = ?', [at.toISOString(), id]);
    },
    async chooseMail(id, choice, checked, now) {
      // The forms are compared as stored: the same list is written the same way (listOf), NULL as NULL.
      const row = await db.get<Row>(
        `UPDATE admin_users SET mail_forms = ?, digest = ?, updated_at = ?
         WHERE id = ? AND role = ? AND forms IS NOT DISTINCT FROM ? RETURNING ${COLUMNS}`,
        [listOf(choice.mailForms), choice.digest ? 1 : 0, now.toISOString(), id, checked.role, listOf(checked.forms)],
      );
      if (row) return { ok: true, person: toPerson(row) } as const;
      return (await findIn(db, id)) ? ({ ok: false, reason: 'changed' } as const) : ({ ok: false, reason: 'not-found' } as const);
    },
    async ensureEnvOwner(now) {
      const hash = env.passwordHash;
      if (!hash) return 'unset';
      return atomically(async (tx) => {
        // Read after a removal under way has committed (it holds the same lock), never before.
        await lockEnvOwner(tx);
        const removed = await tx.get<{ value: string }>('SELECT value FROM settings WHERE name = ?', [ENV_OWNER_REMOVED]);
        if (removed?.value === fingerprint(hash)) return 'removed';
        /**
         * A first owner made after another was removed: the rows of admin_sessions (the version
         * before people, which an old instance may still write with the old hash) were never
         * theirs, and would resume as them.
         */
        const created = async () => {
          if (removed) await tx.run('DELETE FROM admin_sessions');
          return 'created' as const;
        };
        const visited = await tx.get<{ value: string }>('SELECT value FROM settings WHERE name = ?', [OVERVIEW_VISIT]);
        const at = now.toISOString();
        // Without a target, ON CONFLICT covers both the one env owner (index admin_users_env) and
        // an email already someone's: another instance making the first owner at this moment
        // waits here on PostgreSQL until it commits, then inserts nothing.
        const insert = (email: string | null) =>
          tx.run(
            `INSERT INTO admin_users (email, name, role, origin, user_handle, digest, overview_visited_at, created_at, updated_at)
             VALUES (?, 'Owner', 'owner', 'env', ?, 1, ?, ?, ?) ON CONFLICT DO NOTHING`,
            [email, newUserHandle(), visited?.value || null, at, at],
          );
        const email = env.contactTo ? normalEmail(env.contactTo) : null;
        if ((await insert(email)).changes === 1) return created();
        if (await tx.get("SELECT id FROM admin_users WHERE origin = 'env'")) return 'present';
        // CONTACT_TO is already a person's address (added by the command before the hash was set).
        return (await insert(null)).changes === 1 ? created() : 'present';
      });
    },
  };
}

/** An email as people are found by it: trimmed and lower-cased. */
export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The tombstone's value: a hash of ADMIN_PASSWORD_HASH, so the settings never hold the PHC string itself. */
function fingerprint(passwordHash: string): string {
  return createHash('sha256').update(passwordHash).digest('hex');
}

function newUserHandle(): string {
  return randomBytes(32).toString('base64url');
}

function listOf(forms: readonly string[] | null | undefined): string | null {
  return forms == null ? null : JSON.stringify([...new Set(forms)]);
}

function parseList(text: string | null): string[] | null {
  return text === null ? null : (JSON.parse(text) as string[]);
}

function toPerson(row: Row): Person {
  return {
    id: Number(row.id),
    email: row.email,
    name: row.name,
    role: row.role as Role,
    forms: parseList(row.forms),
    passwordHash: row.password_hash,
    origin: row.origin as PersonOrigin,
    userHandle: row.user_handle,
    mailForms: parseList(row.mail_forms),
    digest: Number(row.digest) === 1,
    overviewVisitedAt: row.overview_visited_at ? new Date(row.overview_visited_at) : null,
    lastSignInAt: row.last_sign_in_at ? new Date(row.last_sign_in_at) : null,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
