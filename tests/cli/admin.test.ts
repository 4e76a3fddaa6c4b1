import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli } from '../contact/run-inbox.ts';
import { type Site, startSite } from '../support/site.ts';
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

/**
 * The team on the command line (issue 42 item 1, step S7a): `add-user`, `users`, `remove-user`,
 * `reset-link` as the operator runs them, on the data folder of a built server started without
 * ADMIN_PASSWORD_HASH, so the first owner comes from `add-user --role owner` and the links printed
 * are followed on that server.
 */
describe('npm run admin -- add-user | users | remove-user | reset-link', () => {
  const PERSON_PASSWORD = 'twelve chars at least';
  let site: Site;
  let dataDir: string;
  const admin = (args: string[], env: Record<string, string> = {}) => runCli('admin', args, { DATA_DIR: dataDir, PUBLIC_URL: site.url, ...env });
  const welcome = (url: string) => new RegExp(`^${site.url}/admin/welcome/(sfl_[A-Za-z0-9_-]{43})\\n$`).exec(url)?.[1];
  const post = (action: string, fields: Record<string, string>, cookie?: string) =>
    fetch(`${site.url}/admin/actions/${action}`, {
      method: 'POST',
      body: new URLSearchParams(fields),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url, ...(cookie && { cookie }) },
      redirect: 'manual',
    });
  const audit = () => {
    const db = new DatabaseSync(join(dataDir, 'forms.db'), { readOnly: true });
    try {
      return db.prepare("SELECT action, detail, actor FROM admin_audit WHERE actor = 'cli' ORDER BY id").all();
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'site-forms-people-cli-'));
    // No ADMIN_PASSWORD_HASH: /admin is off until the command adds someone.
    site = await startSite({}, { dataDir });
  });
  afterAll(async () => {
    await site?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('add-user without PUBLIC_URL, with an unknown role or an unknown form: exit 2, nothing on stdout', async () => {
    const noUrl = await admin(['add-user', 'ada@example.org', '--role', 'owner'], { PUBLIC_URL: '' });
    expect(noUrl).toMatchObject({ code: 2, stdout: '' });
    expect(noUrl.stderr).toContain('PUBLIC_URL');
    const role = await admin(['add-user', 'ada@example.org', '--role', 'admin']);
    expect(role).toMatchObject({ code: 2, stdout: '' });
    expect(role.stderr).toContain('--role owner, editor or reader');
    const form = await admin(['add-user', 'ada@example.org', '--role', 'editor', '--forms', 'contact,quote']);
    expect(form).toMatchObject({ code: 2, stdout: '' });
    // The forms that exist, as the tools know them: the suite's contact form and the local list.
    expect(form.stderr).toContain('No form is named "quote": the forms are contact, newsletter.');
    for (const args of [
      ['add-user'],
      ['add-user', 'not-an-email', '--role', 'owner'],
      ['add-user', 'ada@example.org'],
      ['remove-user'],
      ['reset-link', 'a@b.c', 'd@e.f'],
    ]) {
      const refused = await admin(args);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr, args.join(' ')).toContain('Usage:');
      expect(refused.stdout, args.join(' ')).toBe('');
    }
  });

  test('add-user --role owner on an install without ADMIN_PASSWORD_HASH: one line, a link on PUBLIC_URL that signs the first owner in', async () => {
    const added = await admin(['add-user', 'Ada@Example.org', '--role', 'owner', '--name', 'Ada']);
    expect(added.code, added.stderr).toBe(0);
    const token = welcome(added.stdout);
    expect(token, added.stdout).toBeDefined();
    expect(added.stderr).not.toContain(token);
    // The page only shows the form; the post uses the link, once.
    const page = await fetch(`${site.url}/admin/welcome/${token}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('You are invited as owner with the address ada@example.org.');
    const accepted = await post('accept-link', { token: token!, name: 'Ada', password: PERSON_PASSWORD });
    expect([accepted.status, accepted.headers.get('location')]).toEqual([303, '/admin']);
    const signedIn = await post('sign-in', { email: 'ada@example.org', password: PERSON_PASSWORD });
    expect([signedIn.status, signedIn.headers.get('location')]).toEqual([303, '/admin']);
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    expect((await fetch(`${site.url}/admin/people`, { headers: { cookie }, redirect: 'manual' })).status).toBe(200);
    expect(audit()).toContainEqual({ action: 'invite', detail: 'ada@example.org (Ada) as owner (every form)', actor: 'cli' });
  });

  test('add-user an address that is already a person: exit 1; users lists the people with their roles, then the pending invitations', async () => {
    const again = await admin(['add-user', 'ada@example.org', '--role', 'reader']);
    expect(again).toMatchObject({ code: 1, stdout: '' });
    expect(again.stderr).toContain('ada@example.org is already a person here');
    expect((await admin(['add-user', 'eddie@example.org', '--role', 'editor', '--forms', 'contact'])).code).toBe(0);
    const listed = await admin(['users']);
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.split('\n');
    expect(lines[0]).toMatch(/^EMAIL\s+NAME\s+ROLE\s+FORMS\s+PASSWORD\s+PASSKEYS\s+LAST SIGN-IN$/);
    expect(lines[1]).toMatch(/^ada@example\.org\s+Ada\s+owner\s+every form\s+yes\s+0\s+\d{4}-\d\d-\d\dT/);
    const pending = lines.indexOf('Pending invitations:');
    expect(pending).toBeGreaterThan(1);
    expect(lines[pending + 1]).toMatch(/^EMAIL\s+ROLE\s+FORMS\s+EXPIRES$/);
    expect(lines[pending + 2]).toMatch(/^eddie@example\.org\s+editor\s+contact\s+\d{4}-\d\d-\d\dT/);
  });

  test('remove-user refuses the last owner (exit 1), and removes an editor with their session at once', async () => {
    const last = await admin(['remove-user', 'ada@example.org']);
    expect(last).toMatchObject({ code: 1, stdout: '' });
    expect(last.stderr).toContain('last owner');
    expect((await admin(['remove-user', 'nobody@example.org'])).code).toBe(1);

    const token = welcome((await admin(['add-user', 'rita@example.org', '--role', 'reader', '--forms', 'contact'])).stdout)!;
    const accepted = await post('accept-link', { token, name: 'Rita', password: PERSON_PASSWORD });
    const cookie = accepted.headers.get('set-cookie')!.split(';')[0]!;
    expect((await fetch(`${site.url}/admin/messages`, { headers: { cookie }, redirect: 'manual' })).status).toBe(200);
    const removed = await admin(['remove-user', 'rita@example.org']);
    expect(removed).toMatchObject({ code: 0, stdout: '' });
    const after = await fetch(`${site.url}/admin/messages`, { headers: { cookie }, redirect: 'manual' });
    expect([after.status, after.headers.get('location')]).toEqual([303, '/admin?ended=expired']);
    expect((await admin(['users'])).stdout).not.toContain('rita@example.org');
    expect(audit()).toContainEqual({ action: 'remove-person', detail: 'Rita <rita@example.org>', actor: 'cli' });
  });

  test('reset-link prints a sign-in link alone on stdout that sets a new password; an unknown address: exit 1; without PUBLIC_URL: exit 2', async () => {
    expect((await admin(['reset-link', 'ada@example.org'], { PUBLIC_URL: '' })).code).toBe(2);
    expect((await admin(['reset-link', 'nobody@example.org'])).code).toBe(1);
    const made = await admin(['reset-link', 'ada@example.org']);
    expect(made.code, made.stderr).toBe(0);
    const token = welcome(made.stdout)!;
    expect(token).toBeDefined();
    const accepted = await post('accept-link', { token, password: 'a brand new password' });
    expect([accepted.status, accepted.headers.get('location')]).toEqual([303, '/admin/account?reset=1']);
    const signedIn = await post('sign-in', { email: 'ada@example.org', password: 'a brand new password' });
    expect([signedIn.status, signedIn.headers.get('location')]).toEqual([303, '/admin']);
    expect(audit()).toContainEqual({ action: 'send-link', detail: 'Ada <ada@example.org>', actor: 'cli' });
  });
});
