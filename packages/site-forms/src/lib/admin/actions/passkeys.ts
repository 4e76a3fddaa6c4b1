import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { authorize, personActor } from '../../access/permissions.ts';
import { limiterClass } from '../../lazy.ts';
import type { Logger } from '../../log.ts';
import { passkeyName, PASSKEY_NAME_MAX } from '../../people/passkeys.ts';
import type { Person } from '../../people/store.ts';
import { csrfTokenMatches, sessionCookie } from '../session.ts';
import { type AdminOutcome, type ClientLimit, done, FORBIDDEN_MESSAGE, type PublicCall, record, type SessionCall } from './shared.ts';

// The passkey posts (issue 42, plan section 6; decision 0290): the options of a ceremony and its
// answer, as JSON for the sign-in and account pages' script, and the plain form posts that
// rename or remove one of one's passkeys.

/** What every refused passkey sign-in reads, whatever was wrong: an unknown passkey, another person's, a replay, a bad signature. */
export const PASSKEY_REFUSED = 'This passkey cannot sign in here.';
/** The answer to an enrolment that ended while its passkey was being added. */
const SESSION_ENDED = 'Your session has ended. Please sign in again.';

/** How many passkey sign-ins a client may begin in the window (the options are public). */
export const PASSKEY_OPTIONS_PER_CLIENT = 30;

/** The window of that count: 15 minutes. */
export const PASSKEY_OPTIONS_WINDOW_SECONDS = 15 * 60;

/**
 * The posts an enrolment session (ADMIN_REQUIRE_PASSKEY, a right password and no passkey yet)
 * may send: the passkey ones and signing out. Hint: `handleAdminPost` refuses every other.
 */
export const ENROLL_ACTIONS: ReadonlySet<string> = new Set(['sign-out', 'passkey-options', 'passkey-register', 'remove-passkey', 'rename-passkey']);

const NOT_FOUND = { kind: 'json', status: 404, body: { success: false, message: 'Not found.' } } as const satisfies AdminOutcome;

function failed(status: 400 | 403 | 404 | 429, message: string, headers?: Record<string, string>): AdminOutcome {
  return { kind: 'json', status, body: { success: false, message }, ...(headers && { headers }) };
}

