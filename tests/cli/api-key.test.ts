/**
 * `npm run admin -- api-key create|revoke|list` (issue 42, api/command.ts) as the operator runs
 * it, on a SQLite folder: the key alone on the last line of stdout and shown once, refusals with
 * their exit codes, a revocation that holds at the next lookup.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAuditLog } from '../../packages/site-forms/src/lib/admin/audit.ts';
import { createApiKeys } from '../../packages/site-forms/src/lib/api/keys.ts';
import { openSqlite } from '../../packages/site-forms/src/lib/sql/sqlite.ts';
import { runCli } from '../contact/run-inbox.ts';

const apiKey = (args: string[], env: Record<string, string>) => runCli('admin', ['api-key', ...args], env);

describe('npm run admin -- api-key', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'site-forms-api-key-'));
    await openSqlite(dataDir, { lockTimeoutMs: 1_000 }).close();
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const lookup = async (key: string) => {
    const db = openSqlite(dataDir, { lockTimeoutMs: 1_000 });
    try {
      return await createApiKeys(db).find(key, new Date());
    } finally {
      await db.close();
    }
  };

  test('create: the key alone on stdout’s last line, the explanation on stderr; it finds its actor; list shows its prefix, never the key', async () => {
    const made = await apiKey(['create', '--name', 'ci-export', '--scope', 'read', '--forms', 'contact,newsletter'], { DATA_DIR: dataDir });
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/^sfk_[a-z2-7]{12}_[A-Za-z0-9_-]{43}\n$/);
    const key = made.stdout.trim();
    expect(made.stderr).toContain('shown only this once');
    expect(made.stderr).not.toContain(key);
    await expect(lookup(key)).resolves.toMatchObject({
      kind: 'key',
      name: 'ci-export',
      keyScope: 'read',
      scope: { all: false, forms: ['contact', 'newsletter'] },
    });
    const listed = await apiKey(['list'], { DATA_DIR: dataDir });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`ci-export\t${key.slice(0, 16)}…\tread\tcontact,newsletter\tcreated `);
    expect(listed.stdout).not.toContain(key.slice(17));
  });

  test('a live name taken: exit 1; bad arguments: exit 2 with the usage', async () => {
    await apiKey(['create', '--name=taken', '--scope=write'], { DATA_DIR: dataDir });
    const again = await apiKey(['create', '--name=taken', '--scope=write'], { DATA_DIR: dataDir });
    expect(again).toMatchObject({ code: 1, stdout: '' });
    expect(again.stderr).toContain('already named "taken"');
    for (const args of [
      ['create', '--name', 'x'],
      ['create', '--scope', 'read'],
      ['create', '--name', 'x', '--scope', 'admin'],
      ['create', '--name', 'x', '--scope', 'read', '--forms', 'Contact!'],
      ['revoke'],
      ['rotate'],
    ]) {
      const refused = await apiKey(args, { DATA_DIR: dataDir });
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr, args.join(' ')).toContain('Usage:');
      expect(refused.stdout).toBe('');
    }
  });

  const audited = async () => {
    const db = openSqlite(dataDir, { lockTimeoutMs: 1_000 });
    try {
      return (await createAuditLog(db).list(100, 0)).entries;
    } finally {
      await db.close();
    }
  };

  test('made and revoked keys are in the audit log, named with their prefix, by the command line; never the key', async () => {
    const key = (await apiKey(['create', '--name', 'audited', '--scope', 'read', '--forms', 'contact'], { DATA_DIR: dataDir })).stdout.trim();
    expect((await apiKey(['revoke', 'audited'], { DATA_DIR: dataDir })).code).toBe(0);
    const entries = (await audited()).filter((entry) => entry.detail.startsWith('audited '));
    expect(entries.map(({ action, detail, actor, actorName, client }) => ({ action, detail, actor, actorName, client }))).toEqual([
      { action: 'key-revoked', detail: `audited (${key.slice(0, 16)}…)`, actor: 'cli', actorName: 'the command line', client: 'command line' },
      { action: 'key-created', detail: `audited (${key.slice(0, 16)}…), read, contact`, actor: 'cli', actorName: 'the command line', client: 'command line' },
    ]);
    expect(JSON.stringify(await audited())).not.toContain(key.slice(17));
    // Refused: nothing changed, nothing recorded.
    expect((await apiKey(['revoke', 'audited'], { DATA_DIR: dataDir })).code).toBe(1);
    expect((await audited()).filter((entry) => entry.detail.startsWith('audited '))).toHaveLength(2);
  });

  test('revoke: the key is refused at the next lookup, its name free again; a name with no live key: exit 1', async () => {
    const key = (await apiKey(['create', '--name', 'deploy', '--scope', 'write'], { DATA_DIR: dataDir })).stdout.trim();
    await expect(lookup(key)).resolves.toBeDefined();
    expect(await apiKey(['revoke', 'deploy'], { DATA_DIR: dataDir })).toMatchObject({ code: 0, stdout: '' });
    await expect(lookup(key)).resolves.toBeUndefined();
    expect((await apiKey(['revoke', 'deploy'], { DATA_DIR: dataDir })).code).toBe(1);
    expect((await apiKey(['create', '--name', 'deploy', '--scope', 'read'], { DATA_DIR: dataDir })).code).toBe(0);
  });
});
