import { describe, expect, test } from 'vitest';
import {
  createPasswordCheck,
  hasArgon2,
  hashPassword,
  parsePasswordHash,
  passwordProblem,
  verifyPassword,
} from '../../../packages/site-forms/src/lib/admin/password.ts';

// The reference implementation's own vectors (phc-winner-argon2, src/test.c): password "password", salt "somesalt".
const REFERENCE_ARGON2ID = '$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4';
// RFC 7914 section 12: scrypt("pleaseletmein", "SodiumChloride", N=16384, r=8, p=1, 64 bytes).
const RFC7914_KEY = '7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887';
const REFERENCE_SCRYPT = `$scrypt$ln=14,r=8,p=1$U29kaXVtQ2hsb3JpZGU$${Buffer.from(RFC7914_KEY, 'hex').toString('base64').replace(/=+$/, '')}`;

function parsed(text: string) {
  const result = parsePasswordHash(text, true);
  if (!result.ok) throw new Error(result.problem);
  return result.hash;
}

describe('a password the owner chooses', () => {
  test.each([
    ['', 'The password must have at least 12 characters (it has 0).'],
    ['elevenchars', 'The password must have at least 12 characters (it has 11).'],
    ['ünïcødé-10ch', undefined],
    ['twelve chars', undefined],
    ['🐈🐈🐈🐈🐈🐈🐈🐈🐈🐈🐈', 'The password must have at least 12 characters (it has 11).'],
    ['x'.repeat(1024), undefined],
    ['x'.repeat(1025), 'The password must have at most 1024 characters.'],
  ])('%j is judged %j', (password, problem) => {
    expect(passwordProblem(password)).toBe(problem);
  });
});

describe('hashing and verifying', () => {
  test('a fresh argon2id hash names OWASP parameters and verifies only its own password', async () => {
    const hash = await hashPassword('correct horse battery', true);
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    await expect(verifyPassword('correct horse battery', parsed(hash))).resolves.toBe(true);
    await expect(verifyPassword('correct horse batterY', parsed(hash))).resolves.toBe(false);
  });

  test('a fresh scrypt hash names OWASP parameters and verifies only its own password', async () => {
    const hash = await hashPassword('correct horse battery', false);
    expect(hash).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    await expect(verifyPassword('correct horse battery', parsed(hash))).resolves.toBe(true);
    await expect(verifyPassword('correct horse battery ', parsed(hash))).resolves.toBe(false);
  });

  test('two hashes of one password differ (a fresh salt each time)', async () => {
    const [a, b] = await Promise.all([hashPassword('the same password', true), hashPassword('the same password', true)]);
    expect(a).not.toBe(b);
  });

  test('a hash made by the argon2 reference implementation verifies', async () => {
    await expect(verifyPassword('password', parsed(REFERENCE_ARGON2ID))).resolves.toBe(true);
    await expect(verifyPassword('passwore', parsed(REFERENCE_ARGON2ID))).resolves.toBe(false);
  });

  test("RFC 7914's scrypt vector verifies", async () => {
    await expect(verifyPassword('pleaseletmein', parsed(REFERENCE_SCRYPT))).resolves.toBe(true);
    await expect(verifyPassword('pleaseletmeout', parsed(REFERENCE_SCRYPT))).resolves.toBe(false);
  });

  test('an absurdly long guess is refused without hashing it', async () => {
    await expect(verifyPassword('p'.repeat(5000), parsed(REFERENCE_ARGON2ID))).resolves.toBe(false);
  });
});

