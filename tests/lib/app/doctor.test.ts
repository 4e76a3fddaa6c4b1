import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { diagnose, formatFindings } from '../../../packages/site-forms/src/lib/app/doctor.ts';
import { requireConfig, storeOptionsOf } from '../../../packages/site-forms/src/lib/config/config.ts';
import { openStore } from '../../../packages/site-forms/src/lib/database/database.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { makeCertificates, opensslAvailable } from '../../support/certificates.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';
import { type RedisServer, redisAvailable, startRedis } from '../../support/redis.ts';
import { eventually, type FakeSmtpServer, freePort, startSmtpServer } from '../../support/smtp.ts';

/**
 * `npm run doctor`'s checks in this process (tests/cli/doctor.test.ts runs the command itself):
 * each part against a real SQLite file in a temporary folder, the test SMTP server, a real
 * redis-server and a fake Mailchimp on 127.0.0.1, and the exact finding each one gives.
 */
const OWNER = { CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'site@example.com' };
const CREDENTIALS = { user: 'forms', pass: 'mail-secret-42' };
const KEY = 'doctor-secret-0123456789-us21';

let smtp: FakeSmtpServer;
let mailchimp: FakeHttpServer;
let redis: RedisServer | undefined;
beforeAll(async () => {
  smtp = await startSmtpServer({ credentials: CREDENTIALS });
  mailchimp = await startFakeHttpServer();
  if (redisAvailable) redis = await startRedis();
});
afterAll(async () => {
  await Promise.all([smtp.close(), mailchimp.close(), redis?.stop()]);
});

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'site-forms-doctor-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dataDir, { recursive: true, force: true });
});

/** What the doctor says of the origins when ALLOWED_ORIGINS is not set. */
const ORIGINS_OFF = 'ALLOWED_ORIGINS is not set: only this site’s own pages may post the forms; a post from any other site is refused';

const finding = async (env: NodeJS.ProcessEnv, part: string) => (await diagnose({ DATA_DIR: dataDir, ...env })).find((f) => f.part === part);

describe('the configuration', () => {
  test('with the defaults: every part in order, the database checked, mail and Redis off, the local list', async () => {
    await expect(diagnose({ DATA_DIR: dataDir })).resolves.toEqual([
      { part: 'configuration', result: 'ok', detail: 'every variable is valid' },
      { part: 'origins', result: 'off', detail: ORIGINS_OFF },
      { part: 'database', result: 'ok', detail: `SQLite at ${dataDir}/forms.db: writable, integrity ok, 0 waiting to be sent, 0 failed` },
      { part: 'mail', result: 'off', detail: 'SMTP_URL is not set: contact messages are stored, not emailed' },
      { part: 'redis', result: 'off', detail: 'REDIS_URL is not set: each instance counts its own rate limits' },
      { part: 'newsletter', result: 'ok', detail: 'local list: subscribers are kept in the database' },
      { part: 'files', result: 'ok', detail: `the folder ${dataDir}/files: a probe was written, read back and removed` },
      { part: 'virus scan', result: 'off', detail: 'CLAMD_SOCKET and CLAMD_HOST are not set: files are not scanned' },
    ]);
  });

  test('a bad configuration is one error per problem, and nothing else is tried: no database is created', async () => {
    await expect(diagnose({ DATA_DIR: dataDir, PORT: 'eighty', NEWSLETTER_PROVIDER: 'kit' })).resolves.toEqual([
      { part: 'configuration', result: 'error', detail: 'PORT must be a whole number' },
      { part: 'configuration', result: 'error', detail: 'KIT_API_KEY is required when NEWSLETTER_PROVIDER is kit' },
      { part: 'configuration', result: 'error', detail: 'KIT_FORM_ID is required when NEWSLETTER_PROVIDER is kit' },
    ]);
    expect(existsSync(join(dataDir, 'forms.db'))).toBe(false);
  });
});

