/**
 * Passkeys on the server (issue 42 step S8a; people/challenges.ts, people/passkeys.ts,
 * admin/actions/passkeys.ts) on both engines, with @simplewebauthn/server's option generators
 * and verify functions standing in for a browser's authenticator: a challenge answers once and
 * for 5 minutes, for its purpose, person and session only; a passkey's sign-in stores its counter,
 * gives one answer to every refusal and checks the user handle; an enrolment session becomes full
 * once it added a passkey; and ADMIN_REQUIRE_PASSKEY's rules for a right password.
 */
import { generateAuthenticationOptions, generateRegistrationOptions } from '@simplewebauthn/server';
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { type AdminAction, type AdminOutcome, ENROLL_ONLY, handleAdminPost } from '../../../packages/site-forms/src/lib/admin/actions/index.ts';
import { PASSKEY_REFUSED } from '../../../packages/site-forms/src/lib/admin/actions/passkeys.ts';
import { type AdminParts, createAdmin } from '../../../packages/site-forms/src/lib/admin/owner-inbox.ts';
import { parsePasswordHash } from '../../../packages/site-forms/src/lib/admin/password.ts';
import { retentionJobs } from '../../../packages/site-forms/src/lib/admin/retention.ts';
import type { Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createSignups } from '../../../packages/site-forms/src/lib/newsletter/signups.ts';
import { CHALLENGE_TTL_MS, createChallenges } from '../../../packages/site-forms/src/lib/people/challenges.ts';
import { passkeyName, relyingPartyOf, type WebAuthnLibrary } from '../../../packages/site-forms/src/lib/people/passkeys.ts';
import type { Sql } from '../../../packages/site-forms/src/lib/sql/sql.ts';
import { createDeliveries } from '../../../packages/site-forms/src/lib/webhooks/deliveries.ts';
import { testEngines } from '../../support/stores.ts';

// The reference implementation's argon2id vector (password "password"): cheap to check.
const HASH = '$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4';
const SITE = 'https://site.test';
const T0 = new Date('2030-01-01T10:00:00.000Z');
const context = { publicOrigin: SITE, clientKey: '203.0.113.9', clientHash: 'c0ffee' };

const b64 = (text: string) => Buffer.from(text).toString('base64url');
const clientData = (type: string, challenge: string, origin = SITE) => b64(JSON.stringify({ type, challenge, origin }));

/**
 * The library's verify functions as a browser's authenticator would satisfy them: the origin and
 * the challenge (consumed through the predicate, as the library asks it) before the signature,
 * which is right when it is "signed by" the stored public key. Every call is counted.
 */
function fakeLibrary() {
  const calls: string[] = [];
  const library: WebAuthnLibrary = {
    generateAuthenticationOptions,
    generateRegistrationOptions,
    async verifyAuthenticationResponse(options) {
      calls.push('verify-authentication');
      const client = JSON.parse(Buffer.from(options.response.response.clientDataJSON, 'base64url').toString()) as { challenge: string; origin: string };
      if (client.origin !== options.expectedOrigin || options.expectedRPID !== 'site.test') throw new Error('Unexpected origin');
      if (typeof options.expectedChallenge !== 'function' || !(await options.expectedChallenge(client.challenge))) throw new Error('Unexpected challenge');
      if (options.requireUserVerification !== true) throw new Error('User verification not required');
      const key = Buffer.from(options.credential.publicKey).toString();
      if (options.response.response.signature !== b64(`signed by ${key}`)) throw new Error('Bad signature');
      const newCounter = Number(Buffer.from(options.response.response.authenticatorData, 'base64url').toString());
      // As the library: a counter that did not move forward is refused, unless both are 0 (an authenticator that keeps none).
      const { counter } = options.credential;
      if ((newCounter > 0 || counter > 0) && newCounter <= counter) throw new Error('Counter went back');
      return {
        verified: true,
        authenticationInfo: {
          credentialID: options.credential.id,
          newCounter,
          userVerified: true,
          credentialDeviceType: 'multiDevice',
          credentialBackedUp: true,
          origin: client.origin,
          rpID: 'site.test',
        },
      };
    },
    async verifyRegistrationResponse(options) {
      calls.push('verify-registration');
      const client = JSON.parse(Buffer.from(options.response.response.clientDataJSON, 'base64url').toString()) as { challenge: string; origin: string };
      if (client.origin !== options.expectedOrigin) throw new Error('Unexpected origin');
      if (typeof options.expectedChallenge !== 'function' || !(await options.expectedChallenge(client.challenge))) throw new Error('Unexpected challenge');
      return {
        verified: true,
        registrationInfo: {
          fmt: 'none',
          aaguid: '00000000-0000-0000-0000-000000000000',
          credential: {
            id: options.response.id,
            publicKey: new Uint8Array(Buffer.from(`key of ${options.response.id}`)),
            counter: 0,
            transports: ['internal'],
          },
          credentialType: 'public-key',
          attestationObject: new Uint8Array(),
          userVerified: true,
          credentialDeviceType: 'multiDevice',
          credentialBackedUp: true,
          origin: client.origin,
          rpID: 'site.test',
        },
      } as never;
    },
  };
  return { library, calls };
}

