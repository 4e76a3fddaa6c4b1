import { beforeAll, describe, expect, onTestFinished, test, vi } from 'vitest';
import { exportChunks } from '../../../packages/site-forms/src/lib/contact/export.ts';
import type { Submission } from '../../../packages/site-forms/src/lib/contact/outbox.ts';
import { type AdminDeps, handleAdminPost } from '../../../packages/site-forms/src/lib/admin/actions/index.ts';

/** What a person reads when a post did not come from the admin's pages. */
const FORBIDDEN = 'This action was refused: it did not come from this site’s admin pages. Reload the page and try again.';
import type { AuditEntry } from '../../../packages/site-forms/src/lib/admin/audit.ts';
import { createPasswordCheck, hashPassword, type PasswordHash, parsePasswordHash } from '../../../packages/site-forms/src/lib/admin/password.ts';
import type { AdminQueries } from '../../../packages/site-forms/src/lib/admin/queries.ts';
import { createSessions, type SessionRecord, type SessionStore } from '../../../packages/site-forms/src/lib/admin/session.ts';
import { createSignInThrottle } from '../../../packages/site-forms/src/lib/admin/throttle.ts';
import type { Person } from '../../../packages/site-forms/src/lib/people/store.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import type { FormScope } from '../../../packages/site-forms/src/lib/access/permissions.ts';

const SITE = 'https://site.test';
const PASSWORD = 'correct horse battery';
/** Ada's own password (an editor added by email); the first owner's is PASSWORD, ADMIN_PASSWORD_HASH. */
const ADA_PASSWORD = 'analytical engine notes';
let passwordHash: PasswordHash;
let adaHash: string;

beforeAll(async () => {
  const parsed = parsePasswordHash(await hashPassword(PASSWORD));
  if (!parsed.ok) throw new Error(parsed.problem);
  passwordHash = parsed.hash;
  adaHash = await hashPassword(ADA_PASSWORD);
});

/**
 * The people of the tests: the first owner (from ADMIN_PASSWORD_HASH, with CONTACT_TO as email),
 * Ada (an editor with her own password) and Pat (a person with a passkey only, no password).
 */
function somePeople(): Map<number, Person> {
  const person = (id: number, fields: Partial<Person>): Person => ({
    id,
    email: null,
    name: '',
    role: 'owner',
    forms: null,
    passwordHash: null,
    origin: 'cli',
    userHandle: `handle-${id}`,
    mailForms: null,
    digest: false,
    overviewVisitedAt: null,
    lastSignInAt: null,
    createdAt: new Date(0),
    updatedAt: new Date(0),
    ...fields,
  });
  return new Map([
    [1, person(1, { email: 'owner@site.test', name: 'Owner', origin: 'env' })],
    [2, person(2, { email: 'ada@example.org', name: 'Ada', role: 'editor', forms: ['quote'], passwordHash: adaHash })],
    [3, person(3, { email: 'pat@example.org', name: 'Pat', role: 'reader' })],
  ]);
}

/** The admin's dependencies in memory, recording what was changed. */
/** The store's cursor over one message. */
async function* oneBatch(): AsyncGenerator<Submission[]> {
  yield [
    {
      id: 1,
      createdAt: '2026-11-01T10:00:00.000Z',
      name: '=HYPERLINK("http://evil.test")',
      email: 'a@b.co',
      message: 'Hi',
      status: 'sent',
      attempts: 1,
      nextAttemptAt: null,
      lastError: null,
      sentAt: null,
      spamReasons: [],
      form: 'contact',
      fields: {},
    },
  ];
}

/** A download's body, read to the end. */
async function read(body: string | AsyncIterable<string>): Promise<string> {
  if (typeof body === 'string') return body;
  let text = '';
  for await (const chunk of body) text += chunk;
  return text;
}

