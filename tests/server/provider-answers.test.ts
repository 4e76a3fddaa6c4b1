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
  // Each provider's read-only check at start finds the key and the form (Kit lists its forms).
  provider = await startFakeHttpServer(replyJson(200, { forms: [{ id: 1234567 }] }));
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
])('the built server against a hostile %s', (_, env, variable) => {
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

  test("a stream cut half-way and an endless answer: the spec's 503 with Retry-After, nothing stored, and the server keeps running", async () => {
    for (const reply of [cutHalfWay('application/octet-stream'), cutHalfWay('application/json'), endless('application/octet-stream')]) {
      provider.reply(reply);
      const response = await postForm(`${site.url}/api/newsletter`, { email: 'ada@example.com' });
      expect([response.status, response.headers.get('retry-after')]).toEqual([503, '120']);
      await expect(response.json()).resolves.toEqual({ success: false, error: 'The newsletter service is busy right now. Please try again in a few minutes.' });
    }
    expect(site.logs.filter((l) => typeof l === 'object' && l.event === 'newsletter.signup_queued')).toEqual([]);
    // Until every connection to the provider has closed (the cut ones reset): a late error of a
    // cut stream has reached the server by then, and the server must still answer.
    await provider.connectionsClosed();
    await expect(fetch(`${site.url}/api/health`).then((r) => r.status)).resolves.toBe(200);
    expect(site.process.exitCode).toBeNull();
  });
});

/** 200 with `type` and a little of a body, then a reset connection. */
function cutHalfWay(type: string): FakeReply {
  return (_, res, req) => {
    res.writeHead(200, { 'content-type': type });
    res.write('{"id": "x", "half of');
    setTimeout(() => req.socket.resetAndDestroy(), 50);
  };
}

/** 200 with `type` and 1 MiB chunks as fast as the client reads them, up to 64 MiB. */
function endless(type: string): FakeReply {
  return (_, res) => {
    res.writeHead(200, { 'content-type': type });
    const chunk = Buffer.alloc(1_048_576, 0x61);
    let left = 64;
    const pump = () => {
      while (!res.destroyed && left-- > 0) if (!res.write(chunk)) return;
      if (left <= 0) res.end();
    };
    res.on('drain', pump);
    pump();
  };
}
