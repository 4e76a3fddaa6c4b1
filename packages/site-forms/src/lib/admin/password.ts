import { toolCommand } from '../commands.ts';
import * as crypto from 'node:crypto';

/** The command that prints a hash, as the owner types it where the site runs (decision 0205). */
const HASH_COMMAND = toolCommand('admin', 'hash-password', { silent: true });

/** The shortest password `hash-password` accepts, in characters (OWASP ASVS 2.1.1). */
export const MIN_PASSWORD_LENGTH = 12;

/** The longest password accepted, in characters: a bound on the work one sign-in can cause. */
export const MAX_PASSWORD_LENGTH = 1024;

/**
 * Argon2id at OWASP's first recommendation (19 MiB, 2 passes, 1 lane), written in the PHC
 * string format that the reference implementation and every argon2 library read.
 */
export const ARGON2ID = { memory: 19_456, passes: 2, parallelism: 1, tagLength: 32 } as const;

/** scrypt at OWASP's recommendation (N = 2^17, r = 8, p = 1), for a Node without argon2. */
export const SCRYPT = { logN: 17, r: 8, p: 1, keyLength: 32 } as const;

/** A password hash read from `ADMIN_PASSWORD_HASH`: the algorithm, its parameters, salt and key. */
export type PasswordHash =
  | { algorithm: 'argon2id'; memory: number; passes: number; parallelism: number; salt: Buffer; key: Buffer }
  | { algorithm: 'scrypt'; logN: number; r: number; p: number; salt: Buffer; key: Buffer };

/** Whether this Node can compute argon2id (`crypto.argon2`, Node 24.7 and later). */
export function hasArgon2(): boolean {
  return typeof (crypto as { argon2?: unknown }).argon2 === 'function';
}

/** Why a password cannot be used, or `undefined` when it can. */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) return `The password must have at least ${MIN_PASSWORD_LENGTH} characters (it has ${length}).`;
  if (length > MAX_PASSWORD_LENGTH) return `The password must have at most ${MAX_PASSWORD_LENGTH} characters.`;
  return undefined;
}

/**
 * Hashes a password with a fresh 16-byte salt: argon2id where Node has it, else scrypt.
 * Hint: `useArgon2` exists for the tests of the scrypt path.
 */
export async function hashPassword(password: string, useArgon2 = hasArgon2()): Promise<string> {
  const salt = crypto.randomBytes(16);
  if (useArgon2) {
    const key = await argon2id(password, { algorithm: 'argon2id', ...ARGON2ID, salt, key: Buffer.alloc(ARGON2ID.tagLength) });
    const { memory, passes, parallelism } = ARGON2ID;
    return `$argon2id$v=19$m=${memory},t=${passes},p=${parallelism}$${b64(salt)}$${b64(key)}`;
  }
  const key = await scrypt(password, { algorithm: 'scrypt', logN: SCRYPT.logN, r: SCRYPT.r, p: SCRYPT.p, salt, key: Buffer.alloc(SCRYPT.keyLength) });
  return `$scrypt$ln=${SCRYPT.logN},r=${SCRYPT.r},p=${SCRYPT.p}$${b64(salt)}$${b64(key)}`;
}

// Bounds on what a configured hash may ask of each sign-in, so a pasted hash with absurd
// parameters stops the start instead of exhausting memory at the first sign-in.
const ARGON2_LIMITS = { memory: [8, 1_048_576], passes: [1, 100], parallelism: [1, 16] } as const;
const SCRYPT_LIMITS = { logN: [10, 20], r: [1, 32], p: [1, 16] } as const;

const ARGON2_FORMAT = /^\$argon2id\$v=19\$m=(\d{1,8}),t=(\d{1,3}),p=(\d{1,2})\$([A-Za-z0-9+/]{11,64})\$([A-Za-z0-9+/]{22,128})$/;
const SCRYPT_FORMAT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]{11,64})\$([A-Za-z0-9+/]{22,128})$/;

/**
 * Reads a hash as `hash-password` prints it (`$argon2id$v=19$m=…,t=…,p=…$salt$key` or
 * `$scrypt$ln=…,r=…,p=…$salt$key`), or says what is wrong with it without repeating it.
 */
export function parsePasswordHash(text: string, argon2Available = hasArgon2()): { ok: true; hash: PasswordHash } | { ok: false; problem: string } {
  const argon = ARGON2_FORMAT.exec(text.trim());
  if (argon) {
    const [memory, passes, parallelism] = [Number(argon[1]), Number(argon[2]), Number(argon[3])];
    if (
      !within(memory, ARGON2_LIMITS.memory) ||
      !within(passes, ARGON2_LIMITS.passes) ||
      !within(parallelism, ARGON2_LIMITS.parallelism) ||
      memory < 8 * parallelism
    ) {
      return { ok: false, problem: `has argon2id parameters out of range (make a new one with ${HASH_COMMAND})` };
    }
    if (!argon2Available) {
      return {
        ok: false,
        problem: `is an argon2id hash, which needs Node 24.7 or later (this is ${process.version}); make a scrypt one here with ${HASH_COMMAND}`,
      };
    }
    return { ok: true, hash: { algorithm: 'argon2id', memory, passes, parallelism, salt: unb64(argon[4]!), key: unb64(argon[5]!) } };
  }
  const s = SCRYPT_FORMAT.exec(text.trim());
  if (s) {
    const [logN, r, p] = [Number(s[1]), Number(s[2]), Number(s[3])];
    if (!within(logN, SCRYPT_LIMITS.logN) || !within(r, SCRYPT_LIMITS.r) || !within(p, SCRYPT_LIMITS.p)) {
      return { ok: false, problem: `has scrypt parameters out of range (make a new one with ${HASH_COMMAND})` };
    }
    return { ok: true, hash: { algorithm: 'scrypt', logN, r, p, salt: unb64(s[4]!), key: unb64(s[5]!) } };
  }
  return { ok: false, problem: `must be a hash printed by ${HASH_COMMAND} (it starts with $argon2id$ or $scrypt$)` };
}

