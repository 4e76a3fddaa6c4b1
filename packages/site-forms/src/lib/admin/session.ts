import { type PersonActor, personActor, type Role, type SessionStage } from '../access/permissions.ts';
import type { IncomingRequest } from '../http/form.ts';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A session ends after this long without a request. */
export const IDLE_TIMEOUT_MS = 30 * 60 * 1000;

/** A session ends this long after sign-in, however busy. */
export const ABSOLUTE_TIMEOUT_MS = 12 * 60 * 60 * 1000;

/** How a session was begun: a password, a passkey, or a sign-in link. */
export type SessionMethod = 'password' | 'passkey' | 'link';

/** Whose session a new one is, and how far it goes. */
export type SessionOwner = { userId: number; stage: SessionStage; method: SessionMethod };

/**
 * One stored session of a person: only the hash of its token is kept, so a copy of the database
 * signs nobody in.
 */
export type SessionRecord = { tokenHash: string; createdAt: Date; lastSeenAt: Date } & SessionOwner;

/** The person a session belongs to, as their row holds them at this request. */
export type SessionPerson = { id: number; name: string; email: string | null; role: Role; forms: readonly string[] | null };

/**
 * A stored session as `find` answers it: with its person read at this very request (so a role or
 * forms changed since sign-in apply now), and `legacy` for a row of the version before people
 * (`admin_sessions`), which is the first owner's.
 */
export type FoundSession = SessionRecord & { person: SessionPerson; legacy: boolean };

/** Where sessions are kept (the database, so that every instance sees them). */
export interface SessionStore {
  /** Stores a new session. */
  create(session: SessionRecord): Promise<void>;
  /** The session with this token hash and its person, or `undefined` (also when the person is gone). */
  find(tokenHash: string): Promise<FoundSession | undefined>;
  /** Records a request in the session. */
  touch(tokenHash: string, at: Date): Promise<void>;
  /** Ends one session; answers whether it was there to end. */
  delete(tokenHash: string): Promise<boolean>;
  /** Ends every session idle since `idleBefore` or begun before `createdBefore`; answers how many. */
  deleteExpired(idleBefore: Date, createdBefore: Date): Promise<number>;
}

/** Why a request has no session. */
export type NoSession = 'missing' | 'unknown' | 'idle' | 'expired';

/** A session just begun: its token for the cookie, and the CSRF token of its forms. */
export type NewSession = { token: string; tokenHash: string; createdAt: Date; csrfToken: string };

/** A request's session, when it has a live one, with the person it belongs to as they are now, and how it was begun. */
export type Session = NewSession & { actor: PersonActor; method?: SessionMethod };

/** Starting, resuming and ending the people's sessions. */
export interface Sessions {
  /** Starts a session of this person and answers its token, for the cookie. */
  start(owner: SessionOwner): Promise<NewSession>;
  /** The live session of this token, or why there is none; a live one counts as used now. */
  resume(token: string | undefined): Promise<{ ok: true; session: Session } | { ok: false; reason: NoSession }>;
  /**
   * Ends the session on the server, so the cookie is worthless even if it was copied; answers
   * whether it was still there (a removal or a reset on any instance may have ended it first).
   */
  end(token: string): Promise<boolean>;
  /** Deletes the sessions that have expired; answers how many. */
  sweep(): Promise<number>;
}

/**
 * The session rules over a store: a 256-bit random token, its SHA-256 kept; idle expiry
 * of 30 minutes, absolute of 12 hours.
 * Hint: `now` is injected so the tests can walk the clock past each expiry.
 */
export function createSessions(store: SessionStore, now: () => Date = () => new Date()): Sessions {
  const session = (token: string, createdAt: Date): NewSession => ({ token, tokenHash: hashToken(token), createdAt, csrfToken: csrfTokenFor(token) });
  return {
    async start(owner) {
      const token = randomBytes(32).toString('base64url');
      const at = now();
      await store.create({ tokenHash: hashToken(token), createdAt: at, lastSeenAt: at, ...owner });
      return session(token, at);
    },
    async resume(token) {
      if (!token || !TOKEN_FORMAT.test(token)) return { ok: false, reason: 'missing' };
      const record = await store.find(hashToken(token));
      if (!record) return { ok: false, reason: 'unknown' };
      const at = now();
      const reason = expiry(record, at);
      if (reason) {
        await store.delete(record.tokenHash);
        return { ok: false, reason };
      }
      await store.touch(record.tokenHash, at);
      const actor = personActor({ ...record.person, stage: record.stage });
      return { ok: true, session: { ...session(token, record.createdAt), actor, method: record.method } };
    },
    end: (token) => (TOKEN_FORMAT.test(token) ? store.delete(hashToken(token)) : Promise.resolve(false)),
    sweep() {
      const at = now().getTime();
      return store.deleteExpired(new Date(at - IDLE_TIMEOUT_MS), new Date(at - ABSOLUTE_TIMEOUT_MS));
    },
  };
}

/** 32 random bytes in base64url, as `start` makes them. */
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

function expiry(record: Pick<SessionRecord, 'createdAt' | 'lastSeenAt'>, at: Date): 'idle' | 'expired' | undefined {
  if (at.getTime() - record.createdAt.getTime() >= ABSOLUTE_TIMEOUT_MS) return 'expired';
  if (at.getTime() - record.lastSeenAt.getTime() >= IDLE_TIMEOUT_MS) return 'idle';
  return undefined;
}

/** The stored form of a token: its SHA-256 in hex (the token is random, so no salt is needed). */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * The CSRF token of a session: an HMAC of the purpose under the session's own token, so it
 * needs no storage, differs per session and cannot be made without the cookie.
 */
export function csrfTokenFor(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('admin-csrf').digest('base64url');
}

/** Whether a form's CSRF token belongs to this session, compared in constant time. */
export function csrfTokenMatches(session: Pick<NewSession, 'csrfToken'>, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const expected = Buffer.from(session.csrfToken);
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** The session cookie's name: with the `__Host-` prefix on https, which binds it to this host and path `/`. */
export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-admin_session' : 'admin_session';
}

/**
 * The `Set-Cookie` value that carries a session: `HttpOnly`, `SameSite=Strict`, `Path=/`,
 * and `Secure` on https; it lasts no longer than the session's absolute limit.
 */
export function sessionCookie(token: string, secure: boolean): string {
  return `${sessionCookieName(secure)}=${token}; Path=/; Max-Age=${ABSOLUTE_TIMEOUT_MS / 1000}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The `Set-Cookie` value that removes the session cookie from the browser. */
export function clearedSessionCookie(secure: boolean): string {
  return `${sessionCookieName(secure)}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The session token a request carries in its `Cookie` header, if any. */
export function readSessionToken(request: IncomingRequest, secure: boolean): string | undefined {
  const name = sessionCookieName(secure);
  for (const pair of (request.headers.get('cookie') ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Whether a state-changing request comes from the site's own pages: its `Origin` (or,
 * when a browser sent none, its `Referer`) must be the public origin exactly.
 * Hint: a request with neither is refused; every browser this admin supports sends `Origin` on a POST.
 */
export function comesFromOrigin(request: IncomingRequest, publicOrigin: string): boolean {
  const origin = request.headers.get('origin');
  if (origin !== null) return origin === publicOrigin;
  const referer = request.headers.get('referer');
  if (referer === null) return false;
  try {
    return new URL(referer).origin === publicOrigin;
  } catch {
    return false;
  }
}
