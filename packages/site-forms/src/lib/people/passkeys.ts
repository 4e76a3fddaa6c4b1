import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { requireWhenNeeded } from '../lazy.ts';
import type { Sql } from '../sql/sql.ts';
import { CHALLENGE_TTL_MS, type ChallengeOwner, type Challenges, createChallenges } from './challenges.ts';
import type { RelyingParty } from './relying-party.ts';
import type { Person } from './store.ts';

// Passkeys (issue 42, plan section 6; decision 0290): each person's WebAuthn credentials in
// `admin_passkeys`, and the two ceremonies over @simplewebauthn/server, loaded at the first one.

export { type RelyingParty, relyingPartyId, relyingPartyOf } from './relying-party.ts';

/** The four functions of @simplewebauthn/server the ceremonies use; the tests bring their own verify functions. */
export type WebAuthnLibrary = Pick<
  typeof import('@simplewebauthn/server'),
  'generateRegistrationOptions' | 'verifyRegistrationResponse' | 'generateAuthenticationOptions' | 'verifyAuthenticationResponse'
>;

/** The longest name of a passkey, in characters. */
export const PASSKEY_NAME_MAX = 60;

/** A passkey as its person's account page lists it; the public key and counter stay in the store. */
export type Passkey = {
  /** The credential's id, base64url. */
  id: string;
  userId: number;
  name: string;
  transports: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
};

/** Why adding a passkey was refused: the ceremony failed (wrong challenge, origin, signature…) or the credential is here already. */
export type RegisterRefusal = 'refused' | 'duplicate';

/** The passkeys of the admin's people and the ceremonies that add them and sign in with them. */
export interface Passkeys {
  /** The site the passkeys belong to (PUBLIC_URL's domain). */
  readonly relyingParty: RelyingParty;
  /** A person's passkeys, oldest first. */
  list(userId: number): Promise<Passkey[]>;
  /** How many passkeys a person has (ADMIN_REQUIRE_PASSKEY asks). */
  count(userId: number): Promise<number>;
  /** Renames one of the person's passkeys; false when they have none of that id. */
  rename(userId: number, id: string, name: string): Promise<boolean>;
  /** Removes one of the person's passkeys; false when they have none of that id. */
  remove(userId: number, id: string): Promise<Passkey | undefined>;
  /** Options for signing in with any passkey of this site (discoverable credentials), the challenge kept for 5 minutes. */
  authenticationOptions(now: Date): Promise<PublicKeyCredentialRequestOptionsJSON>;
  /** Options for adding a passkey to `person`, from the session `sessionHash`: only that session can answer them. */
  registrationOptions(person: Person, sessionHash: string, now: Date): Promise<PublicKeyCredentialCreationOptionsJSON>;
  /**
   * The person a passkey's answer signs in, its counter and last use stored; or `{ ok: false }`,
   * one answer for an unknown credential, a user handle that is not its person's, a used or
   * expired challenge and a bad signature.
   */
  signIn(response: unknown, now: Date): Promise<{ ok: true; person: Person; passkey: Passkey } | { ok: false }>;
  /** Verifies a registration answered from the session `sessionHash` of `person` and stores the passkey named `name`. */
  register(
    person: Person,
    sessionHash: string,
    response: unknown,
    name: string,
    now: Date,
  ): Promise<{ ok: true; passkey: Passkey } | { ok: false; reason: RegisterRefusal }>;
  /** The challenges, for the housekeeping's sweep. */
  readonly challenges: Challenges;
}

/** What the passkeys are built from; `library` only from the tests (the real one is loaded at the first ceremony). */
export type PasskeyParts = {
  sql: Sql;
  relyingParty: RelyingParty;
  /** Finds the person of a passkey by id. */
  findPerson(id: number): Promise<Person | undefined>;
  library?: () => Promise<WebAuthnLibrary>;
};

/**
 * A passkey's name as typed: trimmed, runs of white space and control characters as one space;
 * empty is "Passkey"; `undefined` when longer than 60 characters.
 */
export function passkeyName(value: unknown): string | undefined {
  const name = (typeof value === 'string' ? value : '').replace(/[\s\p{Cc}]+/gu, ' ').trim();
  if ([...name].length > PASSKEY_NAME_MAX) return undefined;
  return name === '' ? 'Passkey' : name;
}

type Row = {
  id: string;
  user_id: number | string;
  name: string;
  public_key: string;
  counter: number | string;
  transports: string | null;
  created_at: string;
  last_used_at: string | null;
};

const COLUMNS = 'id, user_id, name, public_key, counter, transports, created_at, last_used_at';