describe('the origins (issue 39 item 9c)', () => {
  test('the allowed origins are named, with this site’s own address when PUBLIC_URL gives it', async () => {
    await expect(
      finding({ ALLOWED_ORIGINS: 'https://www.example.org, https://example.org', PUBLIC_URL: 'https://forms.example.com' }, 'origins'),
    ).resolves.toEqual({
      part: 'origins',
      result: 'ok',
      detail:
        'posts are taken from https://www.example.org and https://example.org (ALLOWED_ORIGINS) and from this site’s own pages at https://forms.example.com; a post from any other site is refused and logged as form.origin_refused',
    });
  });

  test('without PUBLIC_URL, this site’s own pages by no address', async () => {
    await expect(finding({ ALLOWED_ORIGINS: 'https://www.example.org' }, 'origins')).resolves.toMatchObject({
      result: 'ok',
      detail:
        'posts are taken from https://www.example.org (ALLOWED_ORIGINS) and from this site’s own pages; a post from any other site is refused and logged as form.origin_refused',
    });
  });
});

describe('the database', () => {
  test('a new database is created and closed again, without a log line among the findings on stdout', async () => {
    const write = vi.spyOn(process.stdout, 'write');
    await expect(finding({}, 'database')).resolves.toMatchObject({ result: 'ok' });
    expect(existsSync(join(dataDir, 'forms.db'))).toBe(true);
    // Closing the last connection checkpoints the write-ahead log and removes it.
    expect(existsSync(join(dataDir, 'forms.db-wal'))).toBe(false);
    expect(write.mock.calls.filter(([chunk]) => String(chunk).includes('"event"'))).toEqual([]);
  });

  test('a database with messages: how many wait and how many failed', async () => {
    const store = openStore(storeOptionsOf(requireConfig({ DATA_DIR: dataDir })), silentLogger);
    const first = await store.submissions.save({ name: 'Ada', email: 'ada@example.org', message: 'Hello from Ada.', honeypot: '' });
    await store.submissions.save({ name: 'Grace', email: 'grace@example.org', message: 'Hello from Grace.', honeypot: '' });
    await store.submissions.save({ name: 'Linus', email: 'linus@example.org', message: 'Hello from Linus.', honeypot: '' });
    await store.outbox.markFailed(first, new Date(), '550 mailbox unavailable');
    await store.close();
    await expect(finding({}, 'database')).resolves.toEqual({
      part: 'database',
      result: 'ok',
      detail: `SQLite at ${dataDir}/forms.db: writable, integrity ok, 2 waiting to be sent, 1 failed`,
    });
  });

  test('a file that fails its integrity check is an error saying so', async () => {
    // An index whose definition no longer matches its entries, as a damaged file can have.
    const damaged = new DatabaseSync(join(dataDir, 'forms.db'), { defensive: false });
    damaged.exec('CREATE TABLE extra (a); CREATE INDEX extra_a ON extra (a); INSERT INTO extra VALUES (1), (2), (3); PRAGMA writable_schema = ON');
    damaged.exec("UPDATE sqlite_schema SET sql = 'CREATE INDEX extra_a ON extra (a DESC)' WHERE name = 'extra_a'");
    damaged.close();
    await expect(finding({}, 'database')).resolves.toEqual({
      part: 'database',
      result: 'error',
      detail: `SQLite at ${dataDir}/forms.db: The SQLite database failed its integrity check at start`,
    });
  });

  test('a forms.db that is not SQLite is an error naming the file, and the other parts are still checked', async () => {
    writeFileSync(join(dataDir, 'forms.db'), 'These are notes, not a database. '.repeat(10));
    await expect(diagnose({ DATA_DIR: dataDir })).resolves.toEqual([
      { part: 'configuration', result: 'ok', detail: 'every variable is valid' },
      { part: 'origins', result: 'off', detail: ORIGINS_OFF },
      { part: 'database', result: 'error', detail: `SQLite at ${dataDir}/forms.db: Error: file is not a database` },
      { part: 'mail', result: 'off', detail: 'SMTP_URL is not set: contact messages are stored, not emailed' },
      { part: 'redis', result: 'off', detail: 'REDIS_URL is not set: each instance counts its own rate limits' },
      { part: 'newsletter', result: 'ok', detail: 'local list: subscribers are kept in the database' },
      { part: 'files', result: 'ok', detail: `the folder ${dataDir}/files: a probe was written, read back and removed` },
      { part: 'virus scan', result: 'off', detail: 'CLAMD_SOCKET and CLAMD_HOST are not set: files are not scanned' },
    ]);
  });

  test('a DATA_DIR that is a file is an error, not a crash', async () => {
    const file = join(dataDir, 'data');
    writeFileSync(file, 'not a folder');
    await expect(finding({ DATA_DIR: file }, 'database')).resolves.toEqual({
      part: 'database',
      result: 'error',
      detail: `SQLite at ${file}/forms.db: Error: EEXIST: file already exists, mkdir '${file}'`,
    });
  });

  test('a PostgreSQL server that cannot be reached is an error, its address without the password', async () => {
    const port = await freePort();
    await expect(finding({ DATABASE_URL: `postgres://forms:db-secret@127.0.0.1:${port}/forms` }, 'database')).resolves.toEqual({
      part: 'database',
      result: 'error',
      detail: `PostgreSQL at postgres://***:***@127.0.0.1:${port}/forms: Error: connect ECONNREFUSED 127.0.0.1:${port}`,
    });
  });
});

