import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { needs } from '../support/services.ts';
import { ADMIN_USAGE } from '../../packages/site-forms/src/lib/admin/command.ts';
import { parsePasswordHash, verifyPassword } from '../../packages/site-forms/src/lib/admin/password.ts';

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
const scriptAvailable = needs('script');

describe.skipIf(!scriptAvailable)('npm run admin -- hash-password on a terminal', () => {
  test('asks twice without echoing what is typed, and prints a hash of it', async () => {
    const command = `${process.execPath} packages/site-forms/src/cli/admin.ts hash-password`;
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

// The arguments, the piped password and the command itself are pinned in this process by
// tests/lib/admin/command.test.ts, where the mutation run reaches them.
