import { setTimeout as sleep } from 'node:timers/promises';
import { personActor } from '../../access/permissions.ts';
import type { Person } from '../../people/store.ts';
import { type PasswordHash, parsePasswordHash } from '../password.ts';
import { clearedSessionCookie, sessionCookie } from '../session.ts';
import { personKey } from '../throttle.ts';
import { type AdminOutcome, type PublicCall, record, type SessionCall } from './shared.ts';

// Signing in (the one public action) and out.

/** Where an enrolment session (ADMIN_REQUIRE_PASSKEY) is sent: the account page, to add a passkey. */
export const ENROLL_PAGE = '/admin/account?enroll=1';

/** What a sign-in is told when the password check's queue is full. */
export const BUSY_SIGN_IN = 'Many sign-ins are being checked right now. Please try again in a minute.';

/**
 * Checks an email and password behind the throttle; right, a new session of that person and its
 * cookie, the old one ended. An empty email is the first owner with ADMIN_PASSWORD_HASH (the
 * one-field form of the version before people, and every password manager that filled it); an
 * email is that person with their own password (the first owner's is still ADMIN_PASSWORD_HASH).
 * Hint: the answer to a failure depends only on what was typed: "wrong password" for an empty
 * email, "wrong email or password" otherwise, never which of the two was wrong.
 */
export async function signIn(call: PublicCall): Promise<AdminOutcome> {
  const { request, secure, deps, context, now, token: oldToken } = call;
  const { password } = call.fields;
  const email = typeof call.fields.email === 'string' ? call.fields.email.trim() : '';
  const { throttle, audit, sessions, people, wait = (ms) => sleep(ms) } = deps;
  const known = deps.devices?.known(request, secure) ?? false;
  // Counted by what was typed, whether the account exists or not.
  const target = personKey(email);
  const gate = await throttle.attempt(context.clientKey, { key: target, known });
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
  const person = email === '' ? await people.envOwner() : email.length <= 254 ? await people.findByEmail(email) : undefined;
  const typed = typeof password === 'string' ? password : '';
  // Exactly one verification whatever was typed: against the person's hash, ADMIN_PASSWORD_HASH,
  // or the check's dummy (nobody, no password of their own, an empty password).
  const checked = await deps.checkPassword(typed, { known, hash: person && typed !== '' ? passwordOf(person) : 'none' });
  if (checked === 'busy') {
    // A flood from many addresses fills the queue: refused at once rather than after minutes of waiting.
    return { kind: 'refused', status: 429, message: BUSY_SIGN_IN, headers: { 'retry-after': '60' } };
  }
  if (!checked || !person || typed === '') {
    // Counted like the refusals: a guess from 200 addresses must not write a row per guess for a year.
    await audit.recordRepeated({ at: now().toISOString(), action: 'sign-in-failed', detail: 'wrong password', client: context.clientHash });
    return { kind: 'redirect', location: email === '' ? '/admin?failed=1' : '/admin?failed=email' };
  }
  // ADMIN_REQUIRE_PASSKEY: a password only leads to registering a passkey (decision 0291).
  if (deps.requirePasskey && ((await deps.passkeys?.count(person.id)) ?? 0) > 0) {
    await audit.recordRepeated({ at: now().toISOString(), action: 'sign-in-failed', detail: 'password instead of a passkey', client: context.clientHash });
    return { kind: 'redirect', location: '/admin?failed=passkey' };
  }
  const stage = deps.requirePasskey ? 'enroll' : 'full';
  await throttle.succeeded(context.clientKey, target);
  // A new token at every sign-in: a token planted before it (session fixation) is worthless.
  if (oldToken) await sessions.end(oldToken);
  const session = await sessions.start({ userId: person.id, stage, method: 'password' });
  await people.signedIn(person.id, now());
  await record(call, 'sign-in', stage === 'enroll' ? 'to add a passkey' : '', personActor({ ...person, stage }));
  return { kind: 'redirect', location: stage === 'enroll' ? ENROLL_PAGE : '/admin', cookie: sessionCookie(session.token, secure) };
}

/**
 * The hash a person's password is checked against: their own, `env` for the first owner's
 * (ADMIN_PASSWORD_HASH, which the check holds; none while it is unset), or `none`
 * (a person who signs in with a passkey only, or a stored hash this server cannot read).
 */
function passwordOf(person: Pick<Person, 'origin' | 'passwordHash'>): PasswordHash | 'env' | 'none' {
  if (person.passwordHash === null) return person.origin === 'env' ? 'env' : 'none';
  const parsed = parsePasswordHash(person.passwordHash);
  return parsed.ok ? parsed.hash : 'none';
}

/** Ends the session and clears its cookie. */
export async function signOut(call: SessionCall): Promise<AdminOutcome> {
  await call.deps.sessions.end(call.session.token);
  await record(call, 'sign-out', '');
  return { kind: 'redirect', location: '/admin?ended=signed-out', cookie: clearedSessionCookie(call.secure) };
}
