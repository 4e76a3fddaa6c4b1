import { NEWSLETTER_FORM } from '../forms/newsletter.ts';
import type { Engine, SqlValue } from '../sql/sql.ts';

// Who may do what: the one table, the one check (`authorize`) and the one condition that limits a
// query to an actor's forms (`scopeClause`). Pure: no I/O; its callers read the actor from a
// session or a key and ask here. Decisions 0263 (the rules) and 0264 (the condition).

/** The roles a person can have, from the most to the least trusted. */
export const ROLES = ['owner', 'editor', 'reader'] as const;

/** A person's role. */
export type Role = (typeof ROLES)[number];

/** What an API key may do: read, or read and change. */
export const KEY_SCOPES = ['read', 'write'] as const;

/** An API key's scope. */
export type KeyScope = (typeof KEY_SCOPES)[number];

/** An API key's name, as the admin and the command line take it: what the audit log and the list show. */
export const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;

/** Who holds a permission: a person by their role, a key by its scope. */
type Holder = Role | `${KeyScope} key`;

/**
 * Every permission, with who holds it and whether it is about the local subscriber list rather
 * than a message's form. Hint: this table is the only list of permissions; `PERMISSIONS` and
 * the `Permission` type are read from it, so a permission cannot exist without its holders.
 */
const PERMISSION_TABLE = {
  /** Messages' list, page, files, counts and chart. */
  'messages.read': { holders: ['owner', 'editor', 'reader', 'read key', 'write key'] },
  /** Spam, not spam, retry of a message (a key: spam and not spam, the API has no retry). */
  'messages.triage': { holders: ['owner', 'editor', 'write key'] },
  'messages.delete': { holders: ['owner', 'editor', 'write key'] },
  /** The CSV or JSON export of the actor's forms' messages. */
  'messages.export': { holders: ['owner', 'editor'] },
  'subscribers.read': { holders: ['owner', 'editor', 'reader', 'read key', 'write key'], onTheList: true },
  'subscribers.export': { holders: ['owner', 'editor'], onTheList: true },
  'subscribers.erase': { holders: ['owner', 'write key'], onTheList: true },
  /** A signup waiting for the newsletter provider, tried again. */
  'signups.retry': { holders: ['owner'] },
  /** Endpoints, deliveries and their replay. */
  'webhooks.manage': { holders: ['owner'] },
  'people.manage': { holders: ['owner'] },
  'keys.manage': { holders: ['owner'] },
  'audit.read': { holders: ['owner'] },
  /** The setup facts the overview shows (mail, database, providers). */
  'settings.read': { holders: ['owner'] },
  /** One's own password, passkeys and mail choices: every person, no key. */
  'self.manage': { holders: ['owner', 'editor', 'reader'] },
} as const satisfies Record<string, { holders: readonly Holder[]; onTheList?: true }>;

/** Something an actor may be allowed to do. */
export type Permission = keyof typeof PERMISSION_TABLE;

/** Every permission, in the table's order. */
export const PERMISSIONS = Object.keys(PERMISSION_TABLE) as readonly Permission[];

/** The name that stands for the local subscriber list in a list of forms. */
export const THE_LIST = NEWSLETTER_FORM.name;

/** The forms an actor may see: every form (present and future), or those named (`THE_LIST` for the subscribers). */
export type FormScope = { all: true } | { all: false; forms: readonly string[] };

/** How far a person's session goes: everywhere, or only to registering a passkey (ADMIN_REQUIRE_PASSKEY). */
export type SessionStage = 'full' | 'enroll';

/**
 * A signed-in person. Hint: an owner sees every form (the type says so); build one with
 * `personActor`, which applies that rule to what the row holds.
 */
export type PersonActor = { kind: 'person'; id: number; name: string; email: string | null; stage: SessionStage } & (
  | { role: 'owner'; scope: { all: true } }
  | { role: Exclude<Role, 'owner'>; scope: FormScope }
);

/** A program calling the API with a key. */
export type KeyActor = { kind: 'key'; id: number; name: string; keyScope: KeyScope; scope: FormScope };

/** Whoever asks: a person in the admin, or a key on the API. */
export type Actor = PersonActor | KeyActor;

