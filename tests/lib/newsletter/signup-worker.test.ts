import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createMailchimpProvider } from '../../../packages/site-forms/src/lib/newsletter/mailchimp.ts';
import { createSignupWorker } from '../../../packages/site-forms/src/lib/newsletter/signup-worker.ts';
import { createSignups } from '../../../packages/site-forms/src/lib/newsletter/signups.ts';
import { openStore } from '../../../packages/site-forms/src/lib/database/database.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';
import { TEST_DATABASE, testEngines } from '../../support/stores.ts';

// Two instances (two stores on one database, each with its own worker) against a real HTTP
// server standing in for Mailchimp: down for a while, then up.
let mailchimp: FakeHttpServer;
beforeAll(async () => {
  mailchimp = await startFakeHttpServer();
});
afterAll(() => mailchimp.close());

const silent = createLogger({ level: 'silent' });
const provider = () => createMailchimpProvider({ apiKey: 'key123-us21', listId: 'list42', baseUrl: `${mailchimp.url}/3.0` });
const added = () => mailchimp.requests.filter((r) => r.method === 'POST' && r.url === '/3.0/lists/list42/members');

describe.each(testEngines())('two instances retrying a signup on $name', (engine) => {
  test.skipIf(!engine.available)('a provider down then up: the signup waits, then reaches it exactly once', async () => {
    const { store, url, dataDir } = await engine.open();
    const other = openStore({ ...TEST_DATABASE, url, dataDir }, silent);
    await other.ready;
    const ours = createSignups(store.sql, { retryBaseMs: 1 });
    const workers = [ours, createSignups(other.sql, { retryBaseMs: 1 })].map((signups) =>
      createSignupWorker({ signups, provider: provider(), logger: silent }),
    );
    try {
      mailchimp.requests.length = 0;
      mailchimp.reply(replyJson(503, { title: 'Service Unavailable', status: 503 }));
      // Due already when the passes run.
      await ours.enqueue('ada@example.org', 'mailchimp', new Date(Date.now() - 1_000));
      await Promise.all(workers.map((w) => w.runPass()));
      expect(added().length).toBeGreaterThan(0);
      await expect(ours.pending(10)).resolves.toEqual([expect.objectContaining({ email: 'ada@example.org', status: 'waiting' })]);

      mailchimp.requests.length = 0;
      mailchimp.reply(replyJson(200, { id: 'abc', status: 'subscribed' }));
      // Both instances keep passing until the signup is due and one of them takes it.
      for (let round = 0; round < 50 && (await ours.pending(10)).length > 0; round++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        await Promise.all(workers.map((w) => w.runPass()));
      }
      await expect(ours.pending(10)).resolves.toEqual([]);
      expect(added()).toHaveLength(1);
      expect(JSON.parse(added()[0]!.body)).toEqual({ email_address: 'ada@example.org', status: 'subscribed' });
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await other.close();
    }
  });
});
