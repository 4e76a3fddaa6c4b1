import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { NewsletterConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { createNewsletterProvider } from '../../../packages/site-forms/src/lib/newsletter/registry.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';
import { testEngines } from '../../support/stores.ts';

// The provider the configuration builds, doing its work: Mailchimp's member status with and
// without double opt-in, the retries it is given, and the local list in a real store.
let mailchimp: FakeHttpServer;
beforeAll(async () => {
  mailchimp = await startFakeHttpServer();
});
afterAll(() => mailchimp.close());

const MAILCHIMP = (): NewsletterConfig => ({ provider: 'mailchimp', mailchimp: { apiKey: 'key-us21', listId: 'l1', baseUrl: `${mailchimp.url}/3.0` } });

describe.each(testEngines())('the provider the configuration built, on $name', (engine) => {
  test.skipIf(!engine.available)('Mailchimp members are subscribed, or pending with double opt-in', async () => {
    const { store } = await engine.open();
    mailchimp.reply(replyJson(200, { id: 'abc' }));
    mailchimp.requests.length = 0;
    await expect(createNewsletterProvider(MAILCHIMP(), store.subscribers).subscribe('ada@example.org')).resolves.toEqual({ ok: true });
    await expect(createNewsletterProvider(MAILCHIMP(), store.subscribers, {}, { doubleOptIn: true }).subscribe('bob@example.org')).resolves.toEqual({
      ok: true,
    });
    expect(mailchimp.requests.map((r) => JSON.parse(r.body))).toEqual([
      { email_address: 'ada@example.org', status: 'subscribed' },
      { email_address: 'bob@example.org', status: 'pending' },
    ]);
    await expect(store.subscribers.list()).resolves.toEqual([]);
  });

  test.skipIf(!engine.available)('a remote provider gets the retries it is given', async () => {
    const { store } = await engine.open();
    mailchimp.reply(replyJson(503, { title: 'Service Unavailable' }, { 'content-type': 'application/problem+json' }));
    mailchimp.requests.length = 0;
    const once = createNewsletterProvider(MAILCHIMP(), store.subscribers, { retries: 0 });
    await expect(once.subscribe('ada@example.org')).resolves.toMatchObject({ ok: false, reason: 'unavailable' });
    expect(mailchimp.requests).toHaveLength(1);
    mailchimp.requests.length = 0;
    const thrice = createNewsletterProvider(MAILCHIMP(), store.subscribers, { retries: 2, backoffMs: 1 });
    await expect(thrice.subscribe('ada@example.org')).resolves.toMatchObject({
      ok: false,
      reason: 'unavailable',
      detail: expect.stringContaining('(3 attempts in '),
    });
    expect(mailchimp.requests).toHaveLength(3);
  });

  test.skipIf(!engine.available)('the local list keeps each address once, in lower case, oldest first, and forgets it on removal', async () => {
    const { store } = await engine.open();
    const local = createNewsletterProvider({ provider: 'local' }, store.subscribers);
    expect(local.name).toBe('local');
    await expect(local.subscribe('Grace@Example.org')).resolves.toEqual({ ok: true });
    await store.subscribers.add('ada@example.org', new Date('2000-01-01T00:00:00.000Z'));
    await store.subscribers.add('GRACE@example.org', new Date('1999-01-01T00:00:00.000Z'));
    const list = await store.subscribers.list();
    expect(list.map((s) => s.email)).toEqual(['ada@example.org', 'grace@example.org']);
    expect(list[0]).toEqual({ email: 'ada@example.org', created: '2000-01-01T00:00:00.000Z' });
    expect(Date.parse(list[1]!.created)).toBeGreaterThan(Date.parse('2020-01-01T00:00:00.000Z'));
    await expect(store.subscribers.remove('ADA@example.org')).resolves.toBe(true);
    await expect(store.subscribers.remove('ada@example.org')).resolves.toBe(false);
    expect((await store.subscribers.list()).map((s) => s.email)).toEqual(['grace@example.org']);
  });
});