/**
 * Whether `password` is the one `hash` was made from, comparing the derived keys in
 * constant time.
 */
export async function verifyPassword(password: string, hash: PasswordHash): Promise<boolean> {
  // Too long a password costs the hash function time for nothing: it cannot be right.
  if (password.length > MAX_PASSWORD_LENGTH * 4) return false;
  const derived = hash.algorithm === 'argon2id' ? await argon2id(password, hash) : await scrypt(password, hash);
  return derived.length === hash.key.length && crypto.timingSafeEqual(derived, hash.key);
}

function argon2id(password: string, hash: Extract<PasswordHash, { algorithm: 'argon2id' }>): Promise<Buffer> {
  const parameters = {
    message: password,
    nonce: hash.salt,
    memory: hash.memory,
    passes: hash.passes,
    parallelism: hash.parallelism,
    tagLength: hash.key.length,
  };
  return new Promise((resolve, reject) => crypto.argon2('argon2id', parameters, (error, key) => (error ? reject(error) : resolve(key))));
}

function scrypt(password: string, hash: Extract<PasswordHash, { algorithm: 'scrypt' }>): Promise<Buffer> {
  const N = 2 ** hash.logN;
  // Node refuses more than 32 MiB by default; N = 2^17 with r = 8 needs 128 MiB.
  const options = { N, r: hash.r, p: hash.p, maxmem: 256 * N * hash.r };
  return new Promise((resolve, reject) => crypto.scrypt(password, hash.salt, hash.key.length, options, (error, key) => (error ? reject(error) : resolve(key))));
}

function within(value: number, [min, max]: readonly [number, number]): boolean {
  return value >= min && value <= max;
}

// The PHC string format: standard base64 without padding.
function b64(bytes: Buffer): string {
  return bytes.toString('base64').replace(/=+$/, '');
}

function unb64(text: string): Buffer {
  return Buffer.from(text, 'base64');
}

/** How many password checks run at once; the others wait their turn. */
export const CONCURRENT_CHECKS = 2;

/** How many sign-ins may wait for a password check; past it, an unknown browser is refused at once. */
export const WAITING_CHECKS = 8;

/**
 * A password check: right, wrong, or `busy` when the queue is full and the browser is not one that
 * signed in before. `hash` is the hash to verify against: a person's own, `env` for
 * ADMIN_PASSWORD_HASH (the first owner's; the default), or `none` (an address nobody has, a
 * person with a passkey only, an empty password). Without a real one, the password is verified against
 * the check's dummy all the same, and is wrong: every sign-in costs one verification.
 */
export type PasswordCheck = (password: string, options?: { known?: boolean; hash?: PasswordHash | 'env' | 'none' }) => Promise<boolean | 'busy'>;

/**
 * A hash no password matches (a random key), with the parameters `hashPassword` gives a person's
 * password: verifying against it costs what verifying a person's costs, so the time of a wrong
 * sign-in says nothing about whether the account exists.
 */
export function dummyHash(useArgon2 = hasArgon2()): PasswordHash {
  const salt = crypto.randomBytes(16);
  if (useArgon2) {
    const { memory, passes, parallelism, tagLength } = ARGON2ID;
    return { algorithm: 'argon2id', memory, passes, parallelism, salt, key: crypto.randomBytes(tagLength) };
  }
  return { algorithm: 'scrypt', logN: SCRYPT.logN, r: SCRYPT.r, p: SCRYPT.p, salt, key: crypto.randomBytes(SCRYPT.keyLength) };
}

/**
 * The one queue of password checks of the process, whoever signs in: each call verifies exactly
 * once, against the hash it names (ADMIN_PASSWORD_HASH is `envHash`), or against `dummy` (made
 * once, at start) when there is none; at most `max` at a time, with at most `maxWaiting` waiting
 * their turn.
 * Hint: each argon2id check takes 19 MiB; without a bound, a flood of sign-ins from many
 * addresses (each under its own throttle) could take the machine's memory, and the owner would
 * wait behind all of it. A browser that signed in before (`known`, a signed device cookie)
 * goes to the front of the queue and is never refused.
 */
export function createPasswordCheck(
  envHash: PasswordHash | undefined,
  max = CONCURRENT_CHECKS,
  verify: (password: string, hash: PasswordHash) => Promise<boolean> = verifyPassword,
  maxWaiting = WAITING_CHECKS,
  dummy: PasswordHash = dummyHash(),
): PasswordCheck {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (password, { known = false, hash = 'env' } = {}) => {
    if (running >= max) {
      if (!known && waiting.length >= maxWaiting) return 'busy';
      await new Promise<void>((turn) => (known ? waiting.unshift(turn) : waiting.push(turn)));
    }
    running++;
    try {
      const real = hash === 'env' ? envHash : hash === 'none' ? undefined : hash;
      // Verified even without a real hash, so that no answer comes sooner than another.
      const matches = await verify(password, real ?? dummy);
      return real !== undefined && matches;
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}
