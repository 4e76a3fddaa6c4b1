import { describe, expect, test } from 'vitest';
import { ADMIN_USAGE, type AdminIo, parseAdminArgs, passwordFromInput, runAdminCommand } from '../../../packages/site-forms/src/lib/admin/command.ts';
import { parsePasswordHash, verifyPassword } from '../../../packages/site-forms/src/lib/admin/password.ts';

// `npm run admin` in this process: tests/cli/admin.test.ts runs the command in a child
// process, which the mutation run cannot reach; its logic is pinned here.

describe('the usage of npm run admin', () => {
  test('names every command, what it prints, and both ways to give the password', () => {
    expect(ADMIN_USAGE.split('\n')).toEqual([
      'Usage: npm run --silent admin -- <command>',
      '',
      'Commands:',
      '  hash-password   reads a password from standard input (typed without echo, or piped) and prints',
      "                  the hash to put in ADMIN_PASSWORD_HASH, which turns the owner's inbox at /admin on",
      '  add-user <email> --role owner|editor|reader [--forms contact,quote] [--name "…"]',
      '                  invites a person and prints their link on PUBLIC_URL alone on stdout: it works',
      '                  once, for 72 hours (without --forms: every form; newsletter is the local list)',
      '  users           the people (role, forms, password, passkeys, last sign-in), then the invitations',
      '                  not yet accepted',
      '  remove-user <email>',
      '                  removes a person and ends their sessions at once (never the last owner)',
      '  reset-link <email>',
      '                  prints a sign-in link on PUBLIC_URL that sets a new password, once, for an hour:',
      '                  the way back in for a person who lost their password or passkey',
      '  remove-passkeys <email>|--first-owner',
      '                  removes every passkey of a person and ends their sessions: the way back in for',
      '                  the owner of ADMIN_PASSWORD_HASH (--first-owner) who lost their passkeys',
      '  api-key <command>',
      '                  the keys of /api/v1 (api-key help)',
      '',
      '  Example: npm run --silent admin -- hash-password',
      `           printf '%s' "$PASSWORD" | npm run --silent admin -- hash-password`,
      '           npm run --silent admin -- add-user ada@example.org --role owner',
      '',
    ]);
  });
});

describe('the arguments of npm run admin', () => {
  test.each([
    [[], { ok: false, problem: 'No command given.' }],
    [['hash-password'], { ok: true, command: { name: 'hash-password' } }],
    [['hash-password', 'secret'], { ok: false, problem: 'Unexpected argument: secret' }],
    [['hash-password', 'one', 'two'], { ok: false, problem: 'Unexpected argument: one' }],
    [['help'], { ok: true, command: { name: 'help' } }],
    [['--help'], { ok: true, command: { name: 'help' } }],
    [['-h'], { ok: true, command: { name: 'help' } }],
    [['help', 'me'], { ok: false, problem: 'Unexpected argument: me' }],
    [['HELP'], { ok: false, problem: 'Unknown command: HELP' }],
    [['login'], { ok: false, problem: 'Unknown command: login' }],
    [[''], { ok: false, problem: 'Unknown command: ' }],
  ])('%j reads as %j', (args, expected) => {
    expect(parseAdminArgs(args)).toEqual(expected);
  });
});

describe('the piped password', () => {
  test.each([
    ['a line from echo', 'twelve chars ok\n', 'twelve chars ok'],
    ['a line from a Windows file', 'twelve chars ok\r\n', 'twelve chars ok'],
    ['printf without a line break', 'twelve chars ok', 'twelve chars ok'],
    ['only the first line', 'first line here\nsecond', 'first line here'],
    ['only the first line of a Windows file', 'first line here\r\nsecond\r\n', 'first line here'],
    ['a carriage return alone is part of the password', 'one\rtwo\n', 'one\rtwo'],
    ['spaces kept', '  spaced  \n', '  spaced  '],
    ['nothing', '', undefined],
    ['an empty line', '\n', undefined],
    ['an empty Windows line', '\r\n', undefined],
    ['an empty first line before a password', '\nlater line here', undefined],
  ])('%s', (_, input, expected) => {
    expect(passwordFromInput(input)).toBe(expected);
  });
});

describe('running the command', () => {
  /** The command's input and output in memory; `hash: null` leaves the real hash function. */
  const io = (password: string | undefined, hash: AdminIo['hash'] | null = async (p: string) => `HASH(${p})`) => {
    const written = { out: '', err: '' };
    const given: AdminIo = {
      readPassword: async () => password,
      out: (t) => {
        written.out += t;
      },
      err: (t) => {
        written.err += t;
      },
    };
    if (hash) given.hash = hash;
    return { written, io: given };
  };
  const ADVICE = 'Put this line in ADMIN_PASSWORD_HASH (in .env, in single quotes: the hash contains $), then restart the server.\n';

  test('prints the hash on stdout and the advice on stderr, exit code 0', async () => {
    const { written, io: given } = io('twelve chars');
    await expect(runAdminCommand({ name: 'hash-password' }, given)).resolves.toBe(0);
    expect(written).toEqual({ out: 'HASH(twelve chars)\n', err: ADVICE });
  });

  test('says so when no password came: exit code 2, nothing hashed', async () => {
    const hashed: string[] = [];
    const { written, io: given } = io(undefined, async (p) => {
      hashed.push(p);
      return 'never';
    });
    await expect(runAdminCommand({ name: 'hash-password' }, given)).resolves.toBe(2);
    expect(written).toEqual({ out: '', err: 'No password given: type it when asked, or pipe it in.\n' });
    expect(hashed).toEqual([]);
  });

  test.each([
    ['11 characters', 'elevenchars', 'The password must have at least 12 characters (it has 11).\n'],
    ['1025 characters', 'x'.repeat(1025), 'The password must have at most 1024 characters.\n'],
  ])('refuses a password of %s with exit code 2 and prints no hash', async (_, password, problem) => {
    const hashed: string[] = [];
    const { written, io: given } = io(password, async (p) => {
      hashed.push(p);
      return 'never';
    });
    await expect(runAdminCommand({ name: 'hash-password' }, given)).resolves.toBe(2);
    expect(written).toEqual({ out: '', err: problem });
    expect(hashed).toEqual([]);
  });

  test('help prints the usage on stdout and reads no password', async () => {
    let asked = 0;
    const { written, io: given } = io(undefined);
    given.readPassword = async () => {
      asked++;
      return 'twelve chars';
    };
    await expect(runAdminCommand({ name: 'help' }, given)).resolves.toBe(0);
    expect(written).toEqual({ out: ADMIN_USAGE, err: '' });
    expect(written.out).toMatch(/^Usage: npm run --silent admin -- <command>\n/);
    expect(asked).toBe(0);
  });

  test('without a hash of its own it prints a real hash of the password, on one line', async () => {
    const { written, io: given } = io('correct horse battery staple', null);
    await expect(runAdminCommand({ name: 'hash-password' }, given)).resolves.toBe(0);
    expect(written.out).toMatch(/^\$(argon2id|scrypt)\$\S+\n$/);
    expect(written.err).toBe(ADVICE);
    const parsed = parsePasswordHash(written.out);
    if (!parsed.ok) throw new Error(parsed.problem);
    await expect(verifyPassword('correct horse battery staple', parsed.hash)).resolves.toBe(true);
  });
});
