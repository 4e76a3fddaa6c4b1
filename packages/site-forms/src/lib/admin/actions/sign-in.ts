import { setTimeout as sleep } from 'node:timers/promises';
import { clearedSessionCookie, sessionCookie } from '../session.ts';
import { type AdminOutcome, type PublicCall, record, type SessionCall } from './shared.ts';

// Signing in (the one public action) and out.

/** What a sign-in is told when the password check's queue is full. */
export const BUSY_SIGN_IN = 'Many sign-ins are being checked right now. Please try again in a minute.';

/** Checks the password behind the throttle; right, a new session and its cookie, the old one ended. */
export async function signIn(call: PublicCall): Promise<AdminOutcome> {
  const { request, secure, deps, context, now, token: oldToken } = call;
  const { password } = call.fields;
  const { throttle, audit, sessions, wait = (ms) => sleep(ms) } = deps;
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
  await record(call, 'sign-in', '');
  return { kind: 'redirect', location: '/admin', cookie: sessionCookie(session.token, secure) };
}

/** Ends the session and clears its cookie. */
export async function signOut(call: SessionCall): Promise<AdminOutcome> {
  await call.deps.sessions.end(call.session.token);
  await record(call, 'sign-out', '');
  return { kind: 'redirect', location: '/admin?ended=signed-out', cookie: clearedSessionCookie(call.secure) };
}
