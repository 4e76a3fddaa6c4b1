import { type Actor, actorLabel, authorize, type Authorization, type Permission, type PersonActor } from '../../access/permissions.ts';
import type { IncomingRequest } from '../../http/form.ts';
import { readForm } from '../../http/form.ts';
import { comesFromOrigin, csrfTokenMatches, readSessionToken } from '../session.ts';
import { ACCOUNT_ACTIONS } from './account.ts';
import { exportFile } from './exports.ts';
import { KEY_ACTIONS } from './keys.ts';
import { messageCommand } from './messages.ts';
import { ENROLL_ACTIONS, PASSKEY_ACTIONS } from './passkeys.ts';
import { PEOPLE_ACTIONS } from './people.ts';
import { type AdminDeps, type AdminOutcome, type AdminRequestContext, forbidden, type PublicCall, type SessionCall } from './shared.ts';
import { signIn, signOut } from './sign-in.ts';
import { deleteSubscriber, retrySignup } from './subscribers.ts';
import { replayDelivery } from './webhooks.ts';

export { BUSY_SIGN_IN } from './sign-in.ts';

/** What a person reads when their role cannot do what they posted. */
export const ROLE_CANNOT = 'Your role cannot do this.';

/** What an enrolment session reads when it posts anything but a passkey's registration or signing out. */
export const ENROLL_ONLY = 'Add a passkey first: this site asks every person to sign in with one.';

/** What a person reads when the local list is not among their forms: as if there were none. */
const NOT_THEIRS = 'Not found.';
export type { AdminDeps, AdminOutcome, AdminRequestContext, ExportGate, Exports, MessageCommands } from './shared.ts';
export { FORBIDDEN_MESSAGE } from './shared.ts';

/**
 * The permission a post needs: one of access/permissions.ts's table, or one chosen by a field of
 * its form (the export: `what`), with no permission for any other value (the action refuses it, 400).
 */
export type PermissionRule = Permission | { field: string; values: Readonly<Record<string, Permission>> };

/** A post anyone may send, signed in or not: sign-in alone. */
type PublicEntry = { action: string; public: true; run(call: PublicCall): Promise<AdminOutcome> };

/** A post of a signed-in person, and the permission it needs. */
type SessionEntry = { action: string; permission: PermissionRule; run(call: SessionCall): Promise<AdminOutcome> };

/**
 * The admin's form posts: each path takes one action, with the permission it needs, checked by
 * `handleAdminPost` before the action runs (a message's form is then checked by the action, which
 * alone knows the message). Hint: tests/lib/admin/registry.test.ts keeps every entry naming one of
 * the table, so the check cannot leave an action out. A new action is one line here.
 */
export const ADMIN_ACTIONS = {
  '/admin/actions/sign-in': { action: 'sign-in', public: true, run: signIn },
  '/admin/actions/sign-out': { action: 'sign-out', permission: 'self.manage', run: signOut },
  '/admin/actions/retry': { action: 'retry', permission: 'messages.triage', run: messageCommand('retry') },
  '/admin/actions/spam': { action: 'mark-spam', permission: 'messages.triage', run: messageCommand('mark-spam') },
  '/admin/actions/release': { action: 'release', permission: 'messages.triage', run: messageCommand('release') },
  '/admin/actions/delete': { action: 'delete-message', permission: 'messages.delete', run: messageCommand('delete-message') },
  '/admin/actions/delete-subscriber': { action: 'delete-subscriber', permission: 'subscribers.erase', run: deleteSubscriber },
  '/admin/actions/export': {
    action: 'export',
    permission: { field: 'what', values: { messages: 'messages.export', subscribers: 'subscribers.export' } },
    run: exportFile,
  },
  '/admin/actions/replay-delivery': { action: 'replay-delivery', permission: 'webhooks.manage', run: replayDelivery },
  '/admin/actions/retry-signup': { action: 'retry-signup', permission: 'signups.retry', run: retrySignup },
  ...PASSKEY_ACTIONS,
  ...PEOPLE_ACTIONS,
  ...KEY_ACTIONS,
  ...ACCOUNT_ACTIONS,
} as const satisfies Record<`/admin/actions/${string}`, PublicEntry | SessionEntry>;

/** The address of one of the admin's form posts. */
export type AdminActionPath = keyof typeof ADMIN_ACTIONS;

/** One entry of the registry. */
export type AdminActionEntry = (typeof ADMIN_ACTIONS)[keyof typeof ADMIN_ACTIONS];

/** One of the admin's form posts. */
export type AdminAction = AdminActionEntry['action'];

/** The entries by their action's name, as the route hands it over. */
const BY_ACTION = new Map<AdminAction, PublicEntry | SessionEntry>(Object.values(ADMIN_ACTIONS).map((entry) => [entry.action, entry]));

