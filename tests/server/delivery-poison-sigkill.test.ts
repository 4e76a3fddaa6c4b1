import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { openStore } from '../../packages/site-forms/src/lib/database/database.ts';
import { createLogger } from '../../packages/site-forms/src/lib/log.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';
import { TEST_DATABASE } from '../support/stores.ts';

// A poison message: its send kills the server every time (here a SIGKILL while the mail server
// holds DATA). Each try is counted as it is claimed, so after DELIVERY_MAX_ATTEMPTS starts the
// message is held as failed, as the admin and `npm run inbox` list it, instead of a crash loop.
const dataDir = mkdtempSync(join(tmpdir(), 'site-forms-poison-'));
let smtp: FakeSmtpServer;
const sites: Site[] = [];
afterAll(async () => {
  for (const site of sites) await site.stop('SIGKILL').catch(() => {});
  await smtp?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a message whose send kills the server, again and again', () => {
  test('is tried DELIVERY_MAX_ATTEMPTS times, then held as failed and logged, and never sent again', async () => {
    // DATA is never answered: each instance is killed in the middle of its send.
    smtp = await startSmtpServer({ answer: () => new Promise(() => {}) });
    const env = {
      SMTP_URL: smtp.url(),
      CONTACT_TO: 'owner@example.com',
      CONTACT_FROM: 'site@example.com',
      DELIVERY_MAX_ATTEMPTS: '3',
    };
    for (let start = 1; start <= 3; start++) {
      const site = await startSite(env, { dataDir });
      sites.push(site);
      if (start === 1) {
        const posted = await postForm(`${site.url}/api/contact`, {
          name: 'Ada Lovelace',
          email: 'ada@example.org',
          message: 'A message no send survives.',
          honeypot: '',
        });
        expect(posted.status).toBe(200);
      }
      await eventually(`send ${start} to reach DATA`, () => smtp.attempts() === start);
      await site.stop('SIGKILL');
    }

    const last = await startSite(env, { dataDir });
    sites.push(last);
    await eventually('the message to be given up', () => last.logs.find((line) => typeof line === 'object' && line.event === 'contact.delivery_failed'));
    expect(last.logs.filter((line) => typeof line === 'object' && line.event === 'contact.delivery_failed')).toEqual([
      expect.objectContaining({
        level: 'error',
        id: 1,
        attempts: 3,
        reason: 'gave up after 3 attempts that never ended (the server stopped during each send)',
      }),
    ]);
    await last.stop();
    expect(smtp.attempts()).toBe(3);

    const store = openStore({ ...TEST_DATABASE, url: undefined, dataDir }, createLogger({ level: 'silent' }));
    await store.ready;
    await expect(store.outbox.find(1)).resolves.toMatchObject({ status: 'failed', attempts: 3, sentAt: null });
    await expect(store.outbox.failedCount()).resolves.toBe(1);
    await store.close();
  });
});

describe('a lease shorter than a send', () => {
  test('stops the start naming DELIVERY_LEASE_MS, since a second send could begin while the first still talks to the mail server', async () => {
    const env = { SMTP_URL: 'smtp://127.0.0.1:9', CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'site@example.com', DELIVERY_LEASE_MS: '30000' };
    await expect(startSite(env)).rejects.toThrow(/DELIVERY_LEASE_MS must be more than 45000 when SMTP_URL is set/);
  });
});