/** The browser's answer to registration options: a new credential `id`. */
function registration(id: string, challenge: string) {
  return {
    id,
    rawId: id,
    type: 'public-key',
    response: { clientDataJSON: clientData('webauthn.create', challenge), attestationObject: b64('none') },
    clientExtensionResults: {},
  };
}

/** The browser's answer to sign-in options with credential `id` of the person whose handle is `userHandle`, its counter now `counter`. */
function assertion(id: string, challenge: string, userHandle: string, counter: number, key = `key of ${id}`) {
  return {
    id,
    rawId: id,
    type: 'public-key',
    response: {
      clientDataJSON: clientData('webauthn.get', challenge),
      authenticatorData: b64(String(counter)),
      signature: b64(`signed by ${key}`),
      userHandle,
    },
    clientExtensionResults: {},
  };
}

function post(path: string, fields: Record<string, string>, cookie?: string): Request {
  return new Request(`${SITE}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: SITE, ...(cookie && { cookie }) },
    body: new URLSearchParams(fields),
  });
}

const count = async (sql: Sql, table: string) => Number((await sql.get<{ n: number | string }>(`SELECT count(*) AS n FROM ${table}`))!.n);

describe('the relying party', () => {
  test.each([
    ['https://www.example.com', { id: 'www.example.com', origin: 'https://www.example.com', name: 'Site' }],
    ['http://localhost:4321', { id: 'localhost', origin: 'http://localhost:4321', name: 'Site' }],
  ])('is PUBLIC_URL=%s’s domain and origin', (url, expected) => {
    expect(relyingPartyOf(url, 'Site')).toEqual(expected);
  });

  test.each([undefined, '', 'https://192.0.2.10', 'http://127.0.0.1:4321', 'http://[::1]:4321', 'not a url'])(
    'is none (passkeys off) for PUBLIC_URL=%j',
    (url) => {
      expect(relyingPartyOf(url, 'Site')).toBeUndefined();
    },
  );

  test('a passkey’s name is trimmed, at most 60 characters, "Passkey" when empty', () => {
    expect(passkeyName('  Ada’s\tlaptop \n')).toBe('Ada’s laptop');
    expect(passkeyName('')).toBe('Passkey');
    expect(passkeyName(undefined)).toBe('Passkey');
    expect(passkeyName('x'.repeat(60))).toBe('x'.repeat(60));
    expect(passkeyName('x'.repeat(61))).toBeUndefined();
  });
});

describe.each(testEngines())('passkeys on $name', ({ name, available, open }) => {
  describe.skipIf(!available)(name, () => {
    describe('challenges', () => {
      test('a challenge is kept as its hash and answers once, even to two answers at the same moment', async () => {
        const { store } = await open();
        const challenges = createChallenges(store.sql);
        await challenges.issue('challenge-a', 'authenticate', undefined, T0);
        const stored = await store.sql.all<{ challenge_hash: string }>('SELECT challenge_hash FROM admin_webauthn_challenges');
        expect(stored).toEqual([{ challenge_hash: createHash('sha256').update('challenge-a').digest('hex') }]);
        const both = await Promise.all([
          challenges.consume('challenge-a', 'authenticate', undefined, T0),
          challenges.consume('challenge-a', 'authenticate', undefined, T0),
        ]);
        expect(both.sort()).toEqual([false, true]);
        await expect(challenges.consume('challenge-a', 'authenticate', undefined, T0)).resolves.toBe(false);
        await expect(challenges.consume('never-issued', 'authenticate', undefined, T0)).resolves.toBe(false);
      });

      test('a challenge answers for 5 minutes, and the housekeeping sweeps the ones nobody answered', async () => {
        const { store } = await open();
        const challenges = createChallenges(store.sql);
        const justBefore = new Date(T0.getTime() + CHALLENGE_TTL_MS - 1);
        const atExpiry = new Date(T0.getTime() + CHALLENGE_TTL_MS);
        await challenges.issue('in-time', 'authenticate', undefined, T0);
        await challenges.issue('too-late', 'authenticate', undefined, T0);
        await challenges.issue('later', 'authenticate', undefined, atExpiry);
        await expect(challenges.consume('too-late', 'authenticate', undefined, atExpiry)).resolves.toBe(false);
        await expect(challenges.consume('in-time', 'authenticate', undefined, justBefore)).resolves.toBe(true);
        const job = retentionJobs({
          sessions: undefined,
          queries: { deleteOlderThan: async () => 0 },
          audit: undefined,
          retentionDays: undefined,
          challenges,
          logger: silentLogger,
        }).find((each) => each.name === 'passkey-challenges');
        await job!.run(atExpiry);
        // The expired one is gone; the one issued at the sweep's time still answers.
        await expect(count(store.sql, 'admin_webauthn_challenges')).resolves.toBe(1);
        await expect(challenges.consume('later', 'authenticate', undefined, atExpiry)).resolves.toBe(true);
      });

      test('a challenge of another purpose, person or session is refused, and stays for its own', async () => {
        const { store } = await open();
        const challenges = createChallenges(store.sql);
        const ada = { userId: 7, sessionHash: 'a'.repeat(64) };
        await challenges.issue('to-register', 'register', ada, T0);
        await challenges.issue('to-sign-in', 'authenticate', undefined, T0);
        await expect(challenges.consume('to-register', 'authenticate', undefined, T0)).resolves.toBe(false);
        await expect(challenges.consume('to-register', 'register', { userId: 8, sessionHash: ada.sessionHash }, T0)).resolves.toBe(false);
        await expect(challenges.consume('to-register', 'register', { userId: 7, sessionHash: 'b'.repeat(64) }, T0)).resolves.toBe(false);
        await expect(challenges.consume('to-register', 'register', undefined, T0)).resolves.toBe(false);
        await expect(challenges.consume('to-sign-in', 'register', ada, T0)).resolves.toBe(false);
        await expect(challenges.consume('to-register', 'register', ada, T0)).resolves.toBe(true);
        await expect(challenges.consume('to-sign-in', 'authenticate', undefined, T0)).resolves.toBe(true);
      });
    });

    /** The admin over this engine's store with the fake library, ADMIN_PASSWORD_HASH's owner, and Ada (an editor, password "password"). */
    async function build(settings: { requirePasskey?: boolean; publicUrl?: string | undefined } = {}, realLibrary = false) {
      const { store } = await open();
      const parsed = parsePasswordHash(HASH, true);
      if (!parsed.ok) throw new Error(parsed.problem);
      const { library, calls } = fakeLibrary();
      const parts: AdminParts = {
        store: store as Store,
        logger: silentLogger,
        providerName: 'local',
        spam: { markSpam: async () => ({ found: false }), release: async () => ({ found: false }), reasons: async () => [] },
        exportMessages: async function* () {},
        webhooks: createDeliveries(store.sql),
        signups: createSignups(store.sql),
        delays: { client: () => 0, overall: () => 0, person: () => 0 },
        dummy: parsed.hash,
        ...(!realLibrary && { webauthn: async () => library }),
      };
      const admin = createAdmin(
        {
          passwordHash: parsed.hash,
          passwordHashText: HASH,
          retentionDays: undefined,
          publicUrl: 'publicUrl' in settings ? settings.publicUrl : SITE,
          siteName: 'Site',
          ...settings,
        },
        parts,
      );
      await admin.ready;
      const created = await admin.people.create(
        { email: 'ada@example.org', name: 'Ada', role: 'editor', forms: ['quote'], passwordHash: HASH, origin: 'cli' },
        T0,
      );
      if (!created.ok) throw new Error('Ada not created');
      const act = (action: AdminAction, fields: Record<string, string>, cookie?: string) =>
        handleAdminPost(action, post(`/admin/actions/${action}`, fields, cookie), admin.deps, context);
      /** Signs Ada in with her password: the cookie, the session's CSRF token and where the sign-in sent her. */
      const signInAda = async () => {
        const outcome = await act('sign-in', { email: 'ada@example.org', password: 'password' });
        if (outcome.kind !== 'redirect') throw new Error(`sign-in: ${outcome.kind}`);
        if (!outcome.cookie) return { location: outcome.location, cookie: undefined, csrf: '' };
        const cookie = outcome.cookie.split(';')[0]!;
        const resumed = await admin.sessions.resume(cookie.split('=')[1]);
        if (!resumed.ok) throw new Error('no session');
        return { location: outcome.location, cookie, csrf: resumed.session.csrfToken, session: resumed.session };
      };
      /** Registers a passkey `id` for the person of `cookie` through the two posts, as the account page's script does. */
      const addPasskey = async (cookie: string, csrf: string, id: string, passkeyName = 'Laptop') => {
        const options = await act('passkey-options', { purpose: 'register', csrf }, cookie);
        if (options.kind !== 'json' || !options.body.success) throw new Error(`options: ${JSON.stringify(options)}`);
        const { challenge } = options.body.options as { challenge: string };
        return act('passkey-register', { csrf, name: passkeyName, response: JSON.stringify(registration(id, challenge)) }, cookie);
      };
      /** A sign-in's options' challenge, as the sign-in page's script asks for it. */
      const signInChallenge = async () => {
        const options = await act('passkey-options', { purpose: 'authenticate' });
        if (options.kind !== 'json' || !options.body.success) throw new Error(`options: ${JSON.stringify(options)}`);
        return (options.body.options as { challenge: string }).challenge;
      };
      return { store, admin, ada: created.person, act, signInAda, addPasskey, signInChallenge, calls, library };
    }

    /** The options a `passkey-options` post answered. */
    const optionsOf = <T>(outcome: AdminOutcome): T => {
      if (outcome.kind !== 'json') throw new Error(`options: ${outcome.kind}`);
      return outcome.body.options as T;
    };
    const cookieOf = (outcome: AdminOutcome) => (outcome.kind === 'json' || outcome.kind === 'redirect' ? outcome.cookie?.split(';')[0] : undefined);

    test('registration options name the person by their user handle, never their id or email, and leave out their passkeys', async () => {
      const { ada, act, signInAda, addPasskey } = await build();
      const { cookie, csrf } = await signInAda();
      await addPasskey(cookie!, csrf, 'cred-1');
      const options = await act('passkey-options', { purpose: 'register', csrf }, cookie);
      expect(options).toMatchObject({ kind: 'json', status: 200, body: { success: true } });
      const body = optionsOf<{
        rp: { id: string; name: string };
        user: { id: string; name: string; displayName: string };
        excludeCredentials: { id: string }[];
        authenticatorSelection: Record<string, unknown>;
      }>(options);
      expect(body.rp).toEqual({ id: 'site.test', name: 'Site' });
      expect(body.user).toEqual({ id: ada.userHandle, name: 'ada@example.org', displayName: 'Ada' });
      expect(body.user.id).not.toBe(String(ada.id));
      expect(body.excludeCredentials.map((each) => each.id)).toEqual(['cred-1']);
      expect(body.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
      // Without a session, or with another session's CSRF token: refused.
      await expect(act('passkey-options', { purpose: 'register', csrf })).resolves.toMatchObject({ kind: 'json', status: 403 });
      await expect(act('passkey-options', { purpose: 'register', csrf: 'x'.repeat(43) }, cookie)).resolves.toMatchObject({ kind: 'json', status: 403 });
    });

    test('a passkey is added from the session that asked, with its key, counter and name; another session’s answer is refused', async () => {
      const { store, ada, act, signInAda, addPasskey } = await build();
      const first = await signInAda();
      const second = await signInAda();
      const added = await addPasskey(first.cookie!, first.csrf, 'cred-1', ' Ada’s laptop ');
      expect(added).toEqual({ kind: 'json', status: 200, body: { success: true, location: '/admin/account' } });
      const rows = await store.sql.all<Record<string, unknown>>(
        'SELECT id, user_id, name, public_key, counter, transports, device_type, backed_up, last_used_at FROM admin_passkeys',
      );
      expect(rows.map((row) => ({ ...row, user_id: Number(row.user_id), counter: Number(row.counter), backed_up: Number(row.backed_up) }))).toEqual([
        {
          id: 'cred-1',
          user_id: ada.id,
          name: 'Ada’s laptop',
          public_key: b64('key of cred-1'),
          counter: 0,
          transports: '["internal"]',
          device_type: 'multiDevice',
          backed_up: 1,
          last_used_at: null,
        },
      ]);
      // Options asked by the first session, answered from the second: its challenge is not the second's.
      const options = await act('passkey-options', { purpose: 'register', csrf: first.csrf }, first.cookie);
      const { challenge } = optionsOf<{ challenge: string }>(options);
      const stolen = await act(
        'passkey-register',
        { csrf: second.csrf, name: 'Phone', response: JSON.stringify(registration('cred-2', challenge)) },
        second.cookie,
      );
      expect(stolen).toEqual({ kind: 'json', status: 400, body: { success: false, message: 'The passkey could not be added. Please try again.' } });
      // The same credential again is one passkey, not two.
      await expect(addPasskey(first.cookie!, first.csrf, 'cred-1')).resolves.toMatchObject({
        status: 400,
        body: { message: 'This passkey is registered already.' },
      });
      // A name over 60 characters is refused before any ceremony.
      await expect(addPasskey(first.cookie!, first.csrf, 'cred-3', 'x'.repeat(61))).resolves.toMatchObject({ status: 400 });
      await expect(count(store.sql, 'admin_passkeys')).resolves.toBe(1);
      const audit = await store.sql.all<{ action: string; detail: string; actor_name: string }>(
        "SELECT action, detail, actor_name FROM admin_audit WHERE action = 'passkey-added'",
      );
      expect(audit).toEqual([{ action: 'passkey-added', detail: 'Ada’s laptop', actor_name: expect.stringContaining('Ada') }]);
    });

    test('a passkey signs its person in: a passkey session, the counter and last use stored, the audit naming both; the same answer twice is refused', async () => {
      const { store, admin, ada, act, signInAda, addPasskey, signInChallenge } = await build();
      const { cookie, csrf } = await signInAda();
      await addPasskey(cookie!, csrf, 'cred-1', 'Laptop');
      const challenge = await signInChallenge();
      const answer = JSON.stringify(assertion('cred-1', challenge, ada.userHandle, 7));
      const signedIn = await act('passkey-sign-in', { response: answer });
      expect(signedIn).toEqual({
        kind: 'json',
        status: 200,
        body: { success: true, location: '/admin' },
        cookie: expect.stringMatching(/^__Host-admin_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure$/),
      });
      const resumed = await admin.sessions.resume(cookieOf(signedIn)!.split('=')[1]);
      expect(resumed.ok && [resumed.session.actor.id, resumed.session.actor.stage, resumed.session.method]).toEqual([ada.id, 'full', 'passkey']);
      const row = await store.sql.get<{ counter: number | string; last_used_at: string }>('SELECT counter, last_used_at FROM admin_passkeys WHERE id = ?', [
        'cred-1',
      ]);
      expect([Number(row!.counter), row!.last_used_at]).toEqual([7, expect.any(String)]);
      const audit = await store.sql.all<{ detail: string; actor: string }>("SELECT detail, actor FROM admin_audit WHERE action = 'sign-in' ORDER BY id DESC");
      expect(audit[0]).toEqual({ detail: 'with passkey Laptop', actor: `person:${ada.id}` });
      // A replay of the same answer: its challenge was used.
      await expect(act('passkey-sign-in', { response: answer })).resolves.toEqual({
        kind: 'json',
        status: 403,
        body: { success: false, message: PASSKEY_REFUSED },
      });
      // A counter that did not move forward (a cloned authenticator) is refused by the library, with the stored counter.
      const again = await signInChallenge();
      await expect(act('passkey-sign-in', { response: JSON.stringify(assertion('cred-1', again, ada.userHandle, 7)) })).resolves.toMatchObject({ status: 403 });
    });

    test('two sign-ins with one passkey at the same moment (a cloned authenticator) store one counter: the one that lost the race is refused', async () => {
      const { store, ada, act, signInAda, addPasskey, signInChallenge, library } = await build();
      const { cookie, csrf } = await signInAda();
      await addPasskey(cookie!, csrf, 'cred-1');
      const verify = library.verifyAuthenticationResponse;
      // Another instance verified the same counter first and stored it while this one was verifying.
      library.verifyAuthenticationResponse = async (options) => {
        const verified = await verify(options);
        await store.sql.run("UPDATE admin_passkeys SET counter = ? WHERE id = 'cred-1'", [verified.authenticationInfo.newCounter]);
        return verified;
      };
      await expect(
        act('passkey-sign-in', { response: JSON.stringify(assertion('cred-1', await signInChallenge(), ada.userHandle, 3)) }),
      ).resolves.toMatchObject({
        status: 403,
        body: { message: PASSKEY_REFUSED },
      });
      library.verifyAuthenticationResponse = verify;
      await expect(
        act('passkey-sign-in', { response: JSON.stringify(assertion('cred-1', await signInChallenge(), ada.userHandle, 4)) }),
      ).resolves.toMatchObject({ status: 200 });
    });

    test('a passkey whose authenticator keeps no counter (always 0, as synced passkeys) signs in again and again', async () => {
      const { ada, act, signInAda, addPasskey, signInChallenge } = await build();
      const { cookie, csrf } = await signInAda();
      await addPasskey(cookie!, csrf, 'cred-1');
      for (let i = 0; i < 2; i++) {
        await expect(
          act('passkey-sign-in', { response: JSON.stringify(assertion('cred-1', await signInChallenge(), ada.userHandle, 0)) }),
        ).resolves.toMatchObject({
          status: 200,
        });
      }
    });

    test('an unknown passkey, a bad signature and another person’s user handle get one answer; a handle mismatch is refused before verifying', async () => {
      const { admin, ada, act, signInAda, addPasskey, signInChallenge, calls } = await build();
      const { cookie, csrf } = await signInAda();
      await addPasskey(cookie!, csrf, 'cred-1');
      const owner = (await admin.people.envOwner())!;
      const unknown = await act('passkey-sign-in', { response: JSON.stringify(assertion('cred-unknown', await signInChallenge(), ada.userHandle, 1)) });
      const badSignature = await act('passkey-sign-in', {
        response: JSON.stringify(assertion('cred-1', await signInChallenge(), ada.userHandle, 1, 'another key')),
      });
      const verifiedSoFar = calls.filter((call) => call === 'verify-authentication').length;
      const otherHandle = await act('passkey-sign-in', { response: JSON.stringify(assertion('cred-1', await signInChallenge(), owner.userHandle, 1)) });
      expect(calls.filter((call) => call === 'verify-authentication').length).toBe(verifiedSoFar);
      const notJson = await act('passkey-sign-in', { response: '{not json' });
      const refused = { kind: 'json', status: 403, body: { success: false, message: PASSKEY_REFUSED } };
      expect([unknown, badSignature, otherHandle, notJson]).toEqual([refused, refused, refused, refused]);
    });

    test('passkey sign-ins count against the client’s sign-in throttle', async () => {
      const { act } = await build();
      const outcomes: AdminOutcome[] = [];
      for (let i = 0; i < 11; i++) outcomes.push(await act('passkey-sign-in', { response: '{}' }));
      expect(outcomes.slice(0, 10).every((outcome) => outcome.kind === 'json' && outcome.status === 403)).toBe(true);
      expect(outcomes[10]).toMatchObject({ kind: 'json', status: 429, headers: { 'retry-after': expect.any(String) } });
    });

    test('a person renames and removes their own passkeys only', async () => {
      const { store, admin, act, signInAda, addPasskey } = await build();
      const { cookie, csrf } = await signInAda();
      await addPasskey(cookie!, csrf, 'cred-1');
      const owner = (await admin.people.envOwner())!;
      await store.sql.run(
        "INSERT INTO admin_passkeys (id, user_id, name, public_key, counter, device_type, backed_up, created_at) VALUES ('owners', ?, 'Owner’s', 'k', 0, 'singleDevice', 0, ?)",
        [owner.id, T0.toISOString()],
      );
      await expect(act('rename-passkey', { csrf, id: 'cred-1', name: 'Work laptop' }, cookie)).resolves.toEqual({
        kind: 'redirect',
        location: '/admin/account?passkey=renamed',
      });
      await expect(act('rename-passkey', { csrf, id: 'owners', name: 'Mine now' }, cookie)).resolves.toMatchObject({ kind: 'refused', status: 404 });
      await expect(act('remove-passkey', { csrf, id: 'owners' }, cookie)).resolves.toMatchObject({ kind: 'refused', status: 404 });
      await expect(act('remove-passkey', { csrf, id: 'cred-1' }, cookie)).resolves.toEqual({ kind: 'redirect', location: '/admin/account?passkey=removed' });
      const left = await store.sql.all<{ id: string; name: string }>('SELECT id, name FROM admin_passkeys');
      expect(left).toEqual([{ id: 'owners', name: 'Owner’s' }]);
      const audit = await store.sql.all<{ action: string; detail: string }>("SELECT action, detail FROM admin_audit WHERE action LIKE 'passkey-%' ORDER BY id");
      expect(audit).toEqual([
        { action: 'passkey-added', detail: 'Laptop' },
        { action: 'passkey-renamed', detail: 'Work laptop' },
        { action: 'passkey-removed', detail: 'Work laptop' },
      ]);
    });

    test('ADMIN_REQUIRE_PASSKEY: a right password without a passkey starts an enrolment, which can only add a passkey or sign out, then becomes full', async () => {
      const { admin, act, signInAda, addPasskey } = await build({ requirePasskey: true });
      const enrolment = await signInAda();
      expect(enrolment.location).toBe('/admin/account?enroll=1');
      expect(enrolment.session?.actor.stage).toBe('enroll');
      // Nothing but the passkey posts and signing out, not even what the role allows; told what to do instead.
      const enrolOnly = { kind: 'refused', status: 403, message: ENROLL_ONLY };
      await expect(act('retry', { csrf: enrolment.csrf, id: '1' }, enrolment.cookie)).resolves.toEqual(enrolOnly);
      await expect(act('export', { csrf: enrolment.csrf, what: 'messages', format: 'csv' }, enrolment.cookie)).resolves.toEqual(enrolOnly);
      const added = await addPasskey(enrolment.cookie!, enrolment.csrf, 'cred-1');
      expect(added).toMatchObject({
        kind: 'json',
        status: 200,
        body: { success: true, location: '/admin' },
        cookie: expect.stringMatching(/^__Host-admin_session=/),
      });
      // The enrolment's token ends; the new one is a full session.
      await expect(admin.sessions.resume(enrolment.cookie!.split('=')[1])).resolves.toMatchObject({ ok: false });
      const full = await admin.sessions.resume(cookieOf(added)!.split('=')[1]);
      expect(full.ok && [full.session.actor.stage, full.session.method]).toEqual(['full', 'password']);
    });

    test('an enrolment ended while its passkey is being added (a reset, a removal on another instance) begins no full session', async () => {
      const { store, admin, signInAda, addPasskey, library } = await build({ requirePasskey: true });
      const enrolment = await signInAda();
      // The other instance's reset lands between this post's session check and its end.
      const verify = library.verifyRegistrationResponse;
      library.verifyRegistrationResponse = async (options) => {
        await store.sql.run('DELETE FROM admin_person_sessions');
        return verify(options);
      };
      const added = await addPasskey(enrolment.cookie!, enrolment.csrf, 'cred-1');
      expect(added).toEqual({ kind: 'json', status: 403, body: { success: false, message: 'Your session has ended. Please sign in again.' } });
      await expect(store.sql.all('SELECT token_hash FROM admin_person_sessions')).resolves.toEqual([]);
      await expect(admin.sessions.resume(enrolment.cookie!.split('=')[1])).resolves.toMatchObject({ ok: false });
    });

    test('ADMIN_REQUIRE_PASSKEY: a right password of a person who has a passkey is refused with "sign in with your passkey"', async () => {
      const { store, act, ada, signInAda } = await build({ requirePasskey: true });
      await store.sql.run(
        "INSERT INTO admin_passkeys (id, user_id, name, public_key, counter, device_type, backed_up, created_at) VALUES ('cred-1', ?, 'Laptop', 'k', 0, 'multiDevice', 1, ?)",
        [ada.id, T0.toISOString()],
      );
      const before = await count(store.sql, 'admin_person_sessions');
      await expect(signInAda()).resolves.toEqual({ location: '/admin?failed=passkey', cookie: undefined, csrf: '' });
      await expect(count(store.sql, 'admin_person_sessions')).resolves.toBe(before);
      // A wrong password is still the wrong password: nothing says whether a passkey exists.
      await expect(act('sign-in', { email: 'ada@example.org', password: 'wrong' })).resolves.toEqual({ kind: 'redirect', location: '/admin?failed=email' });
    });

    test('an invitation followed with no password (decision 0298) enrols: the passkey added makes the session full, and then signs in', async () => {
      const { admin, act, addPasskey, signInChallenge } = await build();
      const made = await admin.team.links.invite({ email: 'pia@example.org', role: 'reader', forms: ['quote'], createdBy: 'cli' }, T0);
      if (!('token' in made)) throw new Error('not invited');
      const accepted = await act('accept-link', { token: made.token, name: 'Pia', password: '' });
      expect(accepted).toMatchObject({ kind: 'redirect', location: '/admin/account?enroll=1' });
      const enrolment = await admin.sessions.resume(cookieOf(accepted)!.split('=')[1]);
      if (!enrolment.ok) throw new Error('no enrolment');
      expect(enrolment.session.actor.stage).toBe('enroll');
      const pia = (await admin.people.findByEmail('pia@example.org'))!;
      expect(pia.passwordHash).toBeNull();
      const added = await addPasskey(cookieOf(accepted)!, enrolment.session.csrfToken, 'cred-pia', 'Phone');
      expect(added).toMatchObject({ kind: 'json', status: 200, body: { success: true, location: '/admin' } });
      const full = await admin.sessions.resume(cookieOf(added)!.split('=')[1]);
      expect(full.ok && [full.session.actor.stage, full.session.method]).toEqual(['full', 'link']);
      const challenge = await signInChallenge();
      const signedIn = await act('passkey-sign-in', { response: JSON.stringify(assertion('cred-pia', challenge, pia.userHandle, 1)) });
      expect(signedIn).toMatchObject({ kind: 'json', status: 200, body: { success: true, location: '/admin' } });
    });

    test('without a library of its own the admin loads @simplewebauthn/server at the first ceremony: WebAuthn’s options, the challenge kept', async () => {
      const { store, act } = await build({}, true);
      const options = await act('passkey-options', { purpose: 'authenticate' });
      expect(options).toMatchObject({
        kind: 'json',
        status: 200,
        body: { success: true, options: { rpId: 'site.test', allowCredentials: [], userVerification: 'required', timeout: CHALLENGE_TTL_MS } },
      });
      const { challenge } = optionsOf<{ challenge: string }>(options);
      expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
      await expect(count(store.sql, 'admin_webauthn_challenges')).resolves.toBe(1);
      // A made-up answer is refused by the real verification too, with the one answer.
      const { ada } = {
        ada: (await store.sql.get<{ id: number | string; user_handle: string }>("SELECT id, user_handle FROM admin_users WHERE email = 'ada@example.org'"))!,
      };
      await store.sql.run(
        "INSERT INTO admin_passkeys (id, user_id, name, public_key, counter, device_type, backed_up, created_at) VALUES ('cred-1', ?, 'Laptop', ?, 0, 'multiDevice', 1, ?)",
        [Number(ada.id), b64('not a COSE key'), T0.toISOString()],
      );
      await expect(act('passkey-sign-in', { response: JSON.stringify(assertion('cred-1', challenge, ada.user_handle, 1)) })).resolves.toEqual({
        kind: 'json',
        status: 403,
        body: { success: false, message: PASSKEY_REFUSED },
      });
    });

    test('without a usable PUBLIC_URL passkeys are off: every passkey post is 404', async () => {
      const { act, signInAda } = await build({ publicUrl: 'https://192.0.2.10' });
      const { cookie, csrf } = await signInAda();
      await expect(act('passkey-options', { purpose: 'authenticate' })).resolves.toMatchObject({ kind: 'json', status: 404 });
      await expect(act('passkey-sign-in', { response: '{}' })).resolves.toMatchObject({ kind: 'json', status: 404 });
      await expect(act('passkey-register', { csrf, response: '{}' }, cookie)).resolves.toMatchObject({ kind: 'json', status: 404 });
      await expect(act('remove-passkey', { csrf, id: 'x' }, cookie)).resolves.toMatchObject({ kind: 'refused', status: 404 });
    });

    test('a sign-in’s options are public but limited to 30 per client in 15 minutes', async () => {
      const { act } = await build();
      for (let i = 0; i < 30; i++) await expect(act('passkey-options', { purpose: 'authenticate' })).resolves.toMatchObject({ kind: 'json', status: 200 });
      await expect(act('passkey-options', { purpose: 'authenticate' })).resolves.toMatchObject({
        kind: 'json',
        status: 429,
        headers: { 'retry-after': expect.any(String) },
      });
    });
  });
});