/**
 * What `authorize` answers: `forbidden` (403) when the role or key can never do this, whatever
 * the target; `not-found` (404) when it could, but the target's form is not the actor's, the
 * answer a target that does not exist gets.
 */
export type Authorization = 'allow' | 'forbidden' | 'not-found';

/** A list of forms as it is stored (a JSON array's values, or NULL for every form) as a scope. */
export function formScope(forms: readonly string[] | null): FormScope {
  return forms === null ? { all: true } : { all: false, forms: [...forms] };
}

/** A person as their row and session hold them; an owner is every form whatever the row names. */
export function personActor(person: {
  id: number;
  name: string;
  email: string | null;
  role: Role;
  forms: readonly string[] | null;
  stage: SessionStage;
}): PersonActor {
  const { id, name, email, stage } = person;
  if (person.role === 'owner') return { kind: 'person', id, name, email, stage, role: 'owner', scope: { all: true } };
  return { kind: 'person', id, name, email, stage, role: person.role, scope: formScope(person.forms) };
}

/** An API key as its row holds it. */
export function keyActor(key: { id: number; name: string; scope: KeyScope; forms: readonly string[] | null }): KeyActor {
  return { kind: 'key', id: key.id, name: key.name, keyScope: key.scope, scope: formScope(key.forms) };
}

/** Whether a scope includes a form. */
export function inScope(scope: FormScope, form: string): boolean {
  return scope.all || scope.forms.includes(form);
}

/**
 * Whether `actor` may do `permission` to something of `target.form` (no target: a list, which
 * `scopeClause` then limits). The role or key scope first, so that nothing about the target is
 * told to whom may not act at all; then the form. Hint: the subscribers' permissions are judged
 * on the local list whatever target is given.
 */
export function authorize(actor: Actor, permission: Permission, target?: { form: string }): Authorization {
  if (actor.kind === 'person' && actor.stage === 'enroll' && permission !== 'self.manage') return 'forbidden';
  const rule: { holders: readonly Holder[]; onTheList?: true } = PERMISSION_TABLE[permission];
  if (!rule.holders.includes(holderOf(actor))) return 'forbidden';
  const form = rule.onTheList ? THE_LIST : target?.form;
  return form === undefined || inScope(actor.scope, form) ? 'allow' : 'not-found';
}

function holderOf(actor: Actor): Holder {
  return actor.kind === 'person' ? actor.role : `${actor.keyScope} key`;
}

/** A person's stable reference: the audit log's actor, and who made a link (`admin_links.created_by`). */
export function personRef(id: number): string {
  return `person:${id}`;
}

/** How the audit log names an actor: a stable reference and a snapshot of the name as it was. */
export function actorLabel(actor: Actor): { actor: string; actorName: string } {
  if (actor.kind === 'key') return { actor: `key:${actor.id}`, actorName: `key ${actor.name}` };
  const actorName = actor.email === null ? actor.name : actor.name === '' ? actor.email : `${actor.name} <${actor.email}>`;
  return { actor: personRef(actor.id), actorName };
}

/** A column as a query names it: `form` or `s.form`. */
const COLUMN = /^(?:[A-Za-z_][A-Za-z0-9_]*\.)?[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The SQL condition that limits a query to the forms of `scope` (`''` for every form: no
 * condition, no parameter), with its parameter. Hint: the forms go in one JSON array parameter,
 * so the text is the same however many there are and each connection prepares it once
 * (PostgreSQL names at most PREPARED_STATEMENTS texts, decision 0250); an empty list matches nothing.
 */
export function scopeClause(engine: Engine, scope: FormScope, column = 'form'): { sql: string; params: SqlValue[] } {
  // The column is the caller's SQL, never a visitor's text: anything else is a bug.
  if (!COLUMN.test(column)) throw new Error(`scopeClause: "${column}" is not a column name`);
  if (scope.all) return { sql: '', params: [] };
  const forms = JSON.stringify(scope.forms);
  return engine === 'sqlite'
    ? { sql: `${column} IN (SELECT value FROM json_each(?))`, params: [forms] }
    : { sql: `${column} IN (SELECT jsonb_array_elements_text(?::jsonb))`, params: [forms] };
}