describe('the mail server', () => {
  test('signs in without sending anything, and says where the messages go; the password is not shown', async () => {
    await expect(finding({ ...OWNER, SMTP_URL: smtp.url(CREDENTIALS) }, 'mail')).resolves.toEqual({
      part: 'mail',
      result: 'ok',
      detail: `smtp://***:***@127.0.0.1:${smtp.port}: connected and signed in; messages go to owner@example.com`,
    });
    expect(smtp.received).toEqual([]);
  });

  test('a refused password is an error: a retry cannot cure it', async () => {
    await expect(finding({ ...OWNER, SMTP_URL: smtp.url({ user: 'forms', pass: 'wrong' }) }, 'mail')).resolves.toEqual({
      part: 'mail',
      result: 'error',
      detail: `smtp://***:***@127.0.0.1:${smtp.port}: EAUTH 535: 535 Invalid username or password`,
    });
  });

  test('a server that does not answer is a warning: it may come back', async () => {
    const port = await freePort();
    await expect(finding({ ...OWNER, SMTP_URL: `smtp://127.0.0.1:${port}` }, 'mail')).resolves.toEqual({
      part: 'mail',
      result: 'warning',
      detail: `smtp://127.0.0.1:${port}: ESOCKET: connect ECONNREFUSED 127.0.0.1:${port}`,
    });
  });

  test.skipIf(!opensslAvailable)('a certificate nobody trusts is an error, with what to change after the reason', async () => {
    const tls = await startSmtpServer({ tls: { ...makeCertificates().selfSigned, secure: true } });
    try {
      await expect(finding({ ...OWNER, SMTP_URL: tls.url() }, 'mail')).resolves.toEqual({
        part: 'mail',
        result: 'error',
        detail:
          `smtps://127.0.0.1:${tls.port}: ESOCKET DEPTH_ZERO_SELF_SIGNED_CERT: the mail server's TLS certificate is self-signed (self-signed certificate);` +
          " set SMTP_TLS_CA_FILE to its CA's certificate (set SMTP_TLS_CA_FILE to the certificate of the CA that signed the mail server's certificate" +
          ' (to its own certificate if it is self-signed), restart, then npm run inbox -- retry <id> for each failed message)',
      });
    } finally {
      await tls.close();
    }
  });
});

