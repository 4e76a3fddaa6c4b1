/**
 * A provider's API that answers with a redirect: nothing is followed, so the key never
 * reaches another address, and the answer is an outcome the owner is told about.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { createKitProvider } from '../../../packages/site-forms/src/lib/newsletter/kit.ts';
import { createMailchimpProvider } from '../../../packages/site-forms/src/lib/newsletter/mailchimp.ts';
import type { NewsletterProvider } from '../../../packages/site-forms/src/lib/newsletter/provider.ts';
import { createResendProvider } from '../../../packages/site-forms/src/lib/newsletter/resend.ts';
import { type FakeHttpServer, type FakeReply, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';

let provider: FakeHttpServer;
/** Where the redirects point: it must never be called. */
let elsewhere: FakeHttpServer;
beforeAll(async () => {
  provider = await startFakeHttpServer();
  elsewhere = await startFakeHttpServer(replyJson(200, { id: 'stolen', subscription: { id: 1 }, object: 'contact' }));
});
afterAll(async () => {
  await provider.close();
  await elsewhere.close();
});
beforeEach(() => {
  provider.requests.length = 0;
  elsewhere.requests.length = 0;
});

const KEY = 'secret-key-0123456789-us21';

/** A redirect as an API would send it: a status, a Location, and a JSON body saying where. */
function redirect(status: number, location: () => string): FakeReply {
  return (_, res) => {
    res.writeHead(status, { location: location(), 'content-type': 'application/json' });
    res.end(JSON.stringify({ moved: location() }));
  };
}

const PROVIDERS: Array<[string, () => NewsletterProvider, string]> = [
  [
    'Mailchimp',
    () => createMailchimpProvider({ apiKey: KEY, listId: 'l1', baseUrl: `${provider.url}/3.0` }),
    'MAILCHIMP_API_BASE_URL, or the data centre at the end of MAILCHIMP_API_KEY',
  ],
  ['Kit', () => createKitProvider({ apiKey: KEY, formId: '1234567', baseUrl: `${provider.url}/v3`, version: 'v3' }), 'KIT_API_BASE_URL'],
  ['Resend', () => createResendProvider({ apiKey: KEY, target: { kind: 'audience', id: 'aud-1' }, baseUrl: provider.url }), 'RESEND_BASE_URL'],
];

describe.each(PROVIDERS)('a redirect from %s is never followed', (_, create, check) => {
  test.each([301, 302, 303, 307, 308])(
    '%i to another server: misconfigured naming the address variable, and the other server is never called',
    async (status) => {
      provider.reply(redirect(status, () => `${elsewhere.url}/steal?from=${status}`));
      const outcome = await create().subscribe('ada@example.com', { signal: AbortSignal.timeout(5_000), timeoutMs: 5_000 });

      expect(outcome).toEqual({ ok: false, reason: 'misconfigured', detail: `HTTP ${status} redirect, not followed`, check });
      expect(elsewhere.requests).toEqual([]);
      expect(provider.requests).toHaveLength(1);
    },
  );

  test.each([307, 308])('%i to another path of the same server: not followed either', async (status) => {
    provider.reply(redirect(status, () => '/elsewhere'));
    const outcome = await create().subscribe('ada@example.com', { signal: AbortSignal.timeout(5_000), timeoutMs: 5_000 });

    expect(outcome).toMatchObject({ ok: false, reason: 'misconfigured', check });
    expect(provider.requests.map((r) => r.url)).not.toContain('/elsewhere');
    expect(provider.requests).toHaveLength(1);
  });

  test('a 307 without a Location: misconfigured, no crash', async () => {
    provider.reply(replyJson(307, { error: 'Temporary Redirect' }));
    const outcome = await create().subscribe('ada@example.com', { signal: AbortSignal.timeout(5_000), timeoutMs: 5_000 });
    expect(outcome).toEqual({ ok: false, reason: 'misconfigured', detail: 'HTTP 307 redirect, not followed', check });
  });
});