function world() {
  const records = new Map<string, SessionRecord>();
  const people = somePeople();
  const signIns: string[] = [];
  const store: SessionStore = {
    create: async (s) => {
      records.set(s.tokenHash, { ...s });
    },
    find: async (h) => {
      const record = records.get(h);
      const person = record && people.get(record.userId);
      return record && person && { ...record, person, legacy: false };
    },
    touch: async (h, at) => {
      records.get(h)!.lastSeenAt = at;
    },
    delete: async (h) => records.delete(h),
    deleteExpired: async () => 0,
  };
  const audit: AuditEntry[] = [];
  const changes: string[] = [];
  const messages = new Set([1, 2, 3, 4]);
  /** Each message's form: #2 came from the quote form, the others from the contact form. */
  const formOf = new Map([
    [1, 'contact'],
    [2, 'quote'],
    [3, 'contact'],
    [4, 'contact'],
  ]);
  const subscribers = new Set(['ada@example.org', 'bea@example.org']);
  const waits: number[] = [];
  /** The scopes the exports were asked for. */
  const exported: (FormScope | undefined)[] = [];
  const counted: (FormScope | undefined)[] = [];
  const replayable = new Set([7]);
  const deps: AdminDeps = {
    // #7 has ended (sent again from the start once), #8 waits for its next try (sent now).
    webhooks: {
      replay: async (id) =>
        replayable.delete(id)
          ? { kind: 'replayed' }
          : id === 8
            ? { kind: 'due', was: '2026-06-01T14:00:00.000Z' }
            : { kind: 'sending', until: '2026-06-01T12:00:30.000Z' },
    },
    signups: { retry: async (id) => id === 5 },
    checkPassword: createPasswordCheck(passwordHash),
    people: {
      envOwner: async () => [...people.values()].find((person) => person.origin === 'env'),
      findByEmail: async (email) => [...people.values()].find((person) => person.email === email.trim().toLowerCase()),
      signedIn: async (id, at) => void signIns.push(`#${id} at ${at.toISOString()}`),
    },
    sessions: createSessions(store),
    throttle: createSignInThrottle({ logger: silentLogger }),
    audit: {
      record: async (e) => void audit.push(e),
      // Counted on one row by the real log (tests/lib/admin/store.test.ts); marked here so a test can tell.
      recordRepeated: async (e) => void audit.push({ ...e, repeats: -1 }),
      deleteBefore: async () => 0,
      list: async () => ({ entries: audit, total: audit.length }),
    },
    queries: {
      formOf: async (id: number) => (messages.has(id) ? formOf.get(id) : undefined),
      deleteSubscriber: async (email: string) => {
        changes.push(`delete ${email}`);
        // Bea's erasure meets a Redis that cannot be reached: the store's part is done, the count is not.
        return { found: subscribers.delete(email), ...(email === 'bea@example.org' && { redisUnreachable: 'connect ECONNREFUSED 127.0.0.1:6379' }) };
      },
    } as unknown as AdminQueries,
    commands: {
      retry: async (id) => {
        changes.push(`retry #${id}`);
        return id === 1 ? { found: true, from: 'failed', changed: true, to: 'pending' } : { found: true, from: 'pending', changed: false };
      },
      markSpam: async (id) => {
        changes.push(`spam #${id}`);
        // #3 is being sent: it is held when the send ends.
        // #1 was sent already: the notice says so rather than "it will not be sent".
        const from = id === 3 ? 'sending' : id === 1 ? 'sent' : 'pending';
        return { found: true, from, changed: true, to: 'spam', ...(id === 3 && { deferred: true as const }) };
      },
      release: async (id) => {
        changes.push(`release #${id}`);
        // #1 was sent before it was marked: it goes back to sent, not to the queue.
        return { found: true, from: 'spam', changed: true, to: id === 1 ? 'sent' : 'pending' };
      },
      remove: async (id) => {
        changes.push(`delete #${id}`);
        if (id === 3) return { found: true, from: 'sending', changed: true, to: 'deleted', deferred: true };
        return messages.delete(id) ? { found: true, from: 'sent', changed: true, to: 'deleted' } : { found: false };
      },
    },
    exporting: {},
    exports: {
      messages: (format, { scope }) => {
        exported.push(scope);
        return exportChunks({ batches: oneBatch }, format);
      },
      countMessages: async (scope) => {
        counted.push(scope);
        return 1;
      },
      subscribers: async () => [{ email: 'ada@example.org', created: '2026-11-01T10:00:00.000Z' }],
    },
    now: () => new Date('2026-11-22T10:00:00.000Z'),
    wait: async (ms) => void waits.push(ms),
  };
  return { deps, audit, changes, records, waits, people, signIns, exported, counted };
}

const context = { publicOrigin: SITE, clientKey: '203.0.113.9', clientHash: 'c0ffee' };