describe('Redis', () => {
  test('nothing listening: an error with the connection’s own cause, not the failed command’s', async () => {
    const port = await freePort();
    await expect(finding({ REDIS_URL: `redis://127.0.0.1:${port}` }, 'redis')).resolves.toEqual({
      part: 'redis',
      result: 'error',
      detail: `redis://127.0.0.1:${port}: Error: connect ECONNREFUSED 127.0.0.1:${port}`,
    });
  });

  describe.skipIf(!redisAvailable)('a real redis-server', () => {
    let admin: Redis;
    beforeEach(() => {
      admin = new Redis(redis!.url);
    });
    afterEach(async () => {
      await admin.config('SET', 'requirepass', '').catch(() => {});
      admin.disconnect();
    });
    const clients = async () => /connected_clients:(\d+)/.exec(await admin.info('clients'))?.[1];

    test('answers, its password hidden, and the check leaves no connection open', async () => {
      await eventually('only this test’s own connection', async () => (await clients()) === '1', 3_000);
      await expect(finding({ REDIS_URL: `redis://:redis-secret@127.0.0.1:${redis!.port}` }, 'redis')).resolves.toEqual({
        part: 'redis',
        result: 'ok',
        detail: `redis://:***@127.0.0.1:${redis!.port}: answered`,
      });
      await eventually('the check’s connection to close', async () => (await clients()) === '1', 3_000);
    });

    test('a refused password is an error with Redis’s own words', async () => {
      await admin.config('SET', 'requirepass', 'redis-secret');
      await admin.auth('redis-secret');
      await expect(finding({ REDIS_URL: `redis://:wrong@127.0.0.1:${redis!.port}` }, 'redis')).resolves.toEqual({
        part: 'redis',
        result: 'error',
        detail: `redis://:***@127.0.0.1:${redis!.port}: ReplyError: WRONGPASS invalid username-password pair or user is disabled.`,
      });
    });
  });
});

describe('the newsletter provider', () => {
  const MAILCHIMP = () => ({ MAILCHIMP_API_KEY: KEY, MAILCHIMP_LIST_ID: 'abc123', MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0` });

  test('a key and list the provider accepts: ok, after one read-only request', async () => {
    mailchimp.reply(replyJson(200, { id: 'abc123' }));
    const before = mailchimp.requests.length;
    await expect(finding(MAILCHIMP(), 'newsletter')).resolves.toEqual({
      part: 'newsletter',
      result: 'ok',
      detail: 'mailchimp: the key and its list, form or segment were accepted',
    });
    expect(mailchimp.requests.slice(before).map((r) => [r.method, r.url, r.headers.authorization])).toEqual([
      ['GET', '/3.0/lists/abc123?fields=id', `apikey ${KEY}`],
    ]);
  });

  test('a refused key is an error naming the variable to fix', async () => {
    mailchimp.reply(replyJson(401, { title: 'API Key Invalid' }));
    await expect(finding(MAILCHIMP(), 'newsletter')).resolves.toEqual({
      part: 'newsletter',
      result: 'error',
      detail: 'mailchimp: MAILCHIMP_API_KEY was refused (HTTP 401: the key was refused)',
    });
  });

  test('a provider in trouble is only a warning', async () => {
    mailchimp.reply(replyJson(503, { title: 'Service Unavailable' }));
    await expect(finding(MAILCHIMP(), 'newsletter')).resolves.toEqual({
      part: 'newsletter',
      result: 'warning',
      detail: 'mailchimp: could not be reached (HTTP 503)',
    });
  });
});

describe('formatFindings', () => {
  test('one line per finding: its mark, the part in a column of 13, the detail', () => {
    expect(
      formatFindings([
        { part: 'configuration', result: 'ok', detail: 'every variable is valid' },
        { part: 'database', result: 'error', detail: 'SQLite at /data/forms.db: Error: file is not a database' },
        { part: 'mail', result: 'warning', detail: 'smtp://127.0.0.1:25: ESOCKET: connect ECONNREFUSED 127.0.0.1:25' },
        { part: 'redis', result: 'off', detail: 'REDIS_URL is not set: each instance counts its own rate limits' },
      ]),
    ).toBe(
      'ok       configuration  every variable is valid\n' +
        'ERROR    database       SQLite at /data/forms.db: Error: file is not a database\n' +
        'warning  mail           smtp://127.0.0.1:25: ESOCKET: connect ECONNREFUSED 127.0.0.1:25\n' +
        'off      redis          REDIS_URL is not set: each instance counts its own rate limits\n',
    );
    expect(formatFindings([])).toBe('');
  });
});
