import { actorLabel, KEY_NAME, KEY_SCOPES, type KeyScope, THE_LIST } from '../../access/permissions.ts';
import { type AdminOutcome, done, messageId, record, type SessionCall } from './shared.ts';

// The API keys of /api/v1 in the admin (issue 42 item 5): an owner makes one, shown once, and
// revokes one, at once on every instance (api/keys.ts reads the table at every request).
// The command line does the same (api/command.ts). Decision 0299.

/** A key as the admin lists it: never its secret. */
export type AdminKey = {
  id: number;
  name: string;
  /** `sfk_` and 12 characters, shown as `sfk_ab12…`. */
  prefix: string;
  scope: KeyScope;
  /** `null` is every form. */
  forms: string[] | null;
  createdBy: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
};

/**
 * The API keys as the admin uses them: api/keys.ts `createApiKeys` is one (app/services.ts hands
 * it over). Hint: said here rather than imported, because api/ sits below admin/ in the folder map
 * (docs/development.md): the API reads the admin's audit log, so the admin cannot import the API.
 */
export type AdminKeys = {
  create(
    key: { name: string; scope: KeyScope; forms: readonly string[] | null; createdBy: string },
    now: Date,
  ): Promise<{ ok: true; key: string; record: AdminKey } | { ok: false; reason: 'name-taken' }>;
  list(): Promise<AdminKey[]>;
  revokeById(id: number, now: Date): Promise<AdminKey | undefined>;
};

/** What the keys' posts use besides the admin's other dependencies. */
export type KeyDeps = {
  keys: AdminKeys;
  /** The site's form names (a key's forms are among them, or `newsletter`, the local list). */
  forms: readonly string[];
};

const NOT_HERE: AdminOutcome = { kind: 'refused', status: 404, message: 'Not found.' };

function badRequest(message: string): AdminOutcome {
  return { kind: 'refused', status: 400, message };
}

/**
 * The forms a key's checkboxes chose: each `form.<name>=on` of a known form or the local list;
 * none ticked is every form, present and future (`null`). A name outside them is `undefined` (400).
 */
function formsField(fields: Record<string, unknown>, known: readonly string[]): string[] | null | undefined {
  const chosen: string[] = [];
  for (const name of Object.keys(fields)) {
    if (!name.startsWith('form.')) continue;
    const form = name.slice('form.'.length);
    if (form !== THE_LIST && !known.includes(form)) return undefined;
    chosen.push(form);
  }
  return chosen.length === 0 ? null : chosen.sort();
}

/** How the shown page and the audit log name a key's forms. */
export function describeKeyForms(forms: readonly string[] | null): string {
  if (forms === null) return 'every form';
  return forms.map((form) => (form === THE_LIST ? 'the newsletter list' : form)).join(', ');
}

/**
 * Makes a key with a name, a scope and forms, and shows it once (`shown`, with no-store): only
 * its prefix and a hash are kept, and the audit log names it by its name and prefix.
 * Hint: the key goes in the outcome and nowhere else: no redirect URL, no log, no audit detail.
 */
export async function createKey(call: SessionCall): Promise<AdminOutcome> {
  const deps = call.deps.apiKeys;
  if (!deps) return NOT_HERE;
  const name = typeof call.fields.name === 'string' ? call.fields.name.trim() : '';
  if (!KEY_NAME.test(name)) return badRequest('Give the key a name: letters, digits, spaces, dots, dashes or underscores, at most 64.');
  const scope = KEY_SCOPES.find((one): one is KeyScope => one === call.fields.scope);
  if (!scope) return badRequest('Choose what the key may do: read, or read and change (write).');
  const forms = formsField(call.fields, deps.forms);
  if (forms === undefined) return badRequest('One of the forms chosen does not exist on this site.');
  const made = await deps.keys.create({ name, scope, forms, createdBy: actorLabel(call.session.actor).actor }, call.now());
  if (!made.ok) return badRequest(`A live key is already named "${name}": revoke it first, or choose another name.`);
  await record(call, 'key-created', `${name} (${made.record.prefix}…), ${scope}, ${describeKeyForms(forms)}`);
  return {
    kind: 'shown',
    title: `API key "${name}"`,
    message: `The ${scope} key "${name}" for ${describeKeyForms(forms)}. Copy it now: it is shown only this once. Programs send it as Authorization: Bearer <key>.`,
    value: made.key,
    back: '/admin/keys',
  };
}

/** Revokes a live key by its id: its very next request is refused (401), on every instance. */
export async function revokeKey(call: SessionCall): Promise<AdminOutcome> {
  const deps = call.deps.apiKeys;
  if (!deps) return NOT_HERE;
  const id = messageId(call.fields.id);
  const revoked = id === undefined ? undefined : await deps.keys.revokeById(id, call.now());
  if (!revoked) return NOT_HERE;
  await record(call, 'key-revoked', `${revoked.name} (${revoked.prefix}…)`);
  return done('/admin/keys?revoked=1');
}

/** The keys' posts, as admin/actions/index.ts lists them: the owner's, like the webhooks. */
export const KEY_ACTIONS = {
  '/admin/actions/create-key': { action: 'create-key', permission: 'keys.manage', run: createKey },
  '/admin/actions/revoke-key': { action: 'revoke-key', permission: 'keys.manage', run: revokeKey },
} as const;