function post(path: string, fields: Record<string, string>, headers: Record<string, string> = { origin: SITE }): Request {
  return new Request(`${SITE}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields),
  });
}

async function signedIn(deps: AdminDeps) {
  const outcome = await handleAdminPost('sign-in', post('/admin/actions/sign-in', { password: PASSWORD }), deps, context);
  if (outcome.kind !== 'redirect' || !outcome.cookie) throw new Error('sign-in failed');
  const token = /^__Host-admin_session=([^;]+);/.exec(outcome.cookie)![1]!;
  const resumed = await deps.sessions.resume(token);
  if (!resumed.ok) throw new Error('no session');
  return { cookie: `__Host-admin_session=${token}`, csrf: resumed.session.csrfToken };
}

describe('signing in', () => {
  test('the right password starts a session: a __Host- cookie and the overview', async () => {
    const { deps, audit, records } = world();
    const outcome = await handleAdminPost('sign-in', post('/admin/actions/sign-in', { password: PASSWORD }), deps, context);
    expect(outcome).toEqual({
      kind: 'redirect',
      location: '/admin',
      cookie: expect.stringMatching(/^__Host-admin_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure$/),
    });
    expect(records.size).toBe(1);
    // The entry names who signed in, as every other entry of a person does.
    expect(audit).toEqual([
      { at: '2026-11-22T10:00:00.000Z', action: 'sign-in', detail: '', client: 'c0ffee', actor: 'person:1', actorName: 'Owner <owner@site.test>' },
    ]);
  });

  test('on plain http the cookie has no prefix and no Secure', async () => {
    const { deps } = world();
    const outcome = await handleAdminPost('sign-in', post('/admin/actions/sign-in', { password: PASSWORD }, { origin: 'http://localhost:4321' }), deps, {
      ...context,
      publicOrigin: 'http://localhost:4321',
    });
    expect(outcome.kind === 'redirect' && outcome.cookie).toMatch(/^admin_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/);
  });

  test.each([
    ['a wrong password', { password: 'correct horse batterY' }],
    ['an empty password', { password: '' }],
    ['no password field', {}],
  ])('%s goes back to the sign-in page saying so, and is logged', async (_, fields) => {
    const { deps, audit, records } = world();
    const outcome = await handleAdminPost('sign-in', post('/admin/actions/sign-in', fields), deps, context);
    expect(outcome).toEqual({ kind: 'redirect', location: '/admin?failed=1' });
    expect(records.size).toBe(0);
    // Counted per client and quarter-hour, as refusals are (the real log: tests/lib/admin/owner-inbox.test.ts).
    expect(audit).toEqual([{ at: '2026-11-22T10:00:00.000Z', action: 'sign-in-failed', detail: 'wrong password', client: 'c0ffee', repeats: -1 }]);
  });

  test('a full password-check queue: 429 at once for an unknown browser, and nothing is audited', async () => {
    const w = world();
    const known: boolean[] = [];
    w.deps.checkPassword = async (_, options) => {
      known.push(options?.known ?? false);
      return options?.known ? true : 'busy';
    };
    w.deps.devices = { known: (request) => (request.headers.get('cookie') ?? '').includes('admin_device=') };
    const outcome = await handleAdminPost('sign-in', post('/admin/actions/sign-in', { password: PASSWORD }), w.deps, context);
    expect(outcome).toEqual({
      kind: 'refused',
      status: 429,
      message: 'Many sign-ins are being checked right now. Please try again in a minute.',
      headers: { 'retry-after': '60' },
    });
    expect(w.audit).toEqual([]);
    // The browser that signed in before keeps its place.
    const owner = await handleAdminPost(
      'sign-in',
      post('/admin/actions/sign-in', { password: PASSWORD }, { origin: SITE, cookie: '__Host-admin_device=x' }),
      w.deps,
      context,
    );
    expect(owner).toMatchObject({ kind: 'redirect', location: '/admin' });
    expect(known).toEqual([false, true]);
  });

  test('the eleventh attempt in 15 minutes is 429 with Retry-After, even with the right password', async () => {
    // Date stands still, so that the seconds the password checks take do not shorten Retry-After.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2026, 10, 22, 10) });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const { deps, waits, audit } = world();
    for (let i = 0; i < 10; i++) await handleAdminPost('sign-in', post('/admin/actions/sign-in', { password: 'wrong wrong wrong' }), deps, context);
    expect(waits).toEqual([1000, 2000, 4000, 8000, 8000, 8000, 8000]);
    const outcome = await handleAdminPost('sign-in', post('/admin/actions/sign-in', { password: PASSWORD }), deps, context);
    expect(outcome).toEqual({
      kind: 'refused',
      status: 429,
      message: 'Too many attempts to sign in. Please try again in 15 minutes.',
      headers: { 'retry-after': '900' },
    });
    // Refusals are counted per client and quarter-hour, not written one row each.
    expect(audit.at(-1)).toEqual({
      at: '2026-11-22T10:00:00.000Z',
      action: 'sign-in-failed',
      detail: 'refused: too many attempts',
      client: 'c0ffee',
      repeats: -1,
    });
  });

  test('a new sign-in ends the session the browser had, so a planted token is worthless', async () => {
    const { deps, records } = world();
    const first = await signedIn(deps);
    const outcome = await handleAdminPost(
      'sign-in',
      post('/admin/actions/sign-in', { password: PASSWORD }, { origin: SITE, cookie: first.cookie }),
      deps,
      context,
    );
    expect(outcome.kind).toBe('redirect');
    expect(records.size).toBe(1);
    await expect(deps.sessions.resume(first.cookie.split('=')[1])).resolves.toEqual({ ok: false, reason: 'unknown' });
  });
});

describe('signing in by email (issue 42): the first owner with an empty one, a person with their own password', () => {
  const signIn = (deps: AdminDeps, fields: Record<string, string>) => handleAdminPost('sign-in', post('/admin/actions/sign-in', fields), deps, context);
  const actorOf = async (deps: AdminDeps, outcome: Awaited<ReturnType<typeof signIn>>) => {
    const token = outcome.kind === 'redirect' && outcome.cookie ? /^__Host-admin_session=([^;]+);/.exec(outcome.cookie)![1] : undefined;
    const resumed = await deps.sessions.resume(token);
    return resumed.ok ? resumed.session.actor : resumed.reason;
  };

  test.each([
    ['no email field (the form before people)', { password: PASSWORD }],
    ['an empty email', { email: '', password: PASSWORD }],
    ['an email of blanks', { email: '  ', password: PASSWORD }],
    ['the first owner’s own email (CONTACT_TO), in another case', { email: ' Owner@Site.test ', password: PASSWORD }],
  ])('%s with ADMIN_PASSWORD_HASH’s password: the first owner', async (_, fields) => {
    const { deps, signIns } = world();
    const outcome = await signIn(deps, fields);
    expect(outcome).toMatchObject({ kind: 'redirect', location: '/admin' });
    await expect(actorOf(deps, outcome)).resolves.toMatchObject({ kind: 'person', id: 1, role: 'owner', scope: { all: true }, stage: 'full' });
    expect(signIns).toEqual(['#1 at 2026-11-22T10:00:00.000Z']);
  });

  test('a person’s email with their own password: their session, with their role and forms', async () => {
    const { deps, audit, records } = world();
    const outcome = await signIn(deps, { email: 'ADA@example.org', password: ADA_PASSWORD });
    expect(outcome).toMatchObject({ kind: 'redirect', location: '/admin' });
    await expect(actorOf(deps, outcome)).resolves.toEqual({
      kind: 'person',
      id: 2,
      name: 'Ada',
      email: 'ada@example.org',
      stage: 'full',
      role: 'editor',
      scope: { all: false, forms: ['quote'] },
    });
    expect([...records.values()].map(({ userId, stage, method }) => ({ userId, stage, method }))).toEqual([{ userId: 2, stage: 'full', method: 'password' }]);
    expect(audit.map((entry) => entry.action)).toEqual(['sign-in']);
  });

  test.each([
    ['a person’s email with the first owner’s password', { email: 'ada@example.org', password: PASSWORD }],
    ['an email nobody has', { email: 'nobody@example.org', password: ADA_PASSWORD }],
    ['the email of a person without a password (passkey only)', { email: 'pat@example.org', password: PASSWORD }],
    ['a person’s email and no password', { email: 'ada@example.org', password: '' }],
  ])('%s: "wrong email or password", whichever was wrong, no session', async (_, fields) => {
    const { deps, records, signIns } = world();
    await expect(signIn(deps, fields)).resolves.toEqual({ kind: 'redirect', location: '/admin?failed=email' });
    expect(records.size).toBe(0);
    expect(signIns).toEqual([]);
  });

  test('an empty email once the first owner was removed: wrong, even with ADMIN_PASSWORD_HASH’s password', async () => {
    const { deps, people, records } = world();
    people.delete(1);
    await expect(signIn(deps, { password: PASSWORD })).resolves.toEqual({ kind: 'redirect', location: '/admin?failed=1' });
    expect(records.size).toBe(0);
  });

  test('a removed person’s session ends at their next post', async () => {
    const { deps, people } = world();
    const outcome = await signIn(deps, { email: 'ada@example.org', password: ADA_PASSWORD });
    const cookie = outcome.kind === 'redirect' ? outcome.cookie!.split(';')[0]! : '';
    people.delete(2);
    await expect(handleAdminPost('sign-out', post('/admin/actions/sign-out', { csrf: 'x' }, { origin: SITE, cookie }), deps, context)).resolves.toEqual({
      kind: 'redirect',
      location: '/admin?ended=expired',
    });
  });
});

describe('every admin post is refused from another origin, before anything happens', () => {
  test.each([
    ['sign-in', '/admin/actions/sign-in'],
    ['sign-out', '/admin/actions/sign-out'],
    ['retry', '/admin/actions/retry'],
    ['mark-spam', '/admin/actions/spam'],
    ['release', '/admin/actions/release'],
    ['delete-message', '/admin/actions/delete'],
    ['delete-subscriber', '/admin/actions/delete-subscriber'],
    ['export', '/admin/actions/export'],
  ] as const)('%s', async (action, path) => {
    const { deps, audit, changes, records } = world();
    const { cookie, csrf } = await signedIn(deps);
    audit.length = 0;
    const fields = { password: PASSWORD, csrf, id: '1', email: 'ada@example.org', what: 'messages', format: 'csv' };
    const refusedHeaders: Record<string, string>[] = [{ origin: 'https://evil.test', cookie }, { cookie }, { origin: 'null', cookie }];
    for (const headers of refusedHeaders) {
      await expect(handleAdminPost(action, post(path, fields, headers), deps, context)).resolves.toEqual({
        kind: 'refused',
        status: 403,
        message: FORBIDDEN,
      });
    }
    expect({ audit, changes, sessions: records.size }).toEqual({ audit: [], changes: [], sessions: 1 });
  });
});

describe('with a session but the wrong CSRF token', () => {
  test.each([
    ['no token', undefined],
    ['an empty token', ''],
    ['a token of another session', 'JpTOCOkh_-ZPpy4ILLdj-Fe0tlLDl7ojiOwSSkPYKHw'],
  ])('%s: 403 and nothing changed', async (_, csrf) => {
    const { deps, audit, changes } = world();
    const { cookie } = await signedIn(deps);
    audit.length = 0;
    const fields: Record<string, string> = { id: '1' };
    if (csrf !== undefined) fields.csrf = csrf;
    await expect(handleAdminPost('delete-message', post('/admin/actions/delete', fields, { origin: SITE, cookie }), deps, context)).resolves.toEqual({
      kind: 'refused',
      status: 403,
      message: FORBIDDEN,
    });
    expect({ audit, changes }).toEqual({ audit: [], changes: [] });
  });
});

describe('without a live session', () => {
  test.each([
    ['no cookie', {}, '/admin?ended=none'],
    ['a cookie nobody was given', { cookie: `__Host-admin_session=${'a'.repeat(43)}` }, '/admin?ended=expired'],
  ])('%s: back to the sign-in page, nothing changed', async (_, headers, location) => {
    const { deps, audit, changes } = world();
    const outcome = await handleAdminPost('delete-message', post('/admin/actions/delete', { id: '1', csrf: 'x' }, { origin: SITE, ...headers }), deps, context);
    expect(outcome).toEqual({ kind: 'redirect', location });
    expect({ audit, changes }).toEqual({ audit: [], changes: [] });
  });

  test('a signed-out session changes nothing', async () => {
    const { deps, audit, changes } = world();
    const { cookie, csrf } = await signedIn(deps);
    await handleAdminPost('sign-out', post('/admin/actions/sign-out', { csrf }, { origin: SITE, cookie }), deps, context);
    const outcome = await handleAdminPost('delete-message', post('/admin/actions/delete', { id: '1', csrf }, { origin: SITE, cookie }), deps, context);
    expect(outcome).toEqual({ kind: 'redirect', location: '/admin?ended=expired' });
    expect(changes).toEqual([]);
    expect(audit.map((e) => e.action)).toEqual(['sign-in', 'sign-out']);
  });
});

describe('the actions, signed in', () => {
  async function run(path: string, action: Parameters<typeof handleAdminPost>[0], fields: Record<string, string>) {
    const w = world();
    const { cookie, csrf } = await signedIn(w.deps);
    w.audit.length = 0;
    const outcome = await handleAdminPost(action, post(path, { csrf, ...fields }, { origin: SITE, cookie }), w.deps, context);
    return { outcome, ...w };
  }

  test('sign out ends the session on the server and clears the cookie', async () => {
    const { outcome, records, audit } = await run('/admin/actions/sign-out', 'sign-out', {});
    expect(outcome).toEqual({
      kind: 'redirect',
      location: '/admin?ended=signed-out',
      cookie: '__Host-admin_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure',
    });
    expect(records.size).toBe(0);
    expect(audit.map((e) => e.action)).toEqual(['sign-out']);
  });

  test.each([
    ['retry', '/admin/actions/retry', '1', 'retry #1', '/admin/messages/1?done=retry', ['retry']],
    ['retry of a message that is not failed', '/admin/actions/retry', '2', 'retry #2', '/admin/messages/2?done=unchanged', []],
    ['mark-spam', '/admin/actions/spam', '2', 'spam #2', '/admin/messages/2?done=mark-spam', ['mark-spam']],
    ['mark-spam of a message already sent', '/admin/actions/spam', '1', 'spam #1', '/admin/messages/1?done=mark-spam-sent', ['mark-spam']],
    ['release', '/admin/actions/release', '3', 'release #3', '/admin/messages/3?done=release', ['release']],
    ['release of a message sent before it was marked', '/admin/actions/release', '1', 'release #1', '/admin/messages/1?done=release-sent', ['release']],
    ['mark-spam of a message being sent', '/admin/actions/spam', '3', 'spam #3', '/admin/messages/3?done=mark-spam-deferred', ['mark-spam']],
  ] as const)('%s', async (_, path, id, change, location, logged) => {
    const action = path.endsWith('retry') ? 'retry' : path.endsWith('spam') ? 'mark-spam' : 'release';
    const { outcome, changes, audit } = await run(path, action, { id });
    expect(outcome).toEqual({ kind: 'redirect', location });
    expect(changes).toEqual([change]);
    expect(audit.map((e) => e.action)).toEqual(logged);
    if (logged.length) expect(audit[0]!.detail).toBe(id === '3' && action === 'mark-spam' ? '#3 (when its send ends)' : `#${id}`);
  });

  test('delete of a message being sent says it goes when the send ends, and audits that', async () => {
    const { outcome, changes, audit } = await run('/admin/actions/delete', 'delete-message', { id: '3' });
    expect(outcome).toEqual({ kind: 'redirect', location: '/admin/messages/3?done=delete-message-deferred' });
    expect(changes).toEqual(['delete #3']);
    expect(audit).toEqual([
      {
        at: '2026-11-22T10:00:00.000Z',
        action: 'delete-message',
        detail: '#3 (when its send ends)',
        client: 'c0ffee',
        actor: 'person:1',
        actorName: 'Owner <owner@site.test>',
      },
    ]);
  });

  test('delete removes the message and lands on the list', async () => {
    const { outcome, changes, audit } = await run('/admin/actions/delete', 'delete-message', { id: '2' });
    expect(outcome).toEqual({ kind: 'redirect', location: '/admin/messages?done=deleted' });
    expect(changes).toEqual(['delete #2']);
    expect(audit).toEqual([
      { at: '2026-11-22T10:00:00.000Z', action: 'delete-message', detail: '#2', client: 'c0ffee', actor: 'person:1', actorName: 'Owner <owner@site.test>' },
    ]);
  });

  test('deleting a message that is gone is a 404', async () => {
    const { outcome, audit } = await run('/admin/actions/delete', 'delete-message', { id: '9' });
    expect(outcome).toEqual({ kind: 'refused', status: 404, message: 'No such message: it may have been deleted already.' });
    expect(audit).toEqual([]);
  });

  test.each(['0', '-1', '1.5', 'abc', '', '12345678901234567'])('an id of %j is refused as no such message', async (id) => {
    const { outcome, changes } = await run('/admin/actions/delete', 'delete-message', { id });
    expect(outcome).toEqual({ kind: 'refused', status: 400, message: 'No such message.' });
    expect(changes).toEqual([]);
  });

  test('replay a webhook delivery: sent again, or now when it waits, audited; a delivery being sent is left alone', async () => {
    const w = world();
    const { cookie, csrf } = await signedIn(w.deps);
    w.audit.length = 0;
    const replay = (id: string) =>
      handleAdminPost('replay-delivery', post('/admin/actions/replay-delivery', { csrf, id }, { origin: SITE, cookie }), w.deps, context);
    await expect(replay('7')).resolves.toEqual({ kind: 'redirect', location: '/admin/webhooks?done=replayed' });
    await expect(replay('7')).resolves.toEqual({ kind: 'redirect', location: '/admin/webhooks?done=unchanged-delivery' });
    await expect(replay('x')).resolves.toEqual({ kind: 'redirect', location: '/admin/webhooks?done=unchanged-delivery' });
    await expect(replay('8')).resolves.toEqual({ kind: 'redirect', location: '/admin/webhooks?done=delivery-due' });
    expect(w.audit.map((e) => [e.action, e.detail])).toEqual([
      ['replay-delivery', '#7'],
      ['replay-delivery', '#8'],
    ]);
  });

  test('retry a given-up signup: audited; one that still waits is left alone', async () => {
    const w = world();
    const { cookie, csrf } = await signedIn(w.deps);
    w.audit.length = 0;
    const retry = (id: string) => handleAdminPost('retry-signup', post('/admin/actions/retry-signup', { csrf, id }, { origin: SITE, cookie }), w.deps, context);
    await expect(retry('5')).resolves.toEqual({ kind: 'redirect', location: '/admin/subscribers?done=signup-retried' });
    await expect(retry('6')).resolves.toEqual({ kind: 'redirect', location: '/admin/subscribers?done=unchanged-signup' });
    expect(w.audit.map((e) => [e.action, e.detail])).toEqual([['retry-signup', '#5']]);
  });

  test('delete a subscriber', async () => {
    const { outcome, audit } = await run('/admin/actions/delete-subscriber', 'delete-subscriber', { email: 'ada@example.org' });
    expect(outcome).toEqual({ kind: 'redirect', location: '/admin/subscribers?done=deleted' });
    // The address the erasure removed is not kept in the audit log: only its domain.
    expect(audit.map((e) => [e.action, e.detail])).toEqual([['delete-subscriber', '…@example.org']]);
  });

  test('a subscriber deleted while Redis is unreachable: deleted and audited, and the notice says the count is kept', async () => {
    const { outcome, audit } = await run('/admin/actions/delete-subscriber', 'delete-subscriber', { email: 'bea@example.org' });
    expect(outcome).toEqual({ kind: 'redirect', location: '/admin/subscribers?done=deleted-count-kept' });
    expect(audit.map((e) => [e.action, e.detail])).toEqual([['delete-subscriber', '…@example.org']]);
  });

  test('deleting an address not on the list changes nothing', async () => {
    const { outcome, audit } = await run('/admin/actions/delete-subscriber', 'delete-subscriber', { email: 'nobody@example.org' });
    expect(outcome).toEqual({ kind: 'redirect', location: '/admin/subscribers?done=unchanged' });
    expect(audit).toEqual([]);
  });

  test('export CSV: formula-safe, named for the day, logged', async () => {
    const { outcome, audit } = await run('/admin/actions/export', 'export', { what: 'messages', format: 'csv' });
    expect(outcome).toMatchObject({ kind: 'download', filename: 'messages-2026-11-22.csv', contentType: 'text/csv; charset=utf-8' });
    const body = await read((outcome as { body: AsyncIterable<string> }).body);
    expect(body).toBe(
      `id,createdAt,name,email,message,status,attempts,nextAttemptAt,lastError,sentAt,spamReasons\r\n1,2026-11-01 10:00:00,"'=HYPERLINK(""http://evil.test"")",a@b.co,Hi,sent,1,,,,\r\n`,
    );
    expect(audit.map((e) => [e.action, e.detail])).toEqual([['export-messages', '1 as CSV']]);
  });

  test('one export of messages at a time: a second is refused until the first is written', async () => {
    const w = world();
    const { cookie, csrf } = await signedIn(w.deps);
    const exportNow = () =>
      handleAdminPost('export', post('/admin/actions/export', { csrf, what: 'messages', format: 'json' }, { origin: SITE, cookie }), w.deps, context);
    const first = await exportNow();
    await expect(exportNow()).resolves.toEqual({
      kind: 'refused',
      status: 429,
      message: 'An export is already being written. Try again when it has finished.',
      headers: { 'retry-after': '30' },
    });
    expect(JSON.parse(await read((first as { body: AsyncIterable<string> }).body))).toEqual([expect.objectContaining({ id: 1, status: 'sent' })]);
    await expect(exportNow()).resolves.toMatchObject({ kind: 'download', filename: 'messages-2026-11-22.json' });
  });

  test('export CSV of subscribers: the columns and times of npm run subscribers, and a UTF-8 mark for Excel when asked', async () => {
    const { outcome } = await run('/admin/actions/export', 'export', { what: 'subscribers', format: 'csv', bom: '1' });
    expect(outcome).toMatchObject({ kind: 'download', body: '\uFEFFEmail Address,Created\r\nada@example.org,2026-11-01 10:00:00\r\n' });
    const plain = await run('/admin/actions/export', 'export', { what: 'subscribers', format: 'csv' });
    expect(plain.outcome).toMatchObject({ body: 'Email Address,Created\r\nada@example.org,2026-11-01 10:00:00\r\n' });
  });

  test('export JSON of subscribers', async () => {
    const { outcome, audit } = await run('/admin/actions/export', 'export', { what: 'subscribers', format: 'json' });
    expect(outcome).toEqual({
      kind: 'download',
      filename: 'subscribers-2026-11-22.json',
      contentType: 'application/json; charset=utf-8',
      body: '[\n  {\n    "email": "ada@example.org",\n    "created": "2026-11-01T10:00:00.000Z"\n  }\n]\n',
    });
    expect(audit.map((e) => [e.action, e.detail])).toEqual([['export-subscribers', '1 as JSON']]);
  });

  test.each<Record<string, string>>([{ what: 'passwords', format: 'csv' }, { what: 'messages', format: 'xml' }, { what: 'messages' }])(
    'export of %j is refused',
    async (fields) => {
      const { outcome, audit } = await run('/admin/actions/export', 'export', fields);
      expect(outcome).toEqual({ kind: 'refused', status: 400, message: 'Choose what to export: messages or subscribers, as CSV or JSON.' });
      expect(audit).toEqual([]);
    },
  );
});

