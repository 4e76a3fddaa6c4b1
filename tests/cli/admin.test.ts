import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { ADMIN_USAGE, parseAdminArgs, passwordFromInput, runAdminCommand } from '../../src/lib/admin/command.ts';
import { parsePasswordHash, verifyPassword } from '../../src/lib/admin/password.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `npm run --silent admin -- …` as the owner would, with `input` piped to it. */
function runAdmin(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('npm', ['run', '--silent', 'admin', '--', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm run --silent admin -- hash-password, through a pipe', () => {
  test('prints one hash line that verifies the piped password, and nothing else on stdout', async () => {
    const { code, stdout, stderr } = await runAdmin(['hash-password'], 'correct horse battery staple\n');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$\S+\n$/);
    expect(stderr).not.toContain('correct horse');
    const hash = parsePasswordHash(stdout);
    expect(hash.ok).toBe(true);
    if (hash.ok) await expect(verifyPassword('correct horse battery staple', hash.hash)).resolves.toBe(true);
  }, 30_000);

  test('refuses an 11-character password with exit code 2 and prints no hash', async () => {
    const { code, stdout, stderr } = await runAdmin(['hash-password'], 'elevenchars');
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe('The password must have at least 12 characters (it has 11).\n');
  }, 30_000);

  test('an unknown command prints the usage to stderr with exit code 2', async () => {
    const { code, stdout, stderr } = await runAdmin(['hash'], '');
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(`Unknown command: hash\n\n${ADMIN_USAGE}`);
  }, 30_000);
});

// util-linux's `script` gives the command a terminal, as when the owner types the password.
const scriptAvailable = spawnSync('script', ['--version']).status === 0;

describe.skipIf(!scriptAvailable)('npm run admin -- hash-password on a terminal', () => {
  test('asks twice without echoing what is typed, and prints a hash of it', async () => {
    const command = `${process.execPath} src/cli/admin.ts hash-password`;
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (output.endsWith('Password: ') || output.endsWith('Again: ')) child.stdin.write('typed secret here\r');
    });
    const code = await new Promise((resolve) => child.once('close', resolve));
    expect(code).toBe(0);
    expect(output).not.toContain('typed secret here');
    const hash = parsePasswordHash(/\$argon2id\$\S+/.exec(output)![0]);
    expect(hash.ok && (await verifyPassword('typed secret here', hash.hash))).toBe(true);
  }, 30_000);
});

describe('the arguments of npm run admin', () => {
  test.each([
    [[], { ok: false, problem: 'No command given.' }],
    [['hash-password'], { ok: true, command: { name: 'hash-password' } }],
    [['hash-password', 'secret'], { ok: false, problem: 'Unexpected argument: secret' }],
    [['help'], { ok: true, command: { name: 'help' } }],
    [['--help'], { ok: true, command: { name: 'help' } }],
    [['-h'], { ok: true, command: { name: 'help' } }],
    [['login'], { ok: false, problem: 'Unknown command: login' }],
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
    ['spaces kept', '  spaced  \n', '  spaced  '],
    ['nothing', '', undefined],
    ['an empty line', '\n', undefined],
  ])('%s', (_, input, expected) => {
    expect(passwordFromInput(input)).toBe(expected);
  });
});

describe('running the command', () => {
  const io = (password: string | undefined) => {
    const written = { out: '', err: '' };
    return {
      written,
      io: {
        readPassword: async () => password,
        out: (t: string) => {
          written.out += t;
        },
        err: (t: string) => {
          written.err += t;
        },
        hash: async (p: string) => `HASH(${p})`,
      },
    };
  };

  test('prints the hash on stdout and the advice on stderr', async () => {
    const { written, io: given } = io('twelve chars');
    await expect(runAdminCommand({ name: 'hash-password' }, given)).resolves.toBe(0);
    expect(written).toEqual({
      out: 'HASH(twelve chars)\n',
      err: 'Put this line in ADMIN_PASSWORD_HASH (in .env, in single quotes: the hash contains $), then restart the server.\n',
    });
  });

  test('says so when no password came', async () => {
    const { written, io: given } = io(undefined);
    await expect(runAdminCommand({ name: 'hash-password' }, given)).resolves.toBe(2);
    expect(written).toEqual({ out: '', err: 'No password given: type it when asked, or pipe it in.\n' });
  });

  test('help prints the usage on stdout', async () => {
    const { written, io: given } = io(undefined);
    await expect(runAdminCommand({ name: 'help' }, given)).resolves.toBe(0);
    expect(written).toEqual({ out: ADMIN_USAGE, err: '' });
  });
});