describe('reading ADMIN_PASSWORD_HASH', () => {
  const formatProblem = 'must be a hash printed by npm run --silent admin -- hash-password (it starts with $argon2id$ or $scrypt$)';
  const argonRange = 'has argon2id parameters out of range (make a new one with npm run --silent admin -- hash-password)';
  const scryptRange = 'has scrypt parameters out of range (make a new one with npm run --silent admin -- hash-password)';
  const key = 'nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4';
  test.each([
    ['a password pasted by mistake', 'my secret password', formatProblem],
    ['a bcrypt hash', '$2b$12$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ012', formatProblem],
    ['argon2i, not argon2id', `$argon2i$v=19$m=256,t=2,p=1$c29tZXNhbHQ$${key}`, formatProblem],
    ['an old argon2 version', `$argon2id$v=16$m=256,t=2,p=1$c29tZXNhbHQ$${key}`, formatProblem],
    ['a cut-off key', '$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EO', formatProblem],
    ['memory below 8 KiB', `$argon2id$v=19$m=7,t=2,p=1$c29tZXNhbHQ$${key}`, argonRange],
    ['memory over 1 GiB', `$argon2id$v=19$m=1048577,t=2,p=1$c29tZXNhbHQ$${key}`, argonRange],
    ['no passes', `$argon2id$v=19$m=256,t=0,p=1$c29tZXNhbHQ$${key}`, argonRange],
    ['101 passes', `$argon2id$v=19$m=256,t=101,p=1$c29tZXNhbHQ$${key}`, argonRange],
    ['17 lanes', `$argon2id$v=19$m=1024,t=2,p=17$c29tZXNhbHQ$${key}`, argonRange],
    ['less memory than 8 KiB per lane', `$argon2id$v=19$m=31,t=2,p=4$c29tZXNhbHQ$${key}`, argonRange],
    ['scrypt with N = 2^9', `$scrypt$ln=9,r=8,p=1$c29tZXNhbHQ$${key}`, scryptRange],
    ['scrypt with N = 2^21', `$scrypt$ln=21,r=8,p=1$c29tZXNhbHQ$${key}`, scryptRange],
    ['scrypt with r = 33', `$scrypt$ln=14,r=33,p=1$c29tZXNhbHQ$${key}`, scryptRange],
    ['scrypt with p = 0', `$scrypt$ln=14,r=8,p=0$c29tZXNhbHQ$${key}`, scryptRange],
  ])('refuses %s, without repeating it', (_, text, problem) => {
    expect(parsePasswordHash(text, true)).toEqual({ ok: false, problem });
  });

  test.each([
    ['the smallest argon2id parameters', `$argon2id$v=19$m=8,t=1,p=1$c29tZXNhbHQ$${key}`],
    ['the largest argon2id parameters', `$argon2id$v=19$m=1048576,t=100,p=16$c29tZXNhbHQ$${key}`],
    ['the smallest scrypt parameters', `$scrypt$ln=10,r=1,p=1$c29tZXNhbHQ$${key}`],
    ['the largest scrypt parameters', `$scrypt$ln=20,r=32,p=16$c29tZXNhbHQ$${key}`],
    ['exactly 8 KiB of memory per lane', `$argon2id$v=19$m=32,t=2,p=4$c29tZXNhbHQ$${key}`],
    ['a hash with the blanks a paste brings', `  ${REFERENCE_ARGON2ID}\n`],
  ])('accepts %s', (_, text) => {
    expect(parsePasswordHash(text, true).ok).toBe(true);
  });

  test('reads the parameters, salt and key of the hash', () => {
    expect(parsed(REFERENCE_ARGON2ID)).toEqual({
      algorithm: 'argon2id',
      memory: 256,
      passes: 2,
      parallelism: 1,
      salt: Buffer.from('somesalt'),
      key: Buffer.from('9dfeb910e80bad0311fee20f9c0e2b12c17987b4cac90c2ef54d5b3021c68bfe', 'hex'),
    });
    expect(parsed('$scrypt$ln=14,r=8,p=2$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4')).toMatchObject({
      algorithm: 'scrypt',
      logN: 14,
      r: 8,
      p: 2,
    });
  });

  test('an argon2id hash on a Node without argon2 says which Node it needs', () => {
    const result = parsePasswordHash(REFERENCE_ARGON2ID, false);
    expect(result).toEqual({
      ok: false,
      problem: expect.stringMatching(
        /^is an argon2id hash, which needs Node 24\.7 or later \(this is v\d+\.\d+\.\d+\); make a scrypt one here with npm run --silent admin -- hash-password$/,
      ),
    });
  });
});