describe('signing in, at the edges', () => {
  test('a form of up to 16 KiB is read; a larger one is refused with 400 before any password is checked', async () => {
    const w = world();
    const checked: number[] = [];
    w.deps.checkPassword = async (password) => {
      checked.push(password.length);
      return false;
    };
    // `password=` and 16,375 characters: 16,384 bytes.
    const fits = await handleAdminPost('sign-in', post('/admin/actions/sign-in', { password: 'x'.repeat(16 * 1024 - 9) }), w.deps, context);
    expect(fits).toEqual({ kind: 'redirect', location: '/admin?failed=1' });
    const tooBig = await handleAdminPost('sign-in', post('/admin/actions/sign-in', { password: 'x'.repeat(16 * 1024) }), w.deps, context);
    expect(tooBig).toEqual({ kind: 'refused', status: 400, message: 'The form could not be read.' });
    expect(checked).toEqual([16 * 1024 - 9]);
    expect(w.audit.map((e) => e.detail)).toEqual(['wrong password']);
  });

  test.each([
    [60, 'Too many attempts to sign in. Please try again in 1 minute.'],
    [61, 'Too many attempts to sign in. Please try again in 2 minutes.'],
    [1, 'Too many attempts to sign in. Please try again in 1 minute.'],
  ])('refused for %i more seconds: %s', async (retryAfterSeconds, message) => {
    const w = world();
    w.deps.throttle = { attempt: async () => ({ ok: false, retryAfterSeconds }), succeeded: async () => {} };
    const outcome = await handleAdminPost('sign-in', post('/admin/actions/sign-in', { password: PASSWORD }), w.deps, context);
    expect(outcome).toEqual({ kind: 'refused', status: 429, message, headers: { 'retry-after': String(retryAfterSeconds) } });
  });

  test('an empty password is wrong, checked once against no real hash (so it takes the time of any), and no wait is spent on a gate of 0 ms', async () => {
    const w = world();
    const checked: unknown[] = [];
    w.deps.checkPassword = async (password, options) => {
      checked.push([password, options?.hash]);
      return true;
    };
    const outcome = await handleAdminPost('sign-in', post('/admin/actions/sign-in', { password: '' }), w.deps, context);
    expect(outcome).toEqual({ kind: 'redirect', location: '/admin?failed=1' });
    expect(checked).toEqual([['', 'none']]);
    expect(w.waits).toEqual([]);
  });

  test("signing in forgets the client's attempts: the next mistake waits nothing", async () => {
    const w = world();
    const wrong = () => handleAdminPost('sign-in', post('/admin/actions/sign-in', { password: 'wrong wrong wrong' }), w.deps, context);
    for (let i = 0; i < 5; i++) await wrong();
    await expect(handleAdminPost('sign-in', post('/admin/actions/sign-in', { password: PASSWORD }), w.deps, context)).resolves.toMatchObject({
      kind: 'redirect',
      location: '/admin',
    });
    await wrong();
    expect(w.waits).toEqual([1000, 2000, 4000]);
  });
});

