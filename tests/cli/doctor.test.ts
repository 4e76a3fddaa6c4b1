import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli } from '../contact/run-inbox.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../support/fake-http.ts';
import { type RedisServer, redisAvailable, startRedis } from '../support/redis.ts';
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
      `ok       database       SQLite at ${join(dataDir, 'forms.db')}: writable, integrity ok, 0 waiting to be sent, 0 failed`,
      'off      mail           SMTP_URL is not set: contact messages are stored, not emailed',
      'off      redis          REDIS_URL is not set: each instance counts its own rate limits',
      'ok       newsletter     local list: subscribers are kept in the database',
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
      'ok       database       ',
      'ok       mail           ',
      'ok       redis          ',
      'ok       newsletter     ',
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
