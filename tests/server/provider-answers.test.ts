/**
 * Nothing a provider answers can end the server: the built server, in its own process,
 * against a provider that redirects, and a second server that must never be called.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type FakeHttpServer, type FakeReply, replyJson, startFakeHttpServer } from '../support/fake-http.ts';
import { postForm, type Site, startSite } from '../support/site.ts';

let provider: FakeHttpServer;
let elsewhere: FakeHttpServer;
beforeAll(async () => {
  provider = await startFakeHttpServer();
  elsewhere = await startFakeHttpServer(replyJson(200, { id: 'stolen', subscription: { id: 1 }, object: 'contact' }));
});
afterAll(async () => {
  await provider.close();
  await elsewhere.close();
});

const KEY = 'secret-key-0123456789-us21';

function redirect(status: number): FakeReply {
  return (_, res) => {
    res.writeHead(status, { location: `${elsewhere.url}/steal`, 'content-type': 'application/json' });
    res.end('{}');
  };
}

describe.each<[string, () => Record<string, string>, string]>([
  ['Mailchimp', () => ({ MAILCHIMP_API_KEY: KEY, MAILCHIMP_LIST_ID: 'l1', MAILCHIMP_API_BASE_URL: `${provider.url}/3.0` }), 'MAILCHIMP_API_BASE_URL'],
  ['Kit', () => ({ KIT_API_KEY: KEY, KIT_FORM_ID: '1234567', KIT_API_BASE_URL: `${provider.url}/v3` }), 'KIT_API_BASE_URL'],
  ['Resend', () => ({ RESEND_API_KEY: KEY, RESEND_AUDIENCE_ID: 'aud-1', RESEND_BASE_URL: provider.url }), 'RESEND_BASE_URL'],
])('the built server with %s redirecting', (_, env, variable) => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite(env());
  });
  afterAll(() => site.stop());

  test("answers each redirect with the spec's 502, keeps running, never calls the other server, and logs the variable to check without the key", async () => {
    for (const status of [301, 302, 307, 308]) {
      provider.reply(redirect(status));
      const response = await postForm(`${site.url}/api/newsletter`, { email: 'ada@example.com' });
      expect(response.status).toBe(502);
      await expect(response.json()).resolves.toEqual({ success: false, error: 'We could not subscribe you right now. Please try again later.' });
    }

    const health = await fetch(`${site.url}/api/health`);
    expect(health.status).toBe(200);
    expect(site.process.exitCode).toBeNull();
    expect(elsewhere.requests).toEqual([]);

    const failures = site.logs.filter((line) => typeof line === 'object' && line.event === 'newsletter.subscribe_failed');
    expect(failures).toHaveLength(4);
    expect(failures).toEqual(
      failures.map(() => expect.objectContaining({ level: 'error', reason: 'misconfigured', check: expect.stringContaining(variable) })),
    );
    expect(JSON.stringify(site.logs)).not.toContain('0123456789');
  });
});
