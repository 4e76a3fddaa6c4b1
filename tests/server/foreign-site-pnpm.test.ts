import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type ForeignServer, type ForeignSite, makeForeignSite } from '../support/foreign-site.ts';
import { parseMail } from '../support/mime.ts';
import { eventually, type FakeSmtpServer, freePort, startSmtpServer } from '../support/smtp.ts';

/**
 * The foreign shop (tests/support/foreign-site.ts) installed with pnpm 10 and its strictest
 * node_modules (`hoist=false`: a package finds only what it declares, not even what the store
 * hoists for it), built with `pnpm exec astro build` and served standalone (issue 40 item 4). The
 * build and one contact post prove what strictness would break: a run-time import of a package we
 * do not declare fails the owner's build ("Cannot find package 'vite'"), or the owner's server as
 * it starts ("Cannot find module 'nodemailer'" from their dist/server). The whole suite runs
 * with npm (foreign-site.test.ts); `FOREIGN_PM=pnpm npm run test:foreign` runs it all with pnpm.
 */

const OWNER = 'inhaber@lindner.example';
let shop: ForeignSite;
let smtp: FakeSmtpServer;
let server: ForeignServer;

beforeAll(async () => {
  shop = makeForeignSite(['standalone'], {}, { manager: 'pnpm' });
  console.log(
    `foreign site (pnpm): npm pack ${shop.timings.pack} ms, pnpm install ${shop.timings.install} ms, astro build ${shop.timings.build.standalone} ms`,
  );
  smtp = await startSmtpServer();
  const port = await freePort();
  server = await shop.start({
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    SMTP_URL: smtp.url(),
    CONTACT_TO: OWNER,
    CONTACT_FROM: 'website@lindner.example',
    // A post from a script carries no browser proof: with the filter on it would be held, not mailed.
    SPAM_FILTER: 'off',
    RATE_LIMIT_MAX: '0',
    NEWSLETTER_PROVIDER: 'local',
  });
}, 900_000);

afterAll(async () => {
  await server?.stop();
  await smtp?.close();
  shop?.remove();
});

test('installed with pnpm (hoist=false), the shop’s build serves a contact post: 200, stored, mailed to the owner', async () => {
  const answer = await fetch(`${server.url}/api/contact`, {
    method: 'POST',
    body: new URLSearchParams({ name: 'Pia Pnpm', email: 'pia@example.org', message: 'Eine Frage aus einem pnpm-Laden.' }),
    headers: { accept: 'application/json' },
  });
  expect([answer.status, await answer.text()]).toEqual([200, '{"success":true}']);
  const db = new DatabaseSync(join(server.dataDir, 'forms.db'), { readOnly: true });
  try {
    expect(db.prepare('SELECT email FROM submissions WHERE name = ?').all('Pia Pnpm')).toEqual([{ email: 'pia@example.org' }]);
  } finally {
    db.close();
  }
  const mail = await eventually('the owner’s mail', () => smtp.received.find((m) => m.raw.includes('Pia Pnpm')));
  expect(parseMail(mail.raw).header('to')).toEqual([OWNER]);
});

test('a client the shop did not install (PostgreSQL, Redis, S3, Mailchimp) stops the start with the package each setting needs', async () => {
  const start = shop.start({
    DATABASE_URL: 'postgres://forms:secret@127.0.0.1:1/forms',
    REDIS_URL: 'redis://127.0.0.1:1',
    S3_ENDPOINT: 'http://127.0.0.1:1',
    S3_BUCKET: 'uploads',
    NEWSLETTER_PROVIDER: 'mailchimp',
    MAILCHIMP_API_KEY: 'key-us21',
    MAILCHIMP_LIST_ID: 'list',
    SMTP_URL: smtp.url(),
    CONTACT_TO: OWNER,
    CONTACT_FROM: 'website@lindner.example',
  });
  const output = await start.then(
    async (started) => {
      await started.stop();
      return 'it started';
    },
    (error: Error) => error.message,
  );
  for (const [setting, name] of [
    ['DATABASE_URL', 'pg'],
    ['REDIS_URL', 'ioredis'],
    ['S3_ENDPOINT', '@aws-sdk/client-s3'],
    ['NEWSLETTER_PROVIDER=mailchimp', '@mailchimp/mailchimp_marketing'],
  ])
    expect(output).toContain(`${setting} needs the package ${name}, which is not installed in this project: npm install ${name} (or pnpm add ${name})`);
  expect(output).not.toContain('secret');
});
