import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, test } from 'vitest';
import { makeCertificates, opensslAvailable } from '../support/certificates.ts';
import { parseMail } from '../support/mime.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, freePort, type SmtpAnswer, startSilentServer, startSmtpServer } from '../support/smtp.ts';
import { runInbox } from './run-inbox.ts';
import { site as settings } from '../../packages/site-forms/src/lib/site/site.ts';

const valid = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more about your work.', honeypot: '' };
const addresses = { CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'site@example.com' };
// Retries after 100 ms, 200 ms, ... instead of 30 s, 60 s, ...: the same policy, faster.
const fast = { DELIVERY_RETRY_BASE_MS: '100' };

type Row = { id: number; created_at: string; status: string; attempts: number; last_error: string | null };

function submissions(dataDir: string): Row[] {
  const db = new DatabaseSync(join(dataDir, 'forms.db'), { readOnly: true });
  try {
    return db.prepare('SELECT id, created_at, status, attempts, last_error FROM submissions ORDER BY id').all() as Row[];
  } finally {
    db.close();
  }
}

function history(dataDir: string, id: number): string[] {
  const db = new DatabaseSync(join(dataDir, 'forms.db'), { readOnly: true });
  try {
    return (db.prepare('SELECT outcome FROM delivery_attempts WHERE submission_id = ? ORDER BY id').all(id) as { outcome: string }[]).map((r) => r.outcome);
  } finally {
    db.close();
  }
}

async function post(site: Site, fields: Record<string, string> = valid): Promise<void> {
  const response = await postForm(`${site.url}/api/contact`, fields);
  expect(response.status).toBe(200);
  await expect(response.json()).resolves.toEqual({ success: true });
}