/** The largest credential id accepted, in base64url characters (WebAuthn allows 1023 bytes). */
const CREDENTIAL_ID_MAX = 1366;

const loadLibrary = async (): Promise<WebAuthnLibrary> => requireWhenNeeded('@simplewebauthn/server') as WebAuthnLibrary;

/**
 * The passkeys over the store's SQL for the relying party of PUBLIC_URL.
 * Hint: a challenge is consumed inside the library's verification (its `expectedChallenge`
 * predicate), by one conditional DELETE, so an answer succeeds once on every instance. The user
 * handle in a sign-in's answer is the person's `user_handle` (32 random bytes), never their id or
 * email, and must match the credential's person.
 */
export function createPasskeys(parts: PasskeyParts): Passkeys {
  const { sql, relyingParty, findPerson } = parts;
  const library = parts.library ?? loadLibrary;
  const challenges = createChallenges(sql);
  const rowOf = (id: string) => sql.get<Row>(`SELECT ${COLUMNS} FROM admin_passkeys WHERE id = ?`, [id]);

  /** Verifies with the library; any refusal of it is `false`, but a failure of the database while consuming the challenge is thrown. */
  const verifying = async <T>(
    work: (consume: (challenge: string) => Promise<boolean>) => Promise<T>,
    purpose: 'authenticate' | 'register',
    owner: ChallengeOwner | undefined,
    now: Date,
  ) => {
    let storeFailure: unknown;
    const consume = async (challenge: string) => {
      try {
        return await challenges.consume(challenge, purpose, owner, now);
      } catch (error) {
        storeFailure = error;
        throw error;
      }
    };
    try {
      return await work(consume);
    } catch {
      // The library throws for every refusal (origin, challenge, signature, counter…): one answer for all.
      if (storeFailure !== undefined) throw storeFailure;
      return undefined;
    }
  };

  return {
    relyingParty,
    challenges,
    async list(userId) {
      const rows = await sql.all<Row>(`SELECT ${COLUMNS} FROM admin_passkeys WHERE user_id = ? ORDER BY created_at, id`, [userId]);
      return rows.map(toPasskey);
    },
    async count(userId) {
      const row = await sql.get<{ n: number | string }>('SELECT count(*) AS n FROM admin_passkeys WHERE user_id = ?', [userId]);
      return Number(row?.n ?? 0);
    },
    async rename(userId, id, name) {
      const { changes } = await sql.run('UPDATE admin_passkeys SET name = ? WHERE id = ? AND user_id = ?', [name, id, userId]);
      return changes === 1;
    },
    async remove(userId, id) {
      const row = await sql.get<Row>(`SELECT ${COLUMNS} FROM admin_passkeys WHERE id = ? AND user_id = ?`, [id, userId]);
      if (!row) return undefined;
      const { changes } = await sql.run('DELETE FROM admin_passkeys WHERE id = ? AND user_id = ?', [id, userId]);
      return changes === 1 ? toPasskey(row) : undefined;
    },
    async authenticationOptions(now) {
      const { generateAuthenticationOptions } = await library();
      // No credentials listed: the browser offers this site's discoverable ones (and conditional UI can).
      const options = await generateAuthenticationOptions({
        rpID: relyingParty.id,
        allowCredentials: [],
        userVerification: 'required',
        timeout: CHALLENGE_TTL_MS,
      });
      await challenges.issue(options.challenge, 'authenticate', undefined, now);
      return options;
    },
    async registrationOptions(person, sessionHash, now) {
      const { generateRegistrationOptions } = await library();
      const theirs = await sql.all<Pick<Row, 'id' | 'transports'>>('SELECT id, transports FROM admin_passkeys WHERE user_id = ?', [person.id]);
      const options = await generateRegistrationOptions({
        rpName: relyingParty.name,
        rpID: relyingParty.id,
        userName: person.email ?? 'owner',
        userID: new Uint8Array(Buffer.from(person.userHandle, 'base64url')),
        userDisplayName: person.name || person.email || 'Owner',
        attestationType: 'none',
        timeout: CHALLENGE_TTL_MS,
        // The same authenticator twice would be one passkey under two names.
        excludeCredentials: theirs.map((row) => ({ id: row.id, transports: transportsOf(row.transports) as never })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      });
      await challenges.issue(options.challenge, 'register', { userId: person.id, sessionHash }, now);
      return options;
    },
    async signIn(response, now) {
      const refused = { ok: false } as const;
      const answer = authenticationAnswer(response);
      if (!answer) return refused;
      const row = await rowOf(answer.id);
      if (!row) return refused;
      const person = await findPerson(Number(row.user_id));
      // A user handle is the person's random one: another's (or none) means the answer is not theirs.
      if (!person || answer.response.userHandle !== person.userHandle) return refused;
      const { verifyAuthenticationResponse } = await library();
      const verified = await verifying(
        (consume) =>
          verifyAuthenticationResponse({
            response: answer,
            expectedChallenge: consume,
            expectedOrigin: relyingParty.origin,
            expectedRPID: relyingParty.id,
            credential: {
              id: row.id,
              publicKey: new Uint8Array(Buffer.from(row.public_key, 'base64url')),
              counter: Number(row.counter),
              transports: transportsOf(row.transports) as never,
            },
            requireUserVerification: true,
          }),
        'authenticate',
        undefined,
        now,
      );
      if (!verified?.verified) return refused;
      const { newCounter } = verified.authenticationInfo;
      // The counter only moves forward (0 is an authenticator that keeps none, as synced passkeys
      // do): an answer that verified against a counter another sign-in has since passed is a
      // clone's, refused as the library refuses one it sees.
      const { changes } = await sql.run('UPDATE admin_passkeys SET counter = ?, last_used_at = ? WHERE id = ? AND (counter < ? OR ? = 0)', [
        newCounter,
        now.toISOString(),
        row.id,
        newCounter,
        newCounter,
      ]);
      if (changes !== 1) return refused;
      return { ok: true, person, passkey: toPasskey({ ...row, counter: newCounter, last_used_at: now.toISOString() }) };
    },
    async register(person, sessionHash, response, name, now) {
      if (!registrationAnswer(response)) return { ok: false, reason: 'refused' };
      const { verifyRegistrationResponse } = await library();
      const verified = await verifying(
        (consume) =>
          verifyRegistrationResponse({
            response,
            expectedChallenge: consume,
            expectedOrigin: relyingParty.origin,
            expectedRPID: relyingParty.id,
            requireUserVerification: true,
          }),
        'register',
        { userId: person.id, sessionHash },
        now,
      );
      if (!verified?.verified) return { ok: false, reason: 'refused' };
      const { credential, credentialDeviceType, credentialBackedUp, aaguid } = verified.registrationInfo;
      const row: Row = {
        id: credential.id,
        user_id: person.id,
        name,
        public_key: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports: credential.transports ? JSON.stringify(credential.transports) : null,
        created_at: now.toISOString(),
        last_used_at: null,
      };
      const { changes } = await sql.run(
        `INSERT INTO admin_passkeys (id, user_id, name, public_key, counter, transports, device_type, backed_up, aaguid, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        [
          row.id,
          person.id,
          name,
          row.public_key,
          row.counter,
          row.transports,
          credentialDeviceType,
          credentialBackedUp ? 1 : 0,
          aaguid ?? null,
          row.created_at,
        ],
      );
      return changes === 1 ? { ok: true, passkey: toPasskey(row) } : { ok: false, reason: 'duplicate' };
    },
  };
}

/** A sign-in's answer as the browser library sends it, with the parts read before verifying; anything else is `undefined`. */
function authenticationAnswer(value: unknown): (AuthenticationResponseJSON & { response: { userHandle: string } }) | undefined {
  if (!isObject(value) || !isCredentialId(value.id) || value.type !== 'public-key' || !isObject(value.response)) return undefined;
  const { userHandle, clientDataJSON, authenticatorData, signature } = value.response;
  if (typeof userHandle !== 'string' || typeof clientDataJSON !== 'string' || typeof authenticatorData !== 'string' || typeof signature !== 'string')
    return undefined;
  return value as unknown as AuthenticationResponseJSON & { response: { userHandle: string } };
}

/** Whether a registration's answer has the shape the library reads; it checks the rest. */
function registrationAnswer(value: unknown): value is RegistrationResponseJSON {
  if (!isObject(value) || !isCredentialId(value.id) || value.type !== 'public-key' || !isObject(value.response)) return false;
  return typeof value.response.clientDataJSON === 'string' && typeof value.response.attestationObject === 'string';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCredentialId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= CREDENTIAL_ID_MAX && /^[A-Za-z0-9_-]+$/.test(value);
}

function transportsOf(text: string | null): string[] {
  if (text === null) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
}

function toPasskey(row: Row): Passkey {
  return {
    id: row.id,
    userId: Number(row.user_id),
    name: row.name,
    transports: transportsOf(row.transports),
    createdAt: new Date(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : new Date(row.last_used_at),
  };
}
