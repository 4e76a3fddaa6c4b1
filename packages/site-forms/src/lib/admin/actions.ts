import type { IncomingRequest } from '../http/form.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { subscribersToCsv } from '../newsletter/subscribers.ts';
import { readForm } from '../http/form.ts';
import type { Signups } from '../newsletter/signups.ts';
import type { Devices } from './device.ts';
import type { PasswordCheck } from './password.ts';
import type { Deliveries } from '../webhooks/deliveries.ts';
import type { Change } from '../submissions/machine.ts';
import { type AuditAction, type AuditLog, erasedAddress } from './audit.ts';
import type { AdminQueries } from './queries.ts';
import { clearedSessionCookie, comesFromOrigin, csrfTokenMatches, readSessionToken, type Session, type Sessions, sessionCookie } from './session.ts';
import type { SignInThrottle } from './throttle.ts';

/** The admin's form posts: each path takes one action. */
export const ADMIN_ACTIONS = {
  '/admin/actions/sign-in': 'sign-in',
  '/admin/actions/sign-out': 'sign-out',
  '/admin/actions/retry': 'retry',
  '/admin/actions/spam': 'mark-spam',
  '/admin/actions/release': 'release',
  '/admin/actions/delete': 'delete-message',
  '/admin/actions/delete-subscriber': 'delete-subscriber',
  '/admin/actions/export': 'export',
  '/admin/actions/replay-delivery': 'replay-delivery',
  '/admin/actions/retry-signup': 'retry-signup',
} as const;

/** One of the admin's form posts. */
export type AdminAction = (typeof ADMIN_ACTIONS)[keyof typeof ADMIN_ACTIONS];

/** What an admin post comes to: a redirect (post, then redirect, then get), a file, or a refusal. */
export type AdminOutcome =
  | { kind: 'redirect'; location: string; cookie?: string }
  | { kind: 'download'; filename: string; contentType: string; body: string | AsyncIterable<string> }
  | { kind: 'refused'; status: 400 | 403 | 404 | 429 | 500; message: string; headers?: Record<string, string> };

/** The message of a post from another site, or with a stale form. */
export const FORBIDDEN_MESSAGE = 'This action was refused: it did not come from this site’s admin pages. Reload the page and try again.';

/** What the owner's delivery and spam commands do, as the admin needs them; each answers the state machine's change. */
export type MessageCommands = {
  /** Puts a failed message back in the queue; of concurrent retries, one changes it. */
  retry(id: number, at: Date): Promise<Change>;
  /** Holds a message as spam; a pending one is then not sent, one being sent is held when its send ends. */
  markSpam(id: number, at: Date): Promise<Change>;
  /** Releases a held message to delivery, exactly once, or back to `sent` if it was sent before. */
  release(id: number, at: Date): Promise<Change>;
  /** Deletes a message with its history; one being sent is deleted when its send ends. */
  remove(id: number, at: Date): Promise<Change>;
};

/** The rows of the two exports, from the store. */
export type Exports = {
  /**
   * Every message in the format asked, in chunks read from a cursor; `excel` asks for the CSV for
   * Excel (labels, the site's time zone and its language's separator, decision 0148).
   */
  messages(format: 'csv' | 'json', options: { excel: boolean }): AsyncIterable<string>;
  /** How many messages there are, for the audit log's line. */
  countMessages(): Promise<number>;
  subscribers(): Promise<{ email: string; created: string }[]>;
};

/** Everything the admin's posts use. */
export type AdminDeps = {
  /** Whether a password is the owner's (constant-time, a few at a time). */
  checkPassword: PasswordCheck;
  /** Browsers that signed in before: they keep their place in the password check's queue. */
  devices?: Pick<Devices, 'known'>;
  sessions: Sessions;
  throttle: SignInThrottle;
  audit: AuditLog;
  queries: AdminQueries;
  commands: MessageCommands;
  exports: Exports;
  /** The webhooks' deliveries, for "Replay". */
  webhooks: Pick<Deliveries, 'replay'>;
  /** The signups waiting for the provider, for "Retry". */
  signups: Pick<Signups, 'retry'>;
  /** When the export of messages being written started: one at a time, however many tabs ask. */
  exporting?: ExportGate;
  now?: () => Date;
  /** Waits before a password is checked; the tests count instead of waiting. */
  wait?: (ms: number) => Promise<void>;
};

/** Who sent a post: where the site is, as the browser addressed it, and the client for the throttle and the log. */
export type AdminRequestContext = { publicOrigin: string | undefined; clientKey: string; clientHash: string };

/**
 * Handles one admin post after its path chose the action: the Origin check first (403),
 * then, except for signing in, a live session (else back to the sign-in page) and its
 * CSRF token (403); only then the action, which answers with a redirect or a file.
 * Hint: nothing is read or changed before those checks pass.
 */