describe('the actions, at the edges', () => {
  async function signedInWorld() {
    const w = world();
    const { cookie, csrf } = await signedIn(w.deps);
    w.audit.length = 0;
    const act = (action: Parameters<typeof handleAdminPost>[0], path: string, fields: Record<string, string>) =>
      handleAdminPost(action, post(path, { csrf, ...fields }, { origin: SITE, cookie }), w.deps, context);
    return { ...w, act };
  }

  test('deleting a message that was already going: back to its page, saying nothing changed, not audited', async () => {
    const w = await signedInWorld();
    w.deps.commands.remove = async () => ({ found: true, from: 'sending', changed: false });
    await expect(w.act('delete-message', '/admin/actions/delete', { id: '4' })).resolves.toEqual({
      kind: 'redirect',
      location: '/admin/messages/4?done=unchanged',
    });
    expect(w.audit).toEqual([]);
  });

  test('a subscriber post without an address deletes nothing and says so', async () => {
    const w = await signedInWorld();
    await expect(w.act('delete-subscriber', '/admin/actions/delete-subscriber', {})).resolves.toEqual({
      kind: 'redirect',
      location: '/admin/subscribers?done=unchanged',
    });
    expect(w.changes).toEqual(['delete ']);
    expect(w.audit).toEqual([]);
  });

  test.each(['', '0', 'x', '5.0'])('a retry of signup %j or replay of delivery %j asks nothing of them', async (id) => {
    const w = await signedInWorld();
    const asked: string[] = [];
    const asking = (what: string) => async (n: number) => {
      asked.push(`${what} ${n}`);
      return true;
    };
    w.deps.signups = { retry: asking('signup') };
    w.deps.webhooks = {
      replay: async (n: number) => {
        asked.push(`delivery ${n}`);
        return { kind: 'replayed' };
      },
    };
    await expect(w.act('retry-signup', '/admin/actions/retry-signup', { id })).resolves.toEqual({
      kind: 'redirect',
      location: '/admin/subscribers?done=unchanged-signup',
    });
    await expect(w.act('replay-delivery', '/admin/actions/replay-delivery', { id })).resolves.toEqual({
      kind: 'redirect',
      location: '/admin/webhooks?done=unchanged-delivery',
    });
    expect(asked).toEqual([]);
    expect(w.audit).toEqual([]);
  });

  test('an export of messages left unwritten holds the gate 10 minutes, and a late end of it does not open the next one', async () => {
    const w = await signedInWorld();
    let now = Date.UTC(2026, 10, 22, 10);
    w.deps.now = () => new Date(now);
    const exportNow = () => w.act('export', '/admin/actions/export', { what: 'messages', format: 'csv' });
    const refused = {
      kind: 'refused',
      status: 429,
      message: 'An export is already being written. Try again when it has finished.',
      headers: { 'retry-after': '30' },
    };
    const first = await exportNow();
    now += 10 * 60_000 - 1;
    await expect(exportNow()).resolves.toEqual(refused);
    now += 1;
    const second = await exportNow();
    expect(second).toMatchObject({ kind: 'download', filename: 'messages-2026-11-22.csv' });
    // The first download is written at last: the gate is the second's, and stays shut.
    await read((first as { body: AsyncIterable<string> }).body);
    await expect(exportNow()).resolves.toEqual(refused);
    await read((second as { body: AsyncIterable<string> }).body);
    await expect(exportNow()).resolves.toMatchObject({ kind: 'download' });
    expect(w.audit.map((e) => e.action)).toEqual(['export-messages', 'export-messages', 'export-messages']);
  });

  test('a download abandoned after its first chunk opens the gate for the next export', async () => {
    const w = await signedInWorld();
    const exportNow = () => w.act('export', '/admin/actions/export', { what: 'messages', format: 'json' });
    const first = await exportNow();
    for await (const chunk of (first as { body: AsyncIterable<string> }).body) {
      expect(chunk).toMatch(/^\[\n {2}\{\n {4}"id": 1,/);
      break;
    }
    await expect(exportNow()).resolves.toMatchObject({ kind: 'download', filename: 'messages-2026-11-22.json' });
  });

  test('an export whose count fails is not left holding the gate', async () => {
    const w = await signedInWorld();
    const count = w.deps.exports.countMessages;
    w.deps.exports.countMessages = async () => {
      throw new Error('database gone');
    };
    await expect(w.act('export', '/admin/actions/export', { what: 'messages', format: 'csv' })).rejects.toThrow('database gone');
    expect(w.deps.exporting).toEqual({ since: undefined });
    w.deps.exports.countMessages = count;
    await expect(w.act('export', '/admin/actions/export', { what: 'messages', format: 'csv' })).resolves.toMatchObject({ kind: 'download' });
  });

  test('without a shared gate each export stands alone', async () => {
    const w = await signedInWorld();
    delete w.deps.exporting;
    const exportNow = () => w.act('export', '/admin/actions/export', { what: 'messages', format: 'csv' });
    await exportNow();
    await expect(exportNow()).resolves.toMatchObject({ kind: 'download' });
  });
});

describe('roles and forms (issue 42 step S4): each post authorized by its permission and its message’s form', () => {
  /** A session of person #id (the first owner, Ada the quote editor, Pat the reader), as a cookie and its CSRF token. */
  async function as(deps: AdminDeps, userId: number) {
    const session = await deps.sessions.start({ userId, stage: 'full', method: 'password' });
    return { cookie: `__Host-admin_session=${session.token}`, csrf: session.csrfToken };
  }
  const send = async (deps: AdminDeps, userId: number, path: keyof typeof PATHS, fields: Record<string, string>) => {
    const { cookie, csrf } = await as(deps, userId);
    return handleAdminPost(PATHS[path], post(path, { csrf, ...fields }, { origin: SITE, cookie }), deps, context);
  };
  const PATHS = {
    '/admin/actions/retry': 'retry',
    '/admin/actions/spam': 'mark-spam',
    '/admin/actions/release': 'release',
    '/admin/actions/delete': 'delete-message',
    '/admin/actions/delete-subscriber': 'delete-subscriber',
    '/admin/actions/export': 'export',
    '/admin/actions/replay-delivery': 'replay-delivery',
    '/admin/actions/retry-signup': 'retry-signup',
    '/admin/actions/sign-out': 'sign-out',
  } as const;
  const ROLE_CANNOT = { kind: 'refused', status: 403, message: 'Your role cannot do this.' };
  const PAT = { actor: 'person:3', actorName: 'Pat <pat@example.org>' };
  const ADA = { actor: 'person:2', actorName: 'Ada <ada@example.org>' };
  const OWNER = { actor: 'person:1', actorName: 'Owner <owner@site.test>' };

  test.each<[keyof typeof PATHS, Record<string, string>]>([
    ['/admin/actions/retry', { id: '2' }],
    ['/admin/actions/spam', { id: '2' }],
    ['/admin/actions/release', { id: '2' }],
    ['/admin/actions/delete', { id: '2' }],
    // An id that does not exist is refused the same: a reader learns nothing from ids.
    ['/admin/actions/delete', { id: '9' }],
    ['/admin/actions/delete-subscriber', { email: 'ada@example.org' }],
    ['/admin/actions/export', { what: 'messages', format: 'csv' }],
    ['/admin/actions/export', { what: 'subscribers', format: 'csv' }],
    ['/admin/actions/replay-delivery', { id: '7' }],
    ['/admin/actions/retry-signup', { id: '5' }],
  ])('a reader’s crafted post to %s %j: 403, nothing changed, the refusal audited with the reader', async (path, fields) => {
    const w = world();
    await expect(send(w.deps, 3, path, fields)).resolves.toEqual(ROLE_CANNOT);
    expect(w.changes).toEqual([]);
    expect(w.exported).toEqual([]);
    expect(w.audit).toEqual([{ at: '2026-11-22T10:00:00.000Z', action: 'refused', detail: PATHS[path], client: 'c0ffee', ...PAT, repeats: -1 }]);
  });

  test('a reader may still sign out', async () => {
    const w = world();
    await expect(send(w.deps, 3, '/admin/actions/sign-out', {})).resolves.toMatchObject({ kind: 'redirect', location: '/admin?ended=signed-out' });
    expect(w.audit).toEqual([{ at: '2026-11-22T10:00:00.000Z', action: 'sign-out', detail: '', client: 'c0ffee', ...PAT }]);
  });

  test.each<[keyof typeof PATHS]>([['/admin/actions/retry'], ['/admin/actions/spam'], ['/admin/actions/release'], ['/admin/actions/delete']])(
    'an editor’s post to %s on a message of another form: 404 as for no message, unchanged, not audited',
    async (path) => {
      const w = world();
      await expect(send(w.deps, 2, path, { id: '1' })).resolves.toEqual({
        kind: 'refused',
        status: 404,
        message: 'No such message: it may have been deleted already.',
      });
      expect(w.changes).toEqual([]);
      expect(w.audit).toEqual([]);
    },
  );

  test('an editor marks a message of their form as spam, and the audit names them', async () => {
    const w = world();
    await expect(send(w.deps, 2, '/admin/actions/spam', { id: '2' })).resolves.toEqual({ kind: 'redirect', location: '/admin/messages/2?done=mark-spam' });
    expect(w.changes).toEqual(['spam #2']);
    expect(w.audit).toEqual([{ at: '2026-11-22T10:00:00.000Z', action: 'mark-spam', detail: '#2', client: 'c0ffee', ...ADA }]);
  });

  test('an editor’s export of messages reads and counts their forms only', async () => {
    const w = world();
    await expect(send(w.deps, 2, '/admin/actions/export', { what: 'messages', format: 'json' })).resolves.toMatchObject({ kind: 'download' });
    expect(w.exported).toEqual([{ all: false, forms: ['quote'] }]);
    expect(w.counted).toEqual([{ all: false, forms: ['quote'] }]);
    expect(w.audit).toEqual([{ at: '2026-11-22T10:00:00.000Z', action: 'export-messages', detail: '1 as JSON', client: 'c0ffee', ...ADA }]);
  });

  test('an owner’s export reads every form', async () => {
    const w = world();
    await send(w.deps, 1, '/admin/actions/export', { what: 'messages', format: 'json' });
    expect(w.exported).toEqual([{ all: true }]);
    expect(w.counted).toEqual([{ all: true }]);
  });

  test.each<[string, keyof typeof PATHS, Record<string, string>, object]>([
    // The local list is not among Ada's forms: its export is not hers to see (404).
    ['export of the subscribers', '/admin/actions/export', { what: 'subscribers', format: 'csv' }, { kind: 'refused', status: 404 }],
    // Erasing a subscriber, replaying a delivery, retrying a signup: the owner's alone (403).
    ['erasure of a subscriber', '/admin/actions/delete-subscriber', { email: 'ada@example.org' }, ROLE_CANNOT],
    ['replay of a delivery', '/admin/actions/replay-delivery', { id: '7' }, ROLE_CANNOT],
    ['retry of a signup', '/admin/actions/retry-signup', { id: '5' }, ROLE_CANNOT],
  ])('an editor’s %s is refused', async (_, path, fields, refusal) => {
    const w = world();
    await expect(send(w.deps, 2, path, fields)).resolves.toMatchObject(refusal);
    expect(w.changes).toEqual([]);
  });

  test('every entry of an owner’s actions names them', async () => {
    const w = world();
    await send(w.deps, 1, '/admin/actions/spam', { id: '2' });
    await send(w.deps, 1, '/admin/actions/delete-subscriber', { email: 'ada@example.org' });
    await send(w.deps, 1, '/admin/actions/replay-delivery', { id: '7' });
    await send(w.deps, 1, '/admin/actions/retry-signup', { id: '5' });
    await send(w.deps, 1, '/admin/actions/export', { what: 'subscribers', format: 'json' });
    await send(w.deps, 1, '/admin/actions/sign-out', {});
    expect(w.audit.map((entry) => [entry.action, entry.actor, entry.actorName])).toEqual(
      ['mark-spam', 'delete-subscriber', 'replay-delivery', 'retry-signup', 'export-subscribers', 'sign-out'].map((action) => [
        action,
        OWNER.actor,
        OWNER.actorName,
      ]),
    );
  });
});
