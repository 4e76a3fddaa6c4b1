/**
 * Sign-in tells nobody which accounts exist (issue 42 step S3b, plan section 4): whatever was
 * typed, exactly one password verification runs (the person's hash, ADMIN_PASSWORD_HASH for the
 * first owner, or a dummy of the same parameters), the answer depends only on whether an email
 * was typed, and the per-person throttle counts an address nobody has exactly as a person's.
 */
import { describe, expect, test } from 'vitest';
import type { AdminDeps } from '../../../packages/site-forms/src/lib/admin/actions/index.ts';
import { handleAdminPost } from '../../../packages/site-forms/src/lib/admin/actions/index.ts';
import type { AuditEntry } from '../../../packages/site-forms/src/lib/admin/audit.ts';
import { createPasswordCheck, type PasswordHash, parsePasswordHash } from '../../../packages/site-forms/src/lib/admin/password.ts';
import { createSessions, type SessionRecord } from '../../../packages/site-forms/src/lib/admin/session.ts';
import { createSignInThrottle } from '../../../packages/site-forms/src/lib/admin/throttle.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import type { Person } from '../../../packages/site-forms/src/lib/people/store.ts';

const SITE = 'https://site.test';
// Well-formed hashes; the verification is counted, not computed, so their keys never matter.
const ENV_HASH = '$argon2id$v=19$m=19456,t=2,p=1$ZW52c2FsdGVudnNhbHQ$ZW52a2V5ZW52a2V5ZW52a2V5ZW52a2V5ZW52a2V5ZW4';
const ADA_HASH = '$argon2id$v=19$m=19456,t=2,p=1$YWRhc2FsdGFkYXNhbHQ$YWRha2V5YWRha2V5YWRha2V5YWRha2V5YWRha2V5YWQ';
const parsed = (text: string): PasswordHash => {
  const result = parsePasswordHash(text);
  if (!result.ok) throw new Error(result.problem);
  return result.hash;
};

function person(id: number, fields: Partial<Person>): Person {
  const at = new Date('2026-11-01T00:00:00.000Z');
  return {
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
    createdAt: at,
    updatedAt: at,
    ...fields,
  };
}

