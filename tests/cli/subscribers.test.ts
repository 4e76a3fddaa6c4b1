import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openSqlite } from '../../packages/site-forms/src/lib/sql/sqlite.ts';
import { runCli } from '../contact/run-inbox.ts';
import { postForm, startSite } from '../support/site.ts';

/** Runs `src/cli/subscribers.ts` as the owner would, with only the given environment. */
const runSubscribers = (args: string[], env: Record<string, string>) => runCli('subscribers', args, env);

// An address with everything CSV has to quote (a quoted local part may hold a comma and quotes).
const TRICKY = '"o\'hara, ""jr"""@example.com';
const ROWS = [
  ['ada@example.com', '2026-01-02T03:04:05.000Z'],
  [TRICKY, '2026-01-03T00:00:00.000Z'],
  ['bob@example.net', '2026-01-01T00:00:00.000Z'],
];

describe('npm run subscribers', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'site-forms-subscribers-'));
    const db = openSqlite(dataDir, { lockTimeoutMs: 1_000 });
    for (const [email, created] of ROWS) await db.run('INSERT INTO subscribers (email, created_at) VALUES (?, ?)', [email!, created!]);
    await db.close();
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  test('export --format csv: the columns Mailchimp imports, oldest first, RFC 4180 quoting and CRLF, nothing else on stdout', async () => {
    const { code, stdout, stderr } = await runSubscribers(['export', '--format', 'csv'], { DATA_DIR: dataDir });
    expect(code).toBe(0);
    expect(stdout).toBe(
      'Email Address,Created\r\n' +
        'bob@example.net,2026-01-01 00:00:00\r\n' +
        'ada@example.com,2026-01-02 03:04:05\r\n' +
        '"""o\'hara, """"jr""""""@example.com",2026-01-03 00:00:00\r\n',
    );
    expect(stderr).toBe('Exported 3 subscribers.\n');
  });

  test('export --format=json: one JSON array of { email, created }', async () => {
    const { code, stdout } = await runSubscribers(['export', '--format=json'], { DATA_DIR: dataDir });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual([
      { email: 'bob@example.net', created: '2026-01-01T00:00:00.000Z' },
      { email: 'ada@example.com', created: '2026-01-02T03:04:05.000Z' },
      { email: TRICKY, created: '2026-01-03T00:00:00.000Z' },
    ]);
  });

  test('reads DATA_DIR from the file ENV_FILE names, as the server does', async () => {
    const envFile = join(dataDir, 'test.env');
    writeFileSync(envFile, `DATA_DIR=${dataDir}\n`);
    const { code, stdout } = await runSubscribers(['export', '--format', 'json'], { ENV_FILE: envFile });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toHaveLength(3);
  });

  test('an empty list is still a valid file: the header alone, and a note on stderr', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'site-forms-subscribers-'));
    try {
      await openSqlite(empty, { lockTimeoutMs: 1_000 }).close();
      const { code, stdout, stderr } = await runSubscribers(['export', '--format', 'csv'], { DATA_DIR: empty });
      expect(code).toBe(0);
      expect(stdout).toBe('Email Address,Created\r\n');
      expect(stderr).toMatch(/No subscribers/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  test('a DATA_DIR without a database: exit 1 naming the folder, nothing on stdout, nothing created', async () => {
    const missing = join(dataDir, 'not-here');
    const { code, stdout, stderr } = await runSubscribers(['export', '--format', 'csv'], { DATA_DIR: missing });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(missing);
    expect(existsSync(missing)).toBe(false);
  });

  // Every usage error is a case of parseSubscribersArgs (tests/lib/newsletter/subscribers.test.ts); one is run for real.
  test('a usage error: exit 2 with the problem and the usage on stderr, nothing on stdout', async () => {
    const { code, stdout, stderr } = await runSubscribers(['export', '--format', 'xml'], { DATA_DIR: dataDir });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^export needs --format csv or --format json\.\n\nUsage: npm run subscribers/);
  });
});

describe('the hint of the start log', () => {
  test('npm run subscribers -- … works as the site prints it when no provider is set', async () => {
    const site = await startSite();
    try {
      const posted = await postForm(`${site.url}/api/newsletter`, { email: 'reader@example.com' }, { accept: 'application/json' });
      expect(await posted.text()).toBe('{"success":true}');
      const line = site.logs.find((entry) => typeof entry === 'object' && entry.event === 'newsletter.local') as { note: string } | undefined;
      const printed = /\(npm run subscribers -- ([^)]*)\)/.exec(line?.note ?? '');
      expect(printed, line?.note).not.toBeNull();
      const { code, stdout, stderr } = await runSubscribers(printed![1]!.split(' '), { DATA_DIR: site.dataDir });
      expect([code, stderr]).toEqual([0, 'Exported 1 subscriber.\n']);
      // With the record of consent every signup keeps (decision 0206).
      expect(stdout).toMatch(/^Email Address,Created,Consent,Signed Up,Confirmed,Consent Text,Consent Version,Consent Page,Client\r\nreader@example\.com,/);
    } finally {
      await site.stop();
    }
  });
});