// Everything a test starts is stopped after it, passed or failed.
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});
async function smtpServer(...args: Parameters<typeof startSmtpServer>): Promise<FakeSmtpServer> {
  const server = await startSmtpServer(...args);
  cleanup.push(() => server.close());
  return server;
}
async function site(env: Record<string, string>, options?: { dataDir?: string }): Promise<Site> {
  const started = await startSite(env, options);
  cleanup.push(() => started.stop());
  return started;
}
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'site-forms-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('contact messages by email, through the built server', () => {
  test('a message reaches CONTACT_TO from CONTACT_FROM, with the visitor as Reply-To', async () => {
    const smtp = await smtpServer();
    const s = await site({ SMTP_URL: smtp.url(), ...addresses });
    const name = 'Zoë Ünïcödé 😀';
    await post(s, { ...valid, name });

    const [mail] = await eventually('the message to arrive', () => smtp.received.length === 1 && smtp.received);
    expect(mail).toMatchObject({ from: 'site@example.com', to: ['owner@example.com'] });
    const parsed = parseMail(mail!.raw);
    expect(parsed.header('to')).toEqual(['owner@example.com']);
    expect(parsed.header('from')).toEqual([`${settings.senderName} <site@example.com>`]);
    expect(parsed.header('reply-to')).toEqual([`${name} <ada@example.org>`]);
    expect(parsed.header('subject')).toEqual([`[${settings.name}] New message from ${name}`]);
    expect(parsed.text).toMatch(
      new RegExp(`^${valid.message}\\n\\n-- \\nFrom: ${name} <ada@example\\.org>\\nSent: \\d{1,2} \\S+ \\d{4} at \\d\\d:\\d\\d UTC `, 'u'),
    );

    const [row] = await eventually('the message to be marked sent', () => submissions(s.dataDir)[0]?.status === 'sent' && submissions(s.dataDir));
    expect(parsed.header('message-id')).toEqual([`<contact-${row!.id}.${Date.parse(row!.created_at)}@example.com>`]);
    expect(smtp.received).toHaveLength(1);
  });

  test('a 4xx reply is retried and the message delivered exactly once', async () => {
    const smtp = await smtpServer({ answer: (attempt) => (attempt === 1 ? { code: 451, message: '4.7.1 Greylisted, try again later' } : 'accept') });
    const s = await site({ SMTP_URL: smtp.url(), ...addresses, ...fast });
    await post(s);

    await eventually('the message to be marked sent', () => submissions(s.dataDir)[0]?.status === 'sent');
    expect(smtp.attempts()).toBe(2);
    expect(smtp.received).toHaveLength(1);
    expect(history(s.dataDir, submissions(s.dataDir)[0]!.id)).toEqual(['retrying', 'sent']);
    expect(s.logs).toContainEqual(expect.objectContaining({ event: 'contact.delivery_retry', level: 'warn', reason: expect.stringContaining('451') }));
  });

  test('a 5xx reply ends "failed" with the reason, logged as an error and visible in inbox list', async () => {
    const smtp = await smtpServer({ answer: () => ({ code: 550, message: '5.1.1 Mailbox unavailable' }) });
    const s = await site({ SMTP_URL: smtp.url(), ...addresses, ...fast });
    await post(s);

    const [row] = await eventually('the message to be marked failed', () => submissions(s.dataDir)[0]?.status === 'failed' && submissions(s.dataDir));
    expect(row).toMatchObject({ attempts: 1, last_error: expect.stringContaining('550') });
    expect(smtp.attempts()).toBe(1);
    // The log line is written just after the row is updated: wait for it too.
    await eventually('the failure to be logged', () =>
      s.logs.some((l) => typeof l === 'object' && l.event === 'contact.delivery_failed' && l.level === 'error' && l.id === row!.id),
    );

    // While the server runs, as an owner would.
    const list = await runInbox(['list'], { DATA_DIR: s.dataDir });
    expect(list).toMatchObject({ code: 0, stderr: '' });
    expect(list.stdout).toMatch(new RegExp(`^${row!.id}\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s+Ada Lovelace\\s+ada@example\\.org\\s+failed$`, 'm'));
  });

  test('with the mail server down, then up again, the message is delivered exactly once after it recovers', async () => {
    const port = await freePort();
    const s = await site({ SMTP_URL: `smtp://127.0.0.1:${port}`, ...addresses, ...fast });
    await post(s);
    // An attempt is counted as it starts: the failure is its recorded error.
    await eventually('a failed attempt', () => Boolean(submissions(s.dataDir)[0]?.last_error));
    expect(submissions(s.dataDir)[0]).toMatchObject({ status: 'pending', last_error: expect.stringContaining('ECONNREFUSED') });

    const smtp = await smtpServer({ port });
    await eventually('the message to be marked sent', () => submissions(s.dataDir)[0]?.status === 'sent');
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]?.to).toEqual(['owner@example.com']);
  });

  test.each([
    ['right after answering 200', false],
    ['while it talks to the mail server', true],
  ])('a server killed with SIGKILL %s delivers the message once started again', async (_, waitForConnection) => {
    const dir = dataDir();
    const silent = await startSilentServer();
    cleanup.push(() => silent.close());
    const first = await site({ SMTP_URL: `smtp://127.0.0.1:${silent.port}`, ...addresses, ...fast }, { dataDir: dir });
    await post(first);
    if (waitForConnection) await eventually('the worker to connect', () => silent.connections() >= 1);
    first.process.kill('SIGKILL');
    await first.stop();
    expect(submissions(dir)).toEqual([expect.objectContaining({ status: 'pending' })]);

    const smtp = await smtpServer();
    const second = await site({ SMTP_URL: smtp.url(), ...addresses, ...fast }, { dataDir: dir });
    await eventually('the message to be marked sent', () => submissions(dir)[0]?.status === 'sent');
    expect(smtp.received).toHaveLength(1);
    expect(second.logs).toContainEqual(expect.objectContaining({ event: 'contact.delivery_started', pending: 1 }));
  });

  test('on SIGTERM the message being sent is finished and recorded before the server exits', async () => {
    let dataStarted = false;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const smtp = await smtpServer({
      answer: async (): Promise<SmtpAnswer> => {
        dataStarted = true;
        await gate;
        return 'accept';
      },
    });
    const dir = dataDir();
    const s = await site({ SMTP_URL: smtp.url(), ...addresses }, { dataDir: dir });
    await post(s);
    await eventually('the message to be handed over', () => dataStarted);

    const exited = s.stop('SIGTERM');
    await eventually('the server to begin stopping', () => s.logs.some((l) => typeof l === 'object' && l.event === 'server.stopping'));
    release();
    await expect(exited).resolves.toBe(0);
    expect(submissions(dir)).toEqual([expect.objectContaining({ status: 'sent', attempts: 1 })]);
    expect(smtp.received).toHaveLength(1);
  });

  test('without SMTP_URL messages are stored, not sent, and the start-up log says so in one line', async () => {
    const s = await site({ ...addresses });
    await post(s);
    expect(s.logs.filter((l) => typeof l === 'object' && l.event === 'contact.smtp_off')).toHaveLength(1);
    expect(s.logs).not.toContainEqual(expect.objectContaining({ event: 'contact.delivery_started' }));
    expect(submissions(s.dataDir)).toEqual([expect.objectContaining({ status: 'pending', attempts: 0 })]);
  });
});