export async function handleAdminPost(action: AdminAction, request: IncomingRequest, deps: AdminDeps, context: AdminRequestContext): Promise<AdminOutcome> {
  const { publicOrigin } = context;
  if (publicOrigin === undefined || !comesFromOrigin(request, publicOrigin)) return forbidden();
  const secure = publicOrigin.startsWith('https:');
  const form = await readForm(request, 16 * 1024);
  if (!form.ok) return { kind: 'refused', status: 400, message: 'The form could not be read.' };
  const fields = form.fields;
  const token = readSessionToken(request, secure);

  if (action === 'sign-in') return signIn(request, fields.password, token, secure, deps, context);

  const resumed = await deps.sessions.resume(token);
  if (!resumed.ok) return { kind: 'redirect', location: `/admin?ended=${resumed.reason === 'missing' ? 'none' : 'expired'}` };
  if (!csrfTokenMatches(resumed.session, fields.csrf)) return forbidden();
  return act(action, fields, resumed.session, secure, deps, context);
}

/** What a sign-in is told when the password check's queue is full. */
export const BUSY_SIGN_IN = 'Many sign-ins are being checked right now. Please try again in a minute.';

async function signIn(
  request: IncomingRequest,
  password: unknown,
  oldToken: string | undefined,
  secure: boolean,
  deps: AdminDeps,
  context: AdminRequestContext,
): Promise<AdminOutcome> {
  const { throttle, audit, sessions, now = () => new Date(), wait = (ms) => sleep(ms) } = deps;
  const gate = await throttle.attempt(context.clientKey);
  if (!gate.ok) {
    // One row per client per quarter-hour with a count: a flood of refused attempts must not flood the log.
    await audit.recordRepeated({ at: now().toISOString(), action: 'sign-in-failed', detail: 'refused: too many attempts', client: context.clientHash });
    const minutes = Math.max(1, Math.ceil(gate.retryAfterSeconds / 60));
    return {
      kind: 'refused',
      status: 429,
      message: `Too many attempts to sign in. Please try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      headers: { 'retry-after': String(gate.retryAfterSeconds) },
    };
  }
  if (gate.delayMs > 0) await wait(gate.delayMs);
  const known = deps.devices?.known(request, secure) ?? false;
  const right = typeof password === 'string' && password !== '' && (await deps.checkPassword(password, { known }));
  if (right === 'busy') {
    // A flood from many addresses fills the queue: refused at once rather than after minutes of waiting.
    return { kind: 'refused', status: 429, message: BUSY_SIGN_IN, headers: { 'retry-after': '60' } };
  }
  if (!right) {
    // Counted like the refusals: a guess from 200 addresses must not write a row per guess for a year.
    await audit.recordRepeated({ at: now().toISOString(), action: 'sign-in-failed', detail: 'wrong password', client: context.clientHash });
    return { kind: 'redirect', location: '/admin?failed=1' };
  }
  await throttle.succeeded(context.clientKey);
  // A new token at every sign-in: a token planted before it (session fixation) is worthless.
  if (oldToken) await sessions.end(oldToken);
  const session = await sessions.start();
  await record(audit, now, 'sign-in', '', context);
  return { kind: 'redirect', location: '/admin', cookie: sessionCookie(session.token, secure) };
}

async function act(
  action: Exclude<AdminAction, 'sign-in'>,
  fields: Record<string, unknown>,
  session: Session,
  secure: boolean,
  deps: AdminDeps,
  context: AdminRequestContext,
): Promise<AdminOutcome> {
  const { audit, queries, commands, sessions, now = () => new Date() } = deps;
  const done = (location: string): AdminOutcome => ({ kind: 'redirect', location });
  switch (action) {
    case 'sign-out':
      await sessions.end(session.token);
      await record(audit, now, 'sign-out', '', context);
      return { kind: 'redirect', location: '/admin?ended=signed-out', cookie: clearedSessionCookie(secure) };
    case 'retry':
    case 'mark-spam':
    case 'release':
    case 'delete-message': {
      const id = messageId(fields.id);
      if (id === undefined) return { kind: 'refused', status: 400, message: 'No such message.' };
      const command = { retry: commands.retry, 'mark-spam': commands.markSpam, release: commands.release, 'delete-message': commands.remove }[action];
      const change = await command(id, now());
      if (!change.found) return notFound();
      // Only the instance whose write moved the message records it: concurrent clicks audit once.
      if (change.changed) await record(audit, now, action, `#${id}${change.deferred ? ' (when its send ends)' : ''}`, context);
      if (action === 'delete-message' && change.changed && !change.deferred) return done('/admin/messages?done=deleted');
      return done(`/admin/messages/${id}?done=${noticeOf(action, change)}`);
    }
    case 'delete-subscriber': {
      const email = typeof fields.email === 'string' ? fields.email : '';
      const erased = await queries.deleteSubscriber(email);
      if (!erased.found) return done('/admin/subscribers?done=unchanged');
      await record(audit, now, 'delete-subscriber', erasedAddress(email), context);
      // The store's part is done; the count Redis keeps (a day at most) waits for a second erasure.
      return done(`/admin/subscribers?done=${erased.redisUnreachable ? 'deleted-count-kept' : 'deleted'}`);
    }
    case 'export':
      return exportFile(fields, deps, context);
    case 'retry-signup': {
      const id = messageId(fields.id);
      if (id === undefined || !(await deps.signups.retry(id, now()))) return done('/admin/subscribers?done=unchanged-signup');
      await record(audit, now, 'retry-signup', `#${id}`, context);
      return done('/admin/subscribers?done=signup-retried');
    }
    case 'replay-delivery': {
      const id = messageId(fields.id);
      const replay = id === undefined ? undefined : await deps.webhooks.replay(id, now());
      if (replay?.kind !== 'replayed' && replay?.kind !== 'due') return done('/admin/webhooks?done=unchanged-delivery');
      await record(audit, now, 'replay-delivery', `#${id}`, context);
      return done(`/admin/webhooks?done=${replay.kind === 'due' ? 'delivery-due' : 'replayed'}`);
    }
  }
}