/** The permission this post asks, from its form's fields; `undefined` for sign-in, or when the field that chooses it says nothing known. */
export function permissionOf(entry: PublicEntry | SessionEntry, fields: Record<string, unknown>): Permission | undefined {
  if (!('permission' in entry)) return undefined;
  const rule = entry.permission;
  if (typeof rule === 'string') return rule;
  const value = fields[rule.field];
  return typeof value === 'string' && Object.hasOwn(rule.values, value) ? rule.values[value] : undefined;
}

/** Every permission an action may ask, whatever its fields (none for sign-in). */
export function permissionsOf(entry: PublicEntry | SessionEntry): Permission[] {
  if (!('permission' in entry)) return [];
  const rule = entry.permission;
  return typeof rule === 'string' ? [rule] : Object.values(rule.values);
}

/**
 * What the registry lets `actor` post with these fields, before the action reads anything: `enroll`
 * (an enrolment session posts a passkey's registration or signs out, nothing else), `forbidden`
 * (the role cannot), `not-found` (the list, or the form asked about, is not theirs) or `allow`.
 * Hint: `handleAdminPost` acts on it and the pages show their buttons by it (`mayPost`), so the two
 * cannot disagree (decision 0294). A field choosing no known permission (an export of "passwords")
 * is the action's 400; the action then does nothing, so it is judged against the strictest of what
 * it may ask.
 */
export function judgePost(actor: Actor, entry: SessionEntry, fields: Record<string, unknown>): Authorization | 'enroll' {
  if (actor.kind === 'person' && actor.stage === 'enroll' && !ENROLL_ACTIONS.has(entry.action)) return 'enroll';
  const asked = permissionOf(entry, fields);
  const judged = asked === undefined ? permissionsOf(entry).map((permission) => authorize(actor, permission)) : [authorize(actor, asked)];
  if (judged.includes('forbidden')) return 'forbidden';
  return asked !== undefined && judged.includes('not-found') ? 'not-found' : 'allow';
}

/**
 * Whether a page may offer `actor` the button or link that sends this post (with these fields:
 * the export's `what`): the server's own judgement of it (`judgePost`). Sign-in and the link
 * pages' posts are anyone's. A message's form is not asked: a page only shows a message its
 * person may read, and the server checks the form again.
 */
export function mayPost(actor: PersonActor, path: AdminActionPath, fields: Record<string, unknown> = {}): boolean {
  const entry: PublicEntry | SessionEntry = ADMIN_ACTIONS[path];
  return 'public' in entry || judgePost(actor, entry, fields) === 'allow';
}

/**
 * Handles one admin post after its path chose the action: the Origin check first (403),
 * then, except for signing in, a live session (else back to the sign-in page), its CSRF token
 * (403) and the person's permission for it (`authorize`: 403 "Your role cannot do this.", audited;
 * 404 for the subscribers' posts when the list is not among their forms); only then the action,
 * which answers with a redirect, a file, JSON or a page.
 * Hint: nothing is read or changed before those checks pass.
 */
export async function handleAdminPost(action: AdminAction, request: IncomingRequest, deps: AdminDeps, context: AdminRequestContext): Promise<AdminOutcome> {
  const { publicOrigin } = context;
  if (publicOrigin === undefined || !comesFromOrigin(request, publicOrigin)) return forbidden();
  const secure = publicOrigin.startsWith('https:');
  const form = await readForm(request, 16 * 1024);
  if (!form.ok) return { kind: 'refused', status: 400, message: 'The form could not be read.' };
  const token = readSessionToken(request, secure);
  const entry = BY_ACTION.get(action);
  // The route table is read from the registry: an action it hands over is always in it.
  if (!entry) throw new Error(`handleAdminPost: no action "${action}"`);
  const call = { request, fields: form.fields, secure, deps, context, now: deps.now ?? (() => new Date()) };

  if ('public' in entry) return entry.run({ ...call, token });

  const resumed = await deps.sessions.resume(token);
  if (!resumed.ok) return { kind: 'redirect', location: `/admin?ended=${resumed.reason === 'missing' ? 'none' : 'expired'}` };
  if (!csrfTokenMatches(resumed.session, call.fields.csrf)) return forbidden();
  const { actor } = resumed.session;
  const judged = judgePost(actor, entry, call.fields);
  // An enrolment session (ADMIN_REQUIRE_PASSKEY) registers a passkey or signs out, nothing else.
  if (judged === 'enroll') return { kind: 'refused', status: 403, message: ENROLL_ONLY };
  if (judged === 'forbidden') {
    await deps.audit.recordRepeated({ at: call.now().toISOString(), action: 'refused', detail: action, client: context.clientHash, ...actorLabel(actor) });
    return { kind: 'refused', status: 403, message: ROLE_CANNOT };
  }
  if (judged === 'not-found') return { kind: 'refused', status: 404, message: NOT_THEIRS };
  return entry.run({ ...call, session: resumed.session });
}