/** The sign-in's world: the first owner, Ada with her own password, Pat with a passkey only; `env` is ADMIN_PASSWORD_HASH or none (`null`). */
function world(env: PasswordHash | null = parsed(ENV_HASH)) {
  const people = [
    person(1, { email: 'owner@site.test', origin: 'env' }),
    person(2, { email: 'ada@example.org', role: 'editor', passwordHash: ADA_HASH }),
    person(3, { email: 'pat@example.org', role: 'reader' }),
  ];
  const verified: PasswordHash[] = [];
  const records = new Map<string, SessionRecord>();
  const audit: AuditEntry[] = [];
  const waits: number[] = [];
  const deps = {
    // Counts each verification and the hash it used; only "right" is right, and only against a real hash.
    checkPassword: createPasswordCheck(env ?? undefined, 2, async (password, hash) => {
      verified.push(hash);
      return password === 'right';
    }),
    people: {
      envOwner: async () => people.find((p) => p.origin === 'env'),
      findByEmail: async (email: string) => people.find((p) => p.email === email.trim().toLowerCase()),
      signedIn: async () => {},
    },
    sessions: createSessions({
      create: async (s) => void records.set(s.tokenHash, s),
      find: async () => undefined,
      touch: async () => {},
      delete: async () => true,
      deleteExpired: async () => 0,
    }),
    throttle: createSignInThrottle({ logger: silentLogger }),
    audit: { record: async (e: AuditEntry) => void audit.push(e), recordRepeated: async (e: AuditEntry) => void audit.push(e) },
    now: () => new Date('2026-11-29T10:00:00.000Z'),
    wait: async (ms: number) => void waits.push(ms),
  } as unknown as AdminDeps;
  let client = 0;
  const signIn = (fields: Record<string, string>, from = `198.51.100.${++client}`) =>
    handleAdminPost(
      'sign-in',
      new Request(`${SITE}/admin/actions/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: SITE },
        body: new URLSearchParams(fields),
      }),
      deps,
      { publicOrigin: SITE, clientKey: from, clientHash: 'c0ffee' },
    );
  return { signIn, verified, records, audit, waits };
}

describe('one verification and one answer, whatever was typed', () => {
  test.each([
    ['a person’s email with a wrong password', { email: 'ada@example.org', password: 'wrong' }],
    ['an email nobody has', { email: 'nobody@example.org', password: 'right' }],
    ['the email of a person without a password (passkey only)', { email: 'pat@example.org', password: 'right' }],
    ['an email longer than any address', { email: `${'a'.repeat(250)}@example.org`, password: 'right' }],
    ['a person’s email and an empty password', { email: 'ada@example.org', password: '' }],
    ['an email nobody has and no password field', { email: 'nobody@example.org' }],
  ])('%s: exactly one verification, "wrong email or password", no session', async (_, fields) => {
    const w = world();
    const outcome = await w.signIn(fields);
    expect(outcome).toEqual({ kind: 'redirect', location: '/admin?failed=email' });
    expect(w.verified).toHaveLength(1);
    expect(w.records.size).toBe(0);
    expect(w.audit).toEqual([{ at: '2026-11-29T10:00:00.000Z', action: 'sign-in-failed', detail: 'wrong password', client: 'c0ffee' }]);
  });

  test('an unknown email is verified against a dummy made at start with the parameters of a person’s password (argon2id, 19 MiB, 2 passes)', async () => {
    const w = world();
    await w.signIn({ email: 'nobody@example.org', password: 'right' });
    await w.signIn({ email: 'pat@example.org', password: 'right' });
    await w.signIn({ email: 'ada@example.org', password: 'wrong' });
    const [unknown, passkeyOnly, ada] = w.verified;
    expect(unknown).toMatchObject({ algorithm: 'argon2id', memory: 19_456, passes: 2, parallelism: 1 });
    expect([unknown!.algorithm === 'argon2id' && unknown!.salt.length, unknown!.key.length]).toEqual([16, 32]);
    // One dummy for the process: the same object each time, never anyone's hash.
    expect(passkeyOnly).toBe(unknown);
    expect(ada).toEqual(parsed(ADA_HASH));
  });

  test('the right password of a person is one verification against their own hash, and signs in', async () => {
    const w = world();
    await expect(w.signIn({ email: 'ada@example.org', password: 'right' })).resolves.toMatchObject({ kind: 'redirect', location: '/admin' });
    expect(w.verified).toEqual([parsed(ADA_HASH)]);
  });

  test('an empty email is the first owner, verified against ADMIN_PASSWORD_HASH once', async () => {
    const w = world();
    await expect(w.signIn({ password: 'wrong' })).resolves.toEqual({ kind: 'redirect', location: '/admin?failed=1' });
    expect(w.verified).toEqual([parsed(ENV_HASH)]);
  });

  test.each([
    ['an empty email', { password: 'right' }, '/admin?failed=1'],
    ['the first owner’s email (CONTACT_TO)', { email: 'owner@site.test', password: 'right' }, '/admin?failed=email'],
  ])('without ADMIN_PASSWORD_HASH, %s: one verification against the dummy, and wrong', async (_, fields, location) => {
    const w = world(null);
    await expect(w.signIn(fields)).resolves.toEqual({ kind: 'redirect', location });
    expect(w.verified).toHaveLength(1);
    expect(w.verified[0]).toMatchObject({ algorithm: 'argon2id', memory: 19_456 });
    expect(w.records.size).toBe(0);
  });
});

describe('the per-person throttle cannot tell an account from none', () => {
  test('failures on a person’s email and on an address nobody has, each from its own client, wait alike and are refused alike', async () => {
    const answers = async (email: string) => {
      const w = world();
      const outcomes = [];
      for (let i = 0; i < 21; i++) outcomes.push(await w.signIn({ email, password: 'wrong' }));
      return { waits: w.waits, last: outcomes.at(-1), verified: w.verified.length };
    };
    const [ada, nobody] = [await answers('ada@example.org'), await answers('nobody@example.org')];
    expect(nobody).toEqual(ada);
    expect(ada.waits).toEqual([1000, 2000, 4000, 8000, 8000, 8000, 8000, 8000, 8000, 8000, 8000, 8000, 8000, 8000, 8000]);
    expect(ada.last).toEqual({
      kind: 'refused',
      status: 429,
      message: 'Too many attempts to sign in. Please try again in 15 minutes.',
      headers: { 'retry-after': '900' },
    });
    // The refused attempt verified nothing.
    expect(ada.verified).toBe(20);
  });
});
