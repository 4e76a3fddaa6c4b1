import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli } from '../contact/run-inbox.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../support/fake-http.ts';
import { clamdAvailable, startClamd } from '../support/clamd.ts';
import { type RedisServer, redisAvailable, startRedis } from '../support/redis.ts';
import { startS3 } from '../support/s3.ts';
import { type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';

/** `npm run doctor` as an owner runs it: every part it checks, against real servers on 127.0.0.1. */
let dataDir: string;
let smtp: FakeSmtpServer;
let mailchimp: FakeHttpServer;
let redis: RedisServer | undefined;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'site-forms-doctor-'));
  smtp = await startSmtpServer();
  mailchimp = await startFakeHttpServer(replyJson(200, { id: 'abc123' }));
  if (redisAvailable) redis = await startRedis();
});
afterAll(async () => {
  await Promise.all([smtp.close(), mailchimp.close(), redis?.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
});

const KEY = 'doctor-secret-0123456789-us21';
const lines = (stdout: string) => stdout.trimEnd().split('\n');

describe('npm run doctor', () => {
  test('with the embedded defaults: the configuration and the database are fine, mail and Redis off, the local list', async () => {
    const run = await runCli('doctor', [], { DATA_DIR: dataDir });
    expect(run.code).toBe(0);
    expect(lines(run.stdout)).toEqual([
      'ok       configuration  every variable is valid',
      'off      origins        ALLOWED_ORIGINS is not set: only this site’s own pages may post the forms; a post from any other site is refused',
      `ok       database       SQLite at ${join(dataDir, 'forms.db')}: writable, integrity ok, 0 waiting to be sent, 0 failed`,
      'off      mail           SMTP_URL is not set: contact messages are stored, not emailed',
      'off      redis          REDIS_URL is not set: each instance counts its own rate limits',
      'ok       newsletter     local list: subscribers are kept in the database',
      `ok       files          the folder ${join(dataDir, 'files')}: a probe was written, read back and removed`,
      'off      virus scan     CLAMD_SOCKET and CLAMD_HOST are not set: files are not scanned',
    ]);
  });

  test.skipIf(!redisAvailable)('with every part configured and reachable: each is checked and answers, and no secret is printed', async () => {
    const run = await runCli('doctor', [], {
      DATA_DIR: dataDir,
      SMTP_URL: smtp.url(),
      CONTACT_TO: 'owner@example.com',
      CONTACT_FROM: 'site@example.com',
      REDIS_URL: redis!.url,
      MAILCHIMP_API_KEY: KEY,
      MAILCHIMP_LIST_ID: 'abc123',
      MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0`,
    });
    expect(run.code).toBe(0);
    expect(lines(run.stdout).map((line) => line.slice(0, 24))).toEqual([
      'ok       configuration  ',
      'off      origins        ',
      'ok       database       ',
      'ok       mail           ',
      'ok       redis          ',
      'ok       newsletter     ',
      'ok       files          ',
      'off      virus scan     ',
    ]);
    expect(run.stdout).toContain('messages go to owner@example.com');
    expect(mailchimp.requests.at(-1)).toMatchObject({ method: 'GET', url: '/3.0/lists/abc123?fields=id' });
    expect(smtp.received).toEqual([]);
    expect(run.stdout + run.stderr).not.toContain('0123456789');
  });

  test('a refused key and an unreachable Redis are errors naming what to fix, and the exit code says so', async () => {
    mailchimp.reply(replyJson(401, { title: 'API Key Invalid', detail: `Your API key ${KEY} may be invalid` }));
    const run = await runCli('doctor', [], {
      DATA_DIR: dataDir,
      REDIS_URL: 'redis://127.0.0.1:9',
      MAILCHIMP_API_KEY: KEY,
      MAILCHIMP_LIST_ID: 'abc123',
      MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0`,
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('ERROR    redis          redis://127.0.0.1:9: ');
    expect(run.stdout).toContain('ERROR    newsletter     mailchimp: MAILCHIMP_API_KEY was refused (HTTP 401: the key was refused)');
    expect(run.stdout).not.toContain('0123456789');
  });

  test('the object store and clamd: checked with a probe and a PING when reachable, errors naming the step when not', async () => {
    const s3 = await startS3('doctor-files');
    const clamd = clamdAvailable ? await startClamd() : undefined;
    try {
      const env = { DATA_DIR: dataDir, S3_ENDPOINT: s3.endpoint, S3_BUCKET: 'doctor-files', S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER' };
      const good = await runCli('doctor', [], { ...env, ...(clamd ? { CLAMD_SOCKET: clamd.socket } : {}) });
      expect(lines(good.stdout).slice(-2)).toEqual([
        `ok       files          the bucket doctor-files at ${s3.endpoint}: a probe was written, read back and removed`,
        ...(clamd
          ? [`ok       virus scan     clamd at ${clamd.socket}: answered PING`]
          : ['off      virus scan     CLAMD_SOCKET and CLAMD_HOST are not set: files are not scanned']),
      ]);
      expect(good.stdout + good.stderr).not.toContain('S3RVER');
      const bad = await runCli('doctor', [], { ...env, S3_BUCKET: 'no-such-bucket', CLAMD_HOST: '127.0.0.1', CLAMD_PORT: '9' });
      expect(bad.code).toBe(1);
      expect(
        lines(bad.stdout)
          .slice(-2)
          .map((line) => line.slice(0, 72)),
      ).toEqual([
        `ERROR    files          the bucket no-such-bucket at ${s3.endpoint}: write: `.slice(0, 72),
        'ERROR    virus scan     clamd at 127.0.0.1:9: clamd cannot be reached: ECONNREFUSED'.slice(0, 72),
      ]);
    } finally {
      await s3.stop();
      await clamd?.stop();
    }
  }, 60_000);

  test('a bad configuration is every problem, one line each, and nothing else is tried', async () => {
    const run = await runCli('doctor', [], { DATA_DIR: dataDir, PORT: 'eighty', NEWSLETTER_PROVIDER: 'kit' });
    expect(run.code).toBe(1);
    expect(lines(run.stdout)).toEqual([
      'ERROR    configuration  PORT must be a whole number',
      'ERROR    configuration  KIT_API_KEY is required when NEWSLETTER_PROVIDER is kit',
      'ERROR    configuration  KIT_FORM_ID is required when NEWSLETTER_PROVIDER is kit',
    ]);
  });
});