describe('checking sign-ins', () => {
  test('at most two checks run at once; the others wait their turn, and each gets its own answer', async () => {
    let running = 0;
    let most = 0;
    const slow = async (password: string) => {
      running++;
      most = Math.max(most, running);
      await new Promise((done) => setTimeout(done, 20));
      running--;
      return password === 'right';
    };
    // Two by default (the ten admitted below are these two and eight waiting).
    const check = createPasswordCheck(parsed(REFERENCE_ARGON2ID), undefined, slow);
    const answers = await Promise.all(['right', 'wrong', 'right', 'wrong', 'right'].map((password) => check(password)));
    expect(answers).toEqual([true, false, true, false, true]);
    expect(most).toBe(2);
  });

  test('the real check by default, two at a time', async () => {
    const check = createPasswordCheck(parsed(REFERENCE_ARGON2ID));
    await expect(Promise.all([check('password'), check('passwore'), check('password')])).resolves.toEqual([true, false, true]);
  });

  test('past the waiting room an unknown browser is refused at once, while a known one goes to the front', async () => {
    const order: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = async (password: string) => {
      await held;
      order.push(password);
      return password.startsWith('owner');
    };
    // One check at a time, two may wait.
    const check = createPasswordCheck(parsed(REFERENCE_ARGON2ID), 1, slow, 2);
    const running = check('flood-1');
    const waiting = [check('flood-2'), check('flood-3')];
    await expect(check('flood-4')).resolves.toBe('busy');
    const owner = check('owner', { known: true });
    release();
    await expect(Promise.all([running, ...waiting, owner])).resolves.toEqual([false, false, false, true]);
    // The owner's check ran right after the one under way, before the flood that waited.
    expect(order).toEqual(['flood-1', 'owner', 'flood-2', 'flood-3']);
  });

  test('a check that fails frees its turn', async () => {
    const check = createPasswordCheck(parsed(REFERENCE_ARGON2ID), 1, async (p) => {
      if (p === 'boom') throw new Error('boom');
      return true;
    });
    await expect(check('boom')).rejects.toThrow('boom');
    await expect(check('fine')).resolves.toBe(true);
  });
});

describe('this Node', () => {
  test('has argon2id (Node 24.7 and later), so a hash is argon2id unless told otherwise, and an argon2id hash is read', async () => {
    expect(hasArgon2()).toBe(true);
    await expect(hashPassword('correct horse battery')).resolves.toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(parsePasswordHash(REFERENCE_ARGON2ID)).toMatchObject({ ok: true, hash: { algorithm: 'argon2id' } });
  });
});

describe('the longest guess that is still hashed', () => {
  test('is 4096 characters: a password that long verifies', async () => {
    const long = 'p'.repeat(4 * 1024);
    const hash = parsed(await hashPassword(long, true));
    await expect(verifyPassword(long, hash)).resolves.toBe(true);
    await expect(verifyPassword(`${long}p`, hash)).resolves.toBe(false);
  });
});

describe('the default waiting room', () => {
  test('two checks run and eight wait; the eleventh unknown browser is refused at once', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = async (password: string) => {
      await held;
      return password === 'right';
    };
    const check = createPasswordCheck(parsed(REFERENCE_ARGON2ID), undefined, slow);
    const admitted = Array.from({ length: 10 }, (_, i) => check(i === 9 ? 'right' : 'wrong'));
    await expect(check('eleventh')).resolves.toBe('busy');
    release();
    const answers = await Promise.all(admitted);
    expect(answers).toEqual([false, false, false, false, false, false, false, false, false, true]);
    // Once they are done, there is room again.
    await expect(check('right')).resolves.toBe(true);
  });
});
