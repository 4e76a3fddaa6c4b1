import { type Actor, actorLabel, type FormScope } from '../../access/permissions.ts';
import type { IncomingRequest } from '../../http/form.ts';
import type { Signups } from '../../newsletter/signups.ts';
import type { Passkeys } from '../../people/passkeys.ts';
import type { PeopleSession } from '../../people/store.ts';
import type { Change } from '../../submissions/machine.ts';
import type { Deliveries } from '../../webhooks/deliveries.ts';
import type { AuditAction, AuditLog } from '../audit.ts';
import type { Devices } from '../device.ts';
import type { PasswordCheck } from '../password.ts';
import type { AdminQueries } from '../queries.ts';
import type { Session, Sessions } from '../session.ts';
import type { SignInThrottle } from '../throttle.ts';
import type { KeyDeps } from './keys.ts';
import type { TeamDeps } from './people.ts';

// What every admin action shares: what it is given, what it answers, and the few helpers the
// actions' files have in common. The registry and the checks before an action are in index.ts.

/**
 * What an admin post comes to: a redirect (post, then redirect, then get), a file, a refusal,
 * JSON (`json`: for the passkey ceremonies' script, always with `success`), or a page that shows
 * a value once (`shown`: an invitation link when mail is off, an API key), rendered with
 * `Cache-Control: no-store`. Hint: a one-time value is never put in a redirect's URL, where
 * the history, the logs and the Referer would keep it.
 */
export type AdminOutcome =
  | { kind: 'redirect'; location: string; cookie?: string }
  | { kind: 'download'; filename: string; contentType: string; body: string | AsyncIterable<string> }
  | { kind: 'refused'; status: 400 | 403 | 404 | 429 | 500; message: string; headers?: Record<string, string> }
  | {
      kind: 'json';
      status: 200 | 400 | 403 | 404 | 429;
      body: { success: boolean; [name: string]: unknown };
      /** The session cookie a passkey's sign-in (or an enrolment that ends) sets. */
      cookie?: string;
      headers?: Record<string, string>;
    }
  | { kind: 'shown'; title: string; message: string; value: string; back: string };

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
  messages(format: 'csv' | 'json', options: { excel: boolean; scope?: FormScope | undefined }): AsyncIterable<string>;
  /** How many messages of `scope`'s forms (every form without one) there are, for the audit log's line. */
  countMessages(scope?: FormScope): Promise<number>;
  subscribers(): Promise<{ email: string; created: string }[]>;
};

/** When the export being written started (`since`), if one is. */
export type ExportGate = { since?: number | undefined };

/** Everything the admin's posts use. */
export type AdminDeps = {
  /** Whether a password is right (constant-time, a few at a time): ADMIN_PASSWORD_HASH's, or a person's own hash. */
  checkPassword: PasswordCheck;
  /** The people who sign in: found by email, the first owner by an empty one. */
  people: Pick<PeopleSession, 'envOwner' | 'findByEmail' | 'signedIn'> & Partial<Pick<PeopleSession, 'find'>>;
  /** The people's passkeys and their ceremonies; none without a PUBLIC_URL on a domain (the passkey posts are then 404). */
  passkeys?: Passkeys | undefined;
  /** ADMIN_REQUIRE_PASSKEY: a right password of a person with a passkey is refused, of one without starts an enrolment. */
  requirePasskey?: boolean;
  /** How many passkey sign-ins a client may begin (30 in 15 minutes). */
  passkeyOptionsLimit?: ClientLimit | undefined;
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
  /** The owner's team: people, their links and the mail that carries them (none in the tests of other posts: their posts answer 404). */
  team?: TeamDeps;
  /** The API keys and the site's forms, for the keys' posts (none in the tests of other posts: their posts answer 404). */
  apiKeys?: KeyDeps;
  /** Waits before a password is checked; the tests count instead of waiting. */
  wait?: (ms: number) => Promise<void>;
};

/** A budget per client: whether one more is allowed, and if not for how long. */
export type ClientLimit = { consume(clientKey: string): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> };

/** Who sent a post: where the site is, as the browser addressed it, and the client for the throttle and the log. */
export type AdminRequestContext = { publicOrigin: string | undefined; clientKey: string; clientHash: string };

/** One post as an action gets it, once the checks before it passed: its form's fields, whether the site is on https, and what it may use. */
export type ActionCall = {
  request: IncomingRequest;
  fields: Record<string, unknown>;
  secure: boolean;
  deps: AdminDeps;
  context: AdminRequestContext;
  now: () => Date;
};

/** A public action's call (sign-in): the session cookie it came with, if any, instead of a live session. */
export type PublicCall = ActionCall & { token: string | undefined };

/** A signed-in action's call: the session the post's cookie and CSRF token proved. */
export type SessionCall = ActionCall & { session: Session };

/** The admin page a done action goes back to (post, then redirect, then get). */
export function done(location: string): AdminOutcome {
  return { kind: 'redirect', location };
}

/** A message's or a row's id from a form field: a positive integer of at most 16 digits, else undefined. */
export function messageId(value: unknown): number | undefined {
  return typeof value === 'string' && /^[1-9]\d{0,15}$/.test(value) ? Number(value) : undefined;
}

/** The refusal of a post from another site, or with a stale form. */
export function forbidden(): AdminOutcome {
  return { kind: 'refused', status: 403, message: FORBIDDEN_MESSAGE };
}

/**
 * One line of the audit log for what the action did, naming the client and who did it: the
 * session's person, or `actor` when the action knows them otherwise (a sign-in, before its session).
 */
export async function record(call: ActionCall, action: AuditAction, detail: string, actor?: Actor): Promise<void> {
  const who = actor ?? ('session' in call ? (call as SessionCall).session.actor : undefined);
  await call.deps.audit.record({ at: call.now().toISOString(), action, detail, client: call.context.clientHash, ...(who && actorLabel(who)) });
}
