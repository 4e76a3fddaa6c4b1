import { describe, expect, test } from 'vitest';
import {
  clearedSessionCookie,
  comesFromOrigin,
  createSessions,
  csrfTokenFor,
  csrfTokenMatches,
  hashToken,
  readSessionToken,
  type SessionOwner,
  type SessionRecord,
  type SessionStore,
  sessionCookie,
} from '../../../packages/site-forms/src/lib/admin/session.ts';

/** The person every session of these tests belongs to: the first owner. */
const OWNER: SessionOwner = { userId: 1, stage: 'full', method: 'password' };

/** A session store in a Map, for the rules; the database stores have their own behaviour suite (session-people.test.ts). */
function mapStore(): SessionStore & { records: Map<string, SessionRecord> } {
  const records = new Map<string, SessionRecord>();
  return {
    records,
    create: async (s) => void records.set(s.tokenHash, { ...s }),
    find: async (h) =>
      records.has(h)
        ? { ...records.get(h)!, person: { id: records.get(h)!.userId, name: 'Owner', email: null, role: 'owner', forms: null }, legacy: false }
        : undefined,
    touch: async (h, at) => {
      records.get(h)!.lastSeenAt = at;
    },
    delete: async (h) => records.delete(h),
    async deleteExpired(idleBefore, createdBefore) {
      let n = 0;
      for (const [h, s] of records) {
        if (s.lastSeenAt <= idleBefore || s.createdAt <= createdBefore) {
          records.delete(h);
          n++;
        }
      }
      return n;
    },
  };
}

const MINUTE = 60_000;

function clock(start = Date.UTC(2026, 10, 22, 8, 0, 0)) {
  let t = start;
  return {
    now: () => new Date(t),
    advance: (ms: number) => {
      t += ms;
    },
  };
}

describe('a session', () => {
  test('keeps only the SHA-256 of its 43-character token', async () => {
    const store = mapStore();
    const { token, tokenHash } = await createSessions(store).start(OWNER);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect([...store.records.keys()]).toEqual([tokenHash]);
    expect(tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify([...store.records.values()])).not.toContain(token);
  });

  test('two sign-ins get different tokens', async () => {
    const sessions = createSessions(mapStore());
    const [a, b] = await Promise.all([sessions.start(OWNER), sessions.start(OWNER)]);
    expect(a.token).not.toBe(b.token);
  });

  test.each([
    ['29 min 59 s after the last request', 30 * MINUTE - 1000, { ok: true }],
    ['30 min after the last request', 30 * MINUTE, { ok: false, reason: 'idle' }],
  ])('is live or idle %s', async (_, wait, expected) => {
    const c = clock();
    const sessions = createSessions(mapStore(), c.now);
    const { token } = await sessions.start(OWNER);
    c.advance(wait);
    await expect(sessions.resume(token)).resolves.toMatchObject(expected);
  });

  test('stays live while used, up to 12 hours after sign-in and not a second more', async () => {
    const c = clock();
    const sessions = createSessions(mapStore(), c.now);
    const { token } = await sessions.start(OWNER);
    for (let i = 0; i < 24; i++) {
      c.advance(29 * MINUTE);
      await expect(sessions.resume(token)).resolves.toMatchObject({ ok: true });
    }
    // 24 × 29 min = 11 h 36 min; 24 more minutes reach 12 h.
    c.advance(24 * MINUTE - 1000);
    await expect(sessions.resume(token)).resolves.toMatchObject({ ok: true });
    c.advance(1000);
    await expect(sessions.resume(token)).resolves.toEqual({ ok: false, reason: 'expired' });
  });

  test('an expired session is deleted from the store', async () => {
    const c = clock();
    const store = mapStore();
    const sessions = createSessions(store, c.now);
    const { token } = await sessions.start(OWNER);
    c.advance(31 * MINUTE);
    await sessions.resume(token);
    expect(store.records.size).toBe(0);
    await expect(sessions.resume(token)).resolves.toEqual({ ok: false, reason: 'unknown' });
  });

  test('signing out ends it on the server', async () => {
    const sessions = createSessions(mapStore());
    const { token } = await sessions.start(OWNER);
    await sessions.end(token);
    await expect(sessions.resume(token)).resolves.toEqual({ ok: false, reason: 'unknown' });
  });

  test('ending a malformed token does nothing', async () => {
    const store = mapStore();
    const sessions = createSessions(store);
    await sessions.start(OWNER);
    await sessions.end('not a token');
    expect(store.records.size).toBe(1);
  });

  test.each([
    ['no cookie', undefined, 'missing'],
    ['an empty cookie', '', 'missing'],
    ['a token of the wrong shape', 'abc', 'missing'],
    ['a token with a character outside base64url', `${'a'.repeat(42)}=`, 'missing'],
    ['a token one character too long', 'a'.repeat(44), 'missing'],
    ['a well-formed token after a blank', ` ${'a'.repeat(43)}`, 'missing'],
    ['a well-formed token nobody was given', 'a'.repeat(43), 'unknown'],
  ])('refuses %s', async (_, token, reason) => {
    await expect(createSessions(mapStore()).resume(token)).resolves.toEqual({ ok: false, reason });
  });

  test('a resumed session carries its CSRF token', async () => {
    const sessions = createSessions(mapStore());
    const { token, csrfToken } = await sessions.start(OWNER);
    const resumed = await sessions.resume(token);
    expect(resumed.ok && resumed.session.csrfToken).toBe(csrfToken);
  });

  test('sweep deletes the idle and the too old, and keeps the live', async () => {
    const c = clock();
    const store = mapStore();
    const at = (minutesAgo: number) => new Date(c.now().getTime() - minutesAgo * MINUTE);
    const add = (tokenHash: string, createdMinutesAgo: number, seenMinutesAgo: number) =>
      store.create({ tokenHash, createdAt: at(createdMinutesAgo), lastSeenAt: at(seenMinutesAgo), ...OWNER });
    await add('twelve hours old, used a minute ago', 12 * 60, 1);
    await add('eleven hours 59 old, used a minute ago', 12 * 60 - 1, 1);
    await add('idle for 30 minutes', 60, 30);
    await add('idle for 29 minutes', 60, 29);
    await expect(createSessions(store, c.now).sweep()).resolves.toBe(2);
    expect([...store.records.keys()]).toEqual(['eleven hours 59 old, used a minute ago', 'idle for 29 minutes']);
  });
});