/** A ceremony's answer, sent by the script as JSON text in the form field `response`. */
function answerOf(value: unknown): unknown {
  if (typeof value !== 'string') return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * `purpose=authenticate` (public, 30 per client in 15 minutes): options to sign in with any of
 * the site's passkeys. `purpose=register` (a session and its CSRF token): options to add one to
 * the session's person, which only this session can answer.
 */
export async function passkeyOptions(call: PublicCall): Promise<AdminOutcome> {
  const { deps, fields, context, now } = call;
  const { passkeys } = deps;
  if (!passkeys) return NOT_FOUND;
  if (fields.purpose === 'authenticate') {
    const gate = await deps.passkeyOptionsLimit?.consume(context.clientKey);
    if (gate && !gate.ok) {
      const minutes = Math.max(1, Math.ceil(gate.retryAfterSeconds / 60));
      return failed(429, `Too many attempts to sign in. Please try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, {
        'retry-after': String(gate.retryAfterSeconds),
      });
    }
    return { kind: 'json', status: 200, body: { success: true, options: await passkeys.authenticationOptions(now()) } };
  }
  if (fields.purpose !== 'register') return failed(400, 'Ask for the options of a sign-in or of a new passkey.');
  // Checked here as handleAdminPost checks a signed-in post: this one path serves both.
  const resumed = await deps.sessions.resume(call.token);
  if (!resumed.ok) return failed(403, 'Your session has ended. Please sign in again.');
  if (!csrfTokenMatches(resumed.session, fields.csrf) || authorize(resumed.session.actor, 'self.manage') !== 'allow') return failed(403, FORBIDDEN_MESSAGE);
  const person = await personOf(call, resumed.session.actor.id);
  if (!person) return NOT_FOUND;
  const options = await passkeys.registrationOptions(person, resumed.session.tokenHash, now());
  return { kind: 'json', status: 200, body: { success: true, options } };
}

/**
 * Signs in with a passkey (public): the answer to a sign-in's options, verified; a session of its
 * person (`method: passkey`) and its cookie, audited with the passkey's name. Every refusal is
 * the same answer, and counts against the client's sign-in throttle as a wrong password does.
 */
export async function passkeySignIn(call: PublicCall): Promise<AdminOutcome> {
  const { deps, context, now, secure, token: oldToken } = call;
  const { passkeys, throttle, sessions, audit, wait = (ms) => sleep(ms) } = deps;
  if (!passkeys) return NOT_FOUND;
  const gate = await throttle.attempt(context.clientKey);
  if (!gate.ok) {
    await audit.recordRepeated({ at: now().toISOString(), action: 'sign-in-failed', detail: 'refused: too many attempts', client: context.clientHash });
    const minutes = Math.max(1, Math.ceil(gate.retryAfterSeconds / 60));
    return failed(429, `Too many attempts to sign in. Please try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, {
      'retry-after': String(gate.retryAfterSeconds),
    });
  }
  if (gate.delayMs > 0) await wait(gate.delayMs);
  const result = await passkeys.signIn(answerOf(call.fields.response), now());
  if (!result.ok) {
    await audit.recordRepeated({ at: now().toISOString(), action: 'sign-in-failed', detail: 'passkey refused', client: context.clientHash });
    return failed(403, PASSKEY_REFUSED);
  }
  const { person, passkey } = result;
  await throttle.succeeded(context.clientKey);
  // A new token at every sign-in: a token planted before it (session fixation) is worthless.
  if (oldToken) await sessions.end(oldToken);
  const session = await sessions.start({ userId: person.id, stage: 'full', method: 'passkey' });
  await deps.people.signedIn(person.id, now());
  await record(call, 'sign-in', `with passkey ${passkey.name}`, personActor({ ...person, stage: 'full' }));
  return { kind: 'json', status: 200, body: { success: true, location: '/admin' }, cookie: sessionCookie(session.token, secure) };
}

/**
 * Adds a passkey to the session's person from the answer to this session's registration options,
 * named by the field `name` (at most 60 characters, "Passkey" when empty). An enrolment session
 * then ends and a full one begins (a new token, as at every sign-in).
 */
export async function passkeyRegister(call: SessionCall): Promise<AdminOutcome> {
  const { deps, session, now, secure } = call;
  const { passkeys } = deps;
  if (!passkeys) return NOT_FOUND;
  const name = passkeyName(call.fields.name);
  if (name === undefined) return failed(400, `A passkey’s name has at most ${PASSKEY_NAME_MAX} characters.`);
  const person = await personOf(call, session.actor.id);
  if (!person) return NOT_FOUND;
  const result = await passkeys.register(person, session.tokenHash, answerOf(call.fields.response), name, now());
  if (!result.ok) {
    return failed(400, result.reason === 'duplicate' ? 'This passkey is registered already.' : 'The passkey could not be added. Please try again.');
  }
  await record(call, 'passkey-added', result.passkey.name);
  if (session.actor.stage !== 'enroll') return { kind: 'json', status: 200, body: { success: true, location: '/admin/account' } };
  // The enrolment becomes a full session only if it still lives: a reset or a removal that ended it
  // while this post ran (on any instance) must not be outlived by a session begun here.
  if (!(await deps.sessions.end(session.token))) return failed(403, SESSION_ENDED);
  const full = await deps.sessions.start({ userId: person.id, stage: 'full', method: session.method ?? 'password' });
  return { kind: 'json', status: 200, body: { success: true, location: '/admin' }, cookie: sessionCookie(full.token, secure) };
}

/** Removes one of the session's person's passkeys (a plain form post, field `id`). */
export async function removePasskey(call: SessionCall): Promise<AdminOutcome> {
  const { passkeys } = call.deps;
  const id = typeof call.fields.id === 'string' ? call.fields.id : '';
  const removed = passkeys && id !== '' ? await passkeys.remove(call.session.actor.id, id) : undefined;
  if (!removed) return { kind: 'refused', status: 404, message: 'This passkey is not one of yours.' };
  await record(call, 'passkey-removed', removed.name);
  return done('/admin/account?passkey=removed');
}

/** Renames one of the session's person's passkeys (a plain form post, fields `id` and `name`). */
export async function renamePasskey(call: SessionCall): Promise<AdminOutcome> {
  const { passkeys } = call.deps;
  const name = passkeyName(call.fields.name);
  if (name === undefined) return { kind: 'refused', status: 400, message: `A passkey’s name has at most ${PASSKEY_NAME_MAX} characters.` };
  const id = typeof call.fields.id === 'string' ? call.fields.id : '';
  if (!passkeys || id === '' || !(await passkeys.rename(call.session.actor.id, id, name))) {
    return { kind: 'refused', status: 404, message: 'This passkey is not one of yours.' };
  }
  await record(call, 'passkey-renamed', name);
  return done('/admin/account?passkey=renamed');
}

/** The person of a session, as the store holds them now (their user handle, their email). */
async function personOf(call: PublicCall | SessionCall, id: number): Promise<Person | undefined> {
  return call.deps.people.find?.(id);
}

/**
 * The admin's passkey posts, for the registry (admin/actions/index.ts): the options and the
 * sign-in are public (the options for a new passkey check their session themselves); the rest
 * are one's own (`self.manage`), which an enrolment session has.
 */
export const PASSKEY_ACTIONS = {
  '/admin/actions/passkey-options': { action: 'passkey-options', public: true, run: passkeyOptions },
  '/admin/actions/passkey-sign-in': { action: 'passkey-sign-in', public: true, run: passkeySignIn },
  '/admin/actions/passkey-register': { action: 'passkey-register', permission: 'self.manage', run: passkeyRegister },
  '/admin/actions/remove-passkey': { action: 'remove-passkey', permission: 'self.manage', run: removePasskey },
  '/admin/actions/rename-passkey': { action: 'rename-passkey', permission: 'self.manage', run: renamePasskey },
} as const;

/** The budget of passkey sign-ins a client may begin: 30 in 15 minutes, in Redis when configured, else in this process. */
export function createPasskeyOptionsLimit({ redis, logger }: { redis?: Redis | undefined; logger: Logger }): ClientLimit {
  const RateLimiterMemory = limiterClass('RateLimiterMemory');
  const RateLimiterRedis = limiterClass('RateLimiterRedis');
  const keyPrefix = 'site-forms:passkey-options';
  const memory = new RateLimiterMemory({ keyPrefix, points: PASSKEY_OPTIONS_PER_CLIENT, duration: PASSKEY_OPTIONS_WINDOW_SECONDS });
  const limiter = redis
    ? new RateLimiterRedis({
        storeClient: redis,
        keyPrefix,
        points: PASSKEY_OPTIONS_PER_CLIENT,
        duration: PASSKEY_OPTIONS_WINDOW_SECONDS,
        rejectIfRedisNotReady: true,
        insuranceLimiter: memory,
      })
    : memory;
  return {
    async consume(clientKey) {
      try {
        await limiter.consume(clientKey);
        return { ok: true };
      } catch (rejection) {
        if (rejection instanceof Error) {
          // The store failed: the options are let through (the sign-in itself is throttled), and it is told.
          logger.error('admin.passkey_limit_failed', { error: rejection.message });
          return { ok: true };
        }
        const { msBeforeNext } = rejection as { msBeforeNext: number };
        return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)) };
      }
    },
  };
}
