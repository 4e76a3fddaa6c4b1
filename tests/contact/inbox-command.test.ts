import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postForm, type Site, startSite } from '../support/site.ts';
import { site as settings } from '../../packages/site-forms/src/lib/site/site.ts';
import { parseMail } from '../support/mime.ts';
import { type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';
import { runInbox } from './run-inbox.ts';

// A message with everything CSV has to quote, and one without.
const tricky = { name: 'Lovelace, Ada "Countess"', email: 'ada@example.org', message: 'Line one, with a comma;\nline two with "quotes".', honeypot: '' };
// A browser's multipart form sends a textarea's line breaks as CRLF, and so does fetch's FormData.
const trickyAsStored = tricky.message.replace('\n', '\r\n');
const plain = { name: 'Bob Builder', email: 'bob@example.net', message: 'A plain message, ten chars.', honeypot: '' };

describe('npm run inbox, against the database of a running server', () => {
  let site: Site;
  let env: Record<string, string>;
  beforeAll(async () => {
    site = await startSite();
    env = { DATA_DIR: site.dataDir };
    for (const fields of [tricky, plain]) expect((await postForm(`${site.url}/api/contact`, fields)).status).toBe(200);
  });
  afterAll(() => site.stop());

  test('list shows both messages, newest first', async () => {
    const { code, stdout } = await runInbox(['list'], env);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+RECEIVED \(UTC\)\s+NAME\s+EMAIL\s+STATUS$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/))).toEqual([
      ['2', expect.any(String), 'Bob Builder', 'bob@example.net', 'pending'],
      ['1', expect.any(String), 'Lovelace, Ada "Countess"', 'ada@example.org', 'pending'],
    ]);
  });

  test('npm run --silent inbox -- export --format json prints nothing but one JSON array', async () => {
    const { code, stdout } = await runInbox(['export', '--format', 'json'], env, { viaNpm: true });
    expect(code).toBe(0);
    const exported = JSON.parse(stdout) as Array<Record<string, unknown>>;
    expect(exported).toEqual([
      expect.objectContaining({ id: 2, createdAt: expect.any(String), name: plain.name, email: plain.email, message: plain.message, status: 'pending' }),
      expect.objectContaining({ id: 1, createdAt: expect.any(String), name: tricky.name, email: tricky.email, message: trickyAsStored, status: 'pending' }),
    ]);
  });

  test('export --format csv quotes the comma, the quotes and the line break', async () => {
    const { code, stdout } = await runInbox(['export', '--format', 'csv'], env);
    expect(code).toBe(0);
    expect(stdout.split('\r\n')[0]).toBe('id,createdAt,name,email,message,status,attempts,nextAttemptAt,lastError,sentAt,spamReasons');
    expect(stdout).toContain(',"Lovelace, Ada ""Countess""",ada@example.org,"Line one, with a comma;\r\nline two with ""quotes"".",pending,0,');
    expect(stdout).toContain(',Bob Builder,bob@example.net,"A plain message, ten chars.",pending,0,');
    expect(stdout.endsWith('\r\n')).toBe(true);
  });

  test('show prints the message in full', async () => {
    const { code, stdout } = await runInbox(['show', '1'], env);
    expect(code).toBe(0);
    expect(stdout).toContain('From:     Lovelace, Ada "Countess" <ada@example.org>');
    expect(stdout).toContain('Line one, with a comma;\nline two with "quotes".');
    expect(stdout).toContain('Status:   pending, not attempted yet');
  });

  test.each([
    [['show', '99'], 1, /No contact message #99/],
    [['retry', '99'], 1, /No contact message #99/],
    [['frobnicate'], 2, /Unknown command: frobnicate[\s\S]*Usage: npm run inbox/],
    [[], 2, /No command given[\s\S]*Usage: npm run inbox/],
    [['export'], 2, /export needs --format csv or --format json/],
  ])('%j exits %i with a message on stderr and nothing on stdout', async (args, exitCode, message) => {
    const { code, stdout, stderr } = await runInbox(args, env);
    expect({ code, stdout }).toEqual({ code: exitCode, stdout: '' });
    expect(stderr).toMatch(message);
  });

  test('help goes to stdout and exits 0', async () => {
    await expect(runInbox(['help'], env)).resolves.toMatchObject({ code: 0, stdout: expect.stringContaining('export --format csv|json') });
  });
});

describe('npm run inbox with a DATA_DIR that holds no database', () => {
  test('exits 1 naming the folder, rather than showing an empty inbox', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'site-forms-empty-'));
    try {
      const { code, stdout, stderr } = await runInbox(['list'], { DATA_DIR: join(dir, 'typo') });
      expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
      expect(stderr).toContain(join(dir, 'typo'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npm run inbox -- digest', () => {
  let site: Site;
  let smtp: FakeSmtpServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    const mail = { SMTP_URL: smtp.url(), CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'site@example.com' };
    site = await startSite({ SPAM_FILTER: 'on', ...mail });
    env = { DATA_DIR: site.dataDir, ...mail };
  });
  afterAll(async () => {
    await site.stop();
    await smtp.close();
  });

  test('sends the digest of what was held now, then says there is nothing new', async () => {
    // A program's post without the page's proof is held (two weak signs).
    expect((await postForm(`${site.url}/api/contact`, { ...plain, name: 'Held Bot' })).status).toBe(200);
    const first = await runInbox(['digest'], env);
    expect(first).toMatchObject({ code: 0, stdout: 'The digest of held messages was sent to owner@example.com.\n' });
    const digests = smtp.received.filter((mail) => parseMail(mail.raw).header('subject')[0]?.includes('Held as spam'));
    expect(digests).toHaveLength(1);
    const digest = parseMail(digests[0]!.raw);
    expect(digest.header('subject')).toEqual([`[${settings.name}] Held as spam: 1 message`]);
    expect(digest.text).toContain('Held Bot');
    expect(digest.text).toContain('npm run inbox -- show <id>');

    await expect(runInbox(['digest'], env)).resolves.toMatchObject({ code: 0, stdout: 'Nothing was held as spam since the last digest, so none was sent.\n' });
  });

  test('without a mail server it says what to set, and fails', async () => {
    await expect(runInbox(['digest'], { DATA_DIR: site.dataDir })).resolves.toMatchObject({
      code: 1,
      stderr: 'No mail server: set SMTP_URL, CONTACT_TO and CONTACT_FROM to send the digest.\n',
    });
  });
});
