import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { hashPassword } from '../../../packages/site-forms/src/lib/admin/password.ts';
import { createServices, type Services } from '../../../packages/site-forms/src/lib/app/services.ts';
import { requireConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';
import { eventually, type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';

/**
 * What createServices hands each part of the configuration, seen from outside: the address
 * Akismet is told, the export for spreadsheets, the provider's double opt-in, the signup
 * worker's wake-up, and the stop of the background work. Over a real SQLite file in a
 * temporary folder, the test SMTP server, and a fake Akismet and Mailchimp on 127.0.0.1.
 */
const MAIL = { CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'site@example.com' };
const ADA = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more.', honeypot: '' };
const BOM = '\uFEFF';

let smtp: FakeSmtpServer;
let akismet: FakeHttpServer;
let mailchimp: FakeHttpServer;
let receiver: FakeHttpServer;
let ownerHash: string;
beforeAll(async () => {
  smtp = await startSmtpServer();
  akismet = await startFakeHttpServer((_request, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('false');
  });
  mailchimp = await startFakeHttpServer(replyJson(200, { id: 'member-1', status: 'subscribed' }));
  receiver = await startFakeHttpServer(replyJson(200, {}));
  ownerHash = await hashPassword('correct horse battery staple');
});
afterAll(async () => {
  await Promise.all([smtp.close(), akismet.close(), mailchimp.close(), receiver.close()]);
});

let dataDir: string;
let services: Services | undefined;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'site-forms-wiring-'));
  akismet.requests.splice(0);
  mailchimp.requests.splice(0);
  receiver.requests.splice(0);
});
afterEach(async () => {
  await services?.close();
  services = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

let logs: Array<Record<string, unknown>>;
function build(env: Record<string, string>): Services {
  logs = [];
  const logger = createLogger({ level: 'info', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  services = createServices(requireConfig({ DATA_DIR: dataDir, ...env }), logger);
  return services;
}
const MAILCHIMP = { MAILCHIMP_API_KEY: 'key-us21', MAILCHIMP_LIST_ID: 'abc123' };

describe('Akismet', () => {
  const askAkismet = async (env: Record<string, string>) => {
    const s = build({ AKISMET_API_KEY: 'akismet-key', AKISMET_BASE_URL: akismet.url, HOST: '127.0.0.1', PORT: '4321', ...env });
    await expect(s.spam.service.akismet!.check({ name: 'Ada', email: 'ada@example.org', message: 'Hello', ip: '203.0.113.9' })).resolves.toEqual({
      ok: true,
      spam: false,
    });
    return akismet.requests.map((request) => new URLSearchParams(request.body).get('blog'));
  };

  test('is told the public address as the site', async () => {
    await expect(askAkismet({ PUBLIC_URL: 'https://forms.example.org' })).resolves.toEqual(['https://forms.example.org']);
  });

  test('without PUBLIC_URL, is told the address the server listens on', async () => {
    await expect(askAkismet({})).resolves.toEqual(['http://127.0.0.1:4321']);
  });
});

describe('the automatic reply', () => {
  test('with a mail server but no AUTO_REPLY, and no webhook, there is no webhook worker: nothing answers the visitor', () => {
    const s = build({ ...MAIL, SMTP_URL: smtp.url() });
    expect(s.worker).toBeDefined();
    expect(s.webhooks.worker).toBeUndefined();
  });
});

describe('the export of the admin', () => {
  const exported = async (s: Services, excel: boolean) => {
    let text = '';
    for await (const chunk of s.admin!.deps.exports.messages('csv', { excel })) text += chunk;
    return text;
  };

  test('the CSV for Excel starts with a byte-order mark; the plain CSV does not', async () => {
    const s = build({ ADMIN_PASSWORD_HASH: ownerHash });
    await s.submissions.save(ADA);
    const forExcel = await exported(s, true);
    const plain = await exported(s, false);
    expect([forExcel.startsWith(BOM), plain.startsWith(BOM)]).toEqual([true, false]);
    expect(forExcel).toContain('ada@example.org');
    expect(plain).toContain('ada@example.org');
  });
});

describe('the newsletter provider', () => {
  test('with NEWSLETTER_DOUBLE_OPT_IN, Mailchimp is asked for a pending member, which it confirms itself', async () => {
    const s = build({
      ...MAIL,
      SMTP_URL: smtp.url(),
      PUBLIC_URL: 'https://forms.example.org',
      NEWSLETTER_DOUBLE_OPT_IN: 'true',
      ...MAILCHIMP,
      MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0`,
    });
    await s.provider.subscribe('ada@example.org');
    expect(mailchimp.requests.map((request) => (JSON.parse(request.body) as { status: string }).status)).toEqual(['pending']);
  });

  test('a signup queued after the first pass goes out when the worker is poked, not at the next poll 30 s later', async () => {
    const s = build({ ...MAILCHIMP, MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0` });
    s.start();
    // A pass by hand joins the start's own: once it ends, the queue has been read empty.
    await s.signups.worker!.runPass();
    await s.signups.enqueue('ada@example.org', 'mailchimp', new Date(Date.now() - 3_600_000));
    s.signups.poke();
    await eventually('the provider’s request', () => mailchimp.requests.length === 1, 3_000);
    expect(mailchimp.requests[0]).toMatchObject({ method: 'POST', url: '/3.0/lists/abc123/members' });
  });
});

describe('stopping the background work', () => {
  test('answers one promise however often it is asked, and stops the housekeeping for good', async () => {
    const s = build({});
    const first = s.stopBackground();
    expect(first).toBeInstanceOf(Promise);
    expect(s.stopBackground()).toBe(first);
    await first;
    // A stopped scheduler refuses to start.
    expect(s.housekeeping.start()).toBe(false);
  });
});

describe('the files’ links', () => {
  test('last FILE_LINK_LIFETIME_SECONDS from the time they are signed', async () => {
    const s = build({ FILE_LINK_LIFETIME_SECONDS: '600' });
    // 2026-01-01T00:00:00Z is 1767225600 s after the epoch.
    await expect(s.files.links.sign('file-1', new Date('2026-01-01T00:00:00.000Z'))).resolves.toMatch(/\?expires=1767226200&signature=[0-9a-f]{64}$/);
  });
});

describe('the housekeeping', () => {
  test('without the admin, a pass still deletes the messages past RETENTION_DAYS and the old records of automatic replies', async () => {
    const s = build({ RETENTION_DAYS: '30' });
    const old = await s.submissions.save(ADA);
    const recent = await s.submissions.save({ ...ADA, name: 'Grace Hopper', email: 'grace@example.org' });
    await s.store.sql.run('UPDATE submissions SET created_at = ? WHERE id = ?', ['2025-01-01T00:00:00.000Z', old]);
    await s.store.sql.run('INSERT INTO auto_replies (address_hash, last_sent_at) VALUES (?, ?), (?, ?)', [
      'old-hash',
      '2025-01-01T00:00:00.000Z',
      'fresh-hash',
      new Date().toISOString(),
    ]);
    await s.housekeeping.runPass();
    await expect(s.store.sql.all('SELECT id FROM submissions ORDER BY id')).resolves.toEqual([{ id: recent }]);
    await expect(s.store.sql.all('SELECT address_hash FROM auto_replies')).resolves.toEqual([{ address_hash: 'fresh-hash' }]);
  });

  test('a job that fails is logged by its name, and the pass goes on', async () => {
    const s = build({});
    await s.store.sql.run('DROP TABLE auto_replies');
    await s.housekeeping.runPass();
    expect(logs.filter((line) => line.event === 'housekeeping.failed').map(({ level, job }) => ({ level, job }))).toEqual([
      { level: 'error', job: 'auto-reply-records' },
    ]);
  });
});

describe('webhooks of a message with files', () => {
  const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const FILE = {
    id: 'AbCdEfGhIjKlMnOpQrStUvWx',
    field: 'drawings',
    name: 'plan.pdf',
    size: 1_200,
    type: 'application/pdf',
    storageKey: '2026-11/AbCdEfGhIjKlMnOpQrStUvWx',
  };
  const filesSent = async (env: Record<string, string>) => {
    const s = build({ WEBHOOK_URL: `${receiver.url}/hook`, WEBHOOK_SECRET: SECRET, WEBHOOK_ALLOW_PRIVATE: 'true', ...env });
    await s.submissions.receive({ ...ADA, held: undefined, files: [FILE] });
    await s.webhooks.worker!.runPass();
    return receiver.requests.map((request) => (JSON.parse(request.body) as { data: { files?: unknown } }).data.files);
  };

  test('each file is a link absolute from PUBLIC_URL', async () => {
    await expect(filesSent({ PUBLIC_URL: 'https://forms.example.org' })).resolves.toEqual([
      [
        {
          name: 'plan.pdf',
          size: 1_200,
          type: 'application/pdf',
          url: expect.stringMatching(/^https:\/\/forms\.example\.org\/api\/files\/AbCdEfGhIjKlMnOpQrStUvWx\?expires=\d+&signature=[0-9a-f]{64}$/),
        },
      ],
    ]);
  });

  test('without PUBLIC_URL, the link is the path alone', async () => {
    await expect(filesSent({})).resolves.toEqual([
      [
        {
          name: 'plan.pdf',
          size: 1_200,
          type: 'application/pdf',
          url: expect.stringMatching(/^\/api\/files\/AbCdEfGhIjKlMnOpQrStUvWx\?expires=\d+&signature=[0-9a-f]{64}$/),
        },
      ],
    ]);
  });
});