describe('the CSRF token', () => {
  test('is the HMAC-SHA256 of "admin-csrf" under the session token', () => {
    // openssl: printf admin-csrf | openssl dgst -sha256 -hmac 'the session token' -binary | basenc --base64url (without the padding)
    expect(csrfTokenFor('the session token')).toBe('JpTOCOkh_-ZPpy4ILLdj-Fe0tlLDl7ojiOwSSkPYKHw');
  });

  test.each([
    ['its own token', true, (t: string) => t],
    ['another session token', false, () => csrfTokenFor('another session')],
    ['a token one character short', false, (t: string) => t.slice(0, -1)],
    ['an empty field', false, () => ''],
    ['no field at all', false, () => undefined],
    ['a file instead of text', false, () => new File(['x'], 'x')],
  ])('a form with %s is accepted: %s', async (_, expected, given) => {
    const session = await createSessions(mapStore()).start(OWNER);
    expect(csrfTokenMatches(session, given(session.csrfToken))).toBe(expected);
  });
});

describe('the session cookie', () => {
  test('on https: __Host- prefix, Secure, HttpOnly, SameSite=Strict, Path=/, 12 hours', () => {
    expect(sessionCookie('tok', true)).toBe('__Host-admin_session=tok; Path=/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure');
  });

  test('on plain http (development): no prefix, no Secure', () => {
    expect(sessionCookie('tok', false)).toBe('admin_session=tok; Path=/; Max-Age=43200; HttpOnly; SameSite=Strict');
  });

  test.each([
    [true, '__Host-admin_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure'],
    [false, 'admin_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict'],
  ])('is cleared on sign-out (secure: %s)', (secure, expected) => {
    expect(clearedSessionCookie(secure)).toBe(expected);
  });

  const withCookie = (cookie?: string) => new Request('https://site.test/admin', cookie === undefined ? {} : { headers: { cookie } });
  test.each([
    ['the __Host- cookie on https', '__Host-admin_session=abc', true, 'abc'],
    ['it among others', 'theme=dark; __Host-admin_session=abc ; x=y', true, 'abc'],
    ['the plain cookie on https (a subdomain could have set it)', 'admin_session=abc', true, undefined],
    ['the plain cookie on http', 'admin_session=abc', false, 'abc'],
    ['a cookie whose name only ends the same', 'xadmin_session=abc', false, undefined],
    ['no cookie header', undefined, false, undefined],
  ])('reads %s', (_, cookie, secure, expected) => {
    expect(readSessionToken(withCookie(cookie), secure)).toBe(expected);
  });
});

describe('where a state-changing request comes from', () => {
  const post = (headers: Record<string, string>) => new Request('https://site.test/admin/messages/1/delete', { method: 'POST', headers });
  test.each([
    ['its own origin', { origin: 'https://site.test' }, true],
    ['another site', { origin: 'https://evil.test' }, false],
    ['the same host over http', { origin: 'http://site.test' }, false],
    ['another port', { origin: 'https://site.test:8443' }, false],
    ['an opaque origin (sandboxed frame, file)', { origin: 'null' }, false],
    ['no Origin but a Referer of its own', { referer: 'https://site.test/admin/messages/1' }, true],
    ['no Origin and a foreign Referer', { referer: 'https://evil.test/page' }, false],
    ['no Origin and a Referer that is not a URL', { referer: 'nonsense' }, false],
    ['an Origin of its own beats a foreign Referer', { origin: 'https://site.test', referer: 'https://evil.test/' }, true],
    ['a foreign Origin beats a Referer of its own', { origin: 'https://evil.test', referer: 'https://site.test/' }, false],
    ['neither header', {}, false],
  ])('%s: %s', (_, headers, expected) => {
    expect(comesFromOrigin(post(headers), 'https://site.test')).toBe(expected);
  });
});

test('hashToken is the hex SHA-256 of the token', () => {
  // printf abc | sha256sum
  expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});