async function exportFile(fields: Record<string, unknown>, deps: AdminDeps, context: AdminRequestContext): Promise<AdminOutcome> {
  const { what, format } = fields;
  if ((what !== 'messages' && what !== 'subscribers') || (format !== 'csv' && format !== 'json')) {
    return { kind: 'refused', status: 400, message: 'Choose what to export: messages or subscribers, as CSV or JSON.' };
  }
  const now = deps.now ?? (() => new Date());
  // "For Excel": the same CSV with a UTF-8 byte-order mark, without which Excel shows Zoë as ZoÃ«.
  const byteOrderMark = fields.bom === '1';
  const day = now().toISOString().slice(0, 10);
  const file = {
    kind: 'download' as const,
    filename: `${what}-${day}.${format}`,
    contentType: format === 'json' ? 'application/json; charset=utf-8' : 'text/csv; charset=utf-8',
  };
  if (what === 'subscribers') {
    const rows = await deps.exports.subscribers();
    await record(deps.audit, now, 'export-subscribers', `${rows.length} as ${format.toUpperCase()}`, context);
    // The same columns and time format as `npm run subscribers -- export`.
    return { ...file, body: format === 'json' ? `${JSON.stringify(rows, null, 2)}\n` : subscribersToCsv(rows, { byteOrderMark }) };
  }
  // Messages may be many and long: streamed from a cursor, one export at a time (decision 0127).
  const gate = deps.exporting ?? {};
  const started = now().getTime();
  if (gate.since !== undefined && started - gate.since < EXPORT_GATE_MS) {
    return { kind: 'refused', status: 429, message: 'An export is already being written. Try again when it has finished.', headers: { 'retry-after': '30' } };
  }
  gate.since = started;
  try {
    await record(deps.audit, now, 'export-messages', `${await deps.exports.countMessages()} as ${format.toUpperCase()}`, context);
  } catch (error) {
    gate.since = undefined;
    throw error;
  }
  return { ...file, body: released(deps.exports.messages(format, { excel: byteOrderMark && format === 'csv' }), gate, started) };
}

/** One export at a time; a gate left by a download that never started to be written opens again after this long. */
const EXPORT_GATE_MS = 10 * 60 * 1000;

/** When the export being written started (`since`), if one is. */
export type ExportGate = { since?: number | undefined };

/** The chunks of an export, letting the next export start once they are written, or the download is abandoned. */
async function* released(chunks: AsyncIterable<string>, gate: ExportGate, started: number): AsyncGenerator<string> {
  try {
    yield* chunks;
  } finally {
    if (gate.since === started) gate.since = undefined;
  }
}

/** Which notice the message's page shows after a command: what happened, or will once the send under way ends. */
function noticeOf(action: 'retry' | 'mark-spam' | 'release' | 'delete-message', change: Extract<Change, { found: true }>): string {
  if (!change.changed) return 'unchanged';
  if (change.deferred) return `${action}-deferred`;
  if (action === 'release' && change.to === 'sent') return 'release-sent';
  if (action === 'mark-spam' && change.from === 'sent') return 'mark-spam-sent';
  return action;
}

function messageId(value: unknown): number | undefined {
  return typeof value === 'string' && /^[1-9]\d{0,15}$/.test(value) ? Number(value) : undefined;
}

function forbidden(): AdminOutcome {
  return { kind: 'refused', status: 403, message: FORBIDDEN_MESSAGE };
}

function notFound(): AdminOutcome {
  return { kind: 'refused', status: 404, message: 'No such message: it may have been deleted already.' };
}

async function record(audit: AuditLog, now: () => Date, action: AuditAction, detail: string, context: AdminRequestContext): Promise<void> {
  await audit.record({ at: now().toISOString(), action, detail, client: context.clientHash });
}