describe.skipIf(!opensslAvailable)('a mail server whose certificate we cannot trust', () => {
  test.each([
    ['STARTTLS', false],
    ['smtps', true],
  ])('over %s: each message fails at once, the log says once what to set, and with SMTP_TLS_CA_FILE a retry delivers', async (_, secure) => {
    const { selfSigned } = makeCertificates();
    const smtp = await smtpServer({ tls: { ...selfSigned, secure } });
    const dir = dataDir();
    const first = await site({ SMTP_URL: smtp.url(), ...addresses, ...fast }, { dataDir: dir });
    await post(first);
    await post(first);

    const rows = await eventually(
      'both messages to be marked failed',
      () => submissions(dir).every((r) => r.status === 'failed') && submissions(dir).length === 2 && submissions(dir),
    );
    expect(rows.map((r) => [r.attempts, r.last_error])).toEqual([
      [
        1,
        "ESOCKET DEPTH_ZERO_SELF_SIGNED_CERT: the mail server's TLS certificate is self-signed (self-signed certificate); set SMTP_TLS_CA_FILE to its CA's certificate",
      ],
      [
        1,
        "ESOCKET DEPTH_ZERO_SELF_SIGNED_CERT: the mail server's TLS certificate is self-signed (self-signed certificate); set SMTP_TLS_CA_FILE to its CA's certificate",
      ],
    ]);
    await eventually('both failures to be logged', () => first.logs.filter((l) => typeof l === 'object' && l.event === 'contact.delivery_failed').length === 2);
    expect(first.logs.filter((l) => typeof l === 'object' && l.event === 'contact.smtp_misconfigured')).toEqual([
      expect.objectContaining({
        level: 'error',
        fix: "set SMTP_TLS_CA_FILE to the certificate of the CA that signed the mail server's certificate (to its own certificate if it is self-signed), restart, then npm run inbox -- retry <id> for each failed message",
      }),
    ]);
    await first.stop();

    const caFile = `${dataDir()}/mail-server.pem`;
    writeFileSync(caFile, selfSigned.cert);
    const second = await site({ SMTP_URL: smtp.url(), ...addresses, ...fast, SMTP_TLS_CA_FILE: caFile }, { dataDir: dir });
    for (const row of rows) expect(await runInbox(['retry', String(row.id)], { DATA_DIR: dir })).toMatchObject({ code: 0 });
    await eventually('both messages to be sent', () => submissions(dir).every((r) => r.status === 'sent'));
    expect(smtp.received).toHaveLength(2);
    expect(second.logs).toContainEqual(
      expect.objectContaining({ event: 'server.config', smtp: expect.objectContaining({ certificate: `checked, also trusting ${caFile}` }) }),
    );
  });
});
