import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type FakeHttpServer, replyJson, replyReset, startFakeHttpServer } from '../support/fake-http.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { runCli } from '../contact/run-inbox.ts';
import { eventually } from '../support/smtp.ts';

const valid = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.', honeypot: '' };

async function answer(response: Response) {
  return { status: response.status, type: response.headers.get('content-type'), body: await response.json() };
}

function rows(site: Site, sql: string): Record<string, unknown>[] {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    return db.prepare(sql).all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

describe('the built server with its embedded defaults', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite({ ALLOWED_ORIGINS: 'https://partner.example' });
  });
  afterAll(() => site.stop());

  test('serves the static pages', async () => {
    const home = await fetch(`${site.url}/`);
    expect(home.status).toBe(200);
    await expect(home.text()).resolves.toContain('action="/api/newsletter"');
  });

  test('newsletter: 200 { success: true } for a valid address, stored locally', async () => {
    await expect(postForm(`${site.url}/api/newsletter`, { email: 'Reader@Example.com' }).then(answer)).resolves.toEqual({
      status: 200,
      type: expect.stringMatching(/^application\/json/),
      body: { success: true },
    });
    expect(rows(site, 'SELECT email FROM subscribers')).toContainEqual({ email: 'reader@example.com' });
  });

  test.each([['not-an-email'], ['']])('newsletter: 400 with the spec message for %j', async (email) => {
    await expect(postForm(`${site.url}/api/newsletter`, { email }).then(answer)).resolves.toMatchObject({
      status: 400,
      body: { success: false, error: 'Please enter a valid email address' },
    });
  });

  test('contact: 200 { success: true } and the submission is stored before the answer', async () => {
    const before = rows(site, 'SELECT count(*) AS n FROM submissions')[0]!.n as number;
    await expect(postForm(`${site.url}/api/contact`, { ...valid, name: 'Stored Person' }).then(answer)).resolves.toMatchObject({
      status: 200,
      body: { success: true },
    });
    expect(rows(site, 'SELECT count(*) AS n FROM submissions')[0]!.n).toBe(before + 1);
    expect(rows(site, "SELECT name, email, message, status FROM submissions WHERE name = 'Stored Person'")).toEqual([
      { name: 'Stored Person', email: valid.email, message: valid.message, status: 'pending' },
    ]);
  });

  test('contact: 400 with an errors object naming each failing field', async () => {
    await expect(postForm(`${site.url}/api/contact`, { name: 'A', email: 'x', message: 'too short', honeypot: 'bot' }).then(answer)).resolves.toMatchObject({
      status: 400,
      body: {
        success: false,
        errors: {
          name: ['Name must be between 2 and 100 characters'],
          email: ['Please enter a valid email address'],
          message: ['Message must be at least 10 characters'],
          honeypot: ['This field must be left empty'],
        },
      },
    });
  });

  test('accepts application/x-www-form-urlencoded as a browser form sends it', async () => {
    const response = await fetch(`${site.url}/api/contact`, { method: 'POST', body: new URLSearchParams(valid) });
    await expect(answer(response)).resolves.toMatchObject({ status: 200, body: { success: true } });
  });

  test.each([
    ['JSON', 'application/json', '{"email":"a@b.co"}'],
    ['plain text', 'text/plain', 'email=a@b.co'],
  ])('415 JSON for a %s body', async (_, type, body) => {
    const response = await fetch(`${site.url}/api/newsletter`, { method: 'POST', body, headers: { 'content-type': type } });
    await expect(answer(response)).resolves.toMatchObject({ status: 415, body: { success: false, error: expect.any(String) } });
  });

  test('413 JSON for a body over 64 KiB', async () => {
    const response = await postForm(`${site.url}/api/contact`, { ...valid, message: 'x'.repeat(70 * 1024) });
    await expect(answer(response)).resolves.toMatchObject({ status: 413, body: { success: false, error: expect.any(String) } });
  });

  test('413 JSON for a chunked body over 64 KiB with no Content-Length', async () => {
    const status = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${site.url}/api/contact`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, (res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (c) => (body += c))
          .on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write('message=');
      for (let i = 0; i < 70; i++) req.write('x'.repeat(1024));
      req.end();
    });
    expect(status.status).toBe(413);
    expect(JSON.parse(status.body)).toMatchObject({ success: false });
  });

  test('400 JSON for a malformed multipart body', async () => {
    const response = await fetch(`${site.url}/api/contact`, {
      method: 'POST',
      body: '--abc\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda',
      headers: { 'content-type': 'multipart/form-data; boundary=abc' },
    });
    await expect(answer(response)).resolves.toMatchObject({ status: 400, body: { success: false, error: expect.any(String) } });
  });

  test.each(['GET', 'PUT', 'DELETE'])('405 JSON for %s on an endpoint', async (method) => {
    const response = await fetch(`${site.url}/api/contact`, { method });
    await expect(answer(response)).resolves.toMatchObject({ status: 405, body: { success: false } });
    expect(response.headers.get('allow')).toBe('POST');
  });

  test('404 JSON for an unknown address under /api', async () => {
    await expect(fetch(`${site.url}/api/does-not-exist`).then(answer)).resolves.toMatchObject({ status: 404, body: { success: false } });
  });

  describe('origin policy', () => {
    test('allows a post with no Origin (curl, servers)', async () => {
      expect((await postForm(`${site.url}/api/newsletter`, { email: 'no-origin@example.com' })).status).toBe(200);
    });

    test('allows a same-origin post', async () => {
      expect((await postForm(`${site.url}/api/newsletter`, { email: 'same@example.com' }, { origin: site.url })).status).toBe(200);
    });

    test('allows a listed origin and answers with CORS headers', async () => {
      const response = await postForm(`${site.url}/api/newsletter`, { email: 'partner@example.com' }, { origin: 'https://partner.example' });
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBe('https://partner.example');
      expect(response.headers.get('vary')).toMatch(/Origin/);
    });

    test('answers the preflight of a listed origin with 204', async () => {
      const response = await fetch(`${site.url}/api/contact`, {
        method: 'OPTIONS',
        headers: { origin: 'https://partner.example', 'access-control-request-method': 'POST' },
      });
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe('https://partner.example');
      expect(response.headers.get('access-control-allow-methods')).toMatch(/POST/);
    });

    test('refuses any other origin with 403 JSON and stores nothing', async () => {
      const before = rows(site, 'SELECT count(*) AS n FROM submissions')[0]!.n;
      const response = await postForm(`${site.url}/api/contact`, valid, { origin: 'https://evil.example' });
      await expect(answer(response)).resolves.toMatchObject({ status: 403, body: { success: false, error: expect.any(String) } });
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect(rows(site, 'SELECT count(*) AS n FROM submissions')[0]!.n).toBe(before);
    });
  });
});

describe('the built server with Mailchimp', () => {
  let mailchimp: FakeHttpServer;
  let site: Site;
  beforeAll(async () => {
    mailchimp = await startFakeHttpServer(replyJson(200, { status: 'subscribed' }));
    site = await startSite({
      MAILCHIMP_API_KEY: 'secretkey-us21',
      MAILCHIMP_LIST_ID: 'abc123',
      MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0`,
    });
  });
  afterAll(async () => {
    await site.stop();
    await mailchimp.close();
  });

  test('subscribes through the Mailchimp list-members API', async () => {
    await expect(postForm(`${site.url}/api/newsletter`, { email: 'ada@example.com' }).then(answer)).resolves.toMatchObject({
      status: 200,
      body: { success: true },
    });
    expect(mailchimp.requests.at(-1)).toMatchObject({
      method: 'POST',
      url: '/3.0/lists/abc123/members',
      headers: expect.objectContaining({ authorization: 'apikey secretkey-us21' }),
    });
  });

  test('a failed provider call answers JSON with a readable error, never the raw text or the key', async () => {
    mailchimp.reply(replyJson(401, { title: 'API Key Invalid', detail: 'Your API key secretkey-us21 may be invalid' }));
    const response = await postForm(`${site.url}/api/newsletter`, { email: 'ada@example.com' });
    const text = await response.text();
    expect(response.status).toBe(502);
    expect(JSON.parse(text)).toEqual({ success: false, error: expect.any(String) });
    expect(text).not.toMatch(/secretkey|API Key Invalid/);
  });

  test('a bad key is logged as an error naming MAILCHIMP_API_KEY, and the key is in no log line', async () => {
    mailchimp.reply(replyJson(401, { title: 'API Key Invalid', detail: 'Your API key secretkey-us21 may be invalid' }));
    await postForm(`${site.url}/api/newsletter`, { email: 'ada@example.com' });
    expect(site.logs).toContainEqual(expect.objectContaining({ level: 'error', event: 'newsletter.subscribe_failed', check: 'MAILCHIMP_API_KEY' }));
    expect(JSON.stringify(site.logs)).not.toContain('secretkey');
  });

  test("a provider that keeps failing, or cuts the connection: the spec's failure, 503 with Retry-After, after three attempts, and nothing stored", async () => {
    for (const reply of [replyJson(503, { title: 'Service Unavailable' }), replyJson(500, { title: 'Internal Server Error' }), replyReset()]) {
      mailchimp.reply(reply);
      mailchimp.requests.length = 0;
      const response = await postForm(`${site.url}/api/newsletter`, { email: 'refused@example.com' });
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('120');
      await expect(response.json()).resolves.toEqual({ success: false, error: 'The newsletter service is busy right now. Please try again in a few minutes.' });
      expect(mailchimp.requests).toHaveLength(3);
    }
    expect(site.logs.filter((l) => typeof l === 'object' && l.event === 'newsletter.signup_queued')).toEqual([]);
    const waiting = await runCli('subscribers', ['waiting'], { DATA_DIR: site.dataDir });
    expect([waiting.code, waiting.stdout, waiting.stderr]).toEqual([0, '', 'No signup is waiting for the provider.\n']);
  });
});

describe('the built server with a Mailchimp nothing listens at', () => {
  let site: Site;
  beforeAll(async () => {
    // A port that was just free: every connection to it is refused.
    const gone = await startFakeHttpServer(replyJson(200, {}));
    await gone.close();
    site = await startSite({ MAILCHIMP_API_KEY: 'secretkey-us21', MAILCHIMP_LIST_ID: 'abc123', MAILCHIMP_API_BASE_URL: `${gone.url}/3.0` });
  });
  afterAll(() => site.stop());

  test("no connection: the spec's failure, 503 with Retry-After, and nothing stored", async () => {
    const response = await postForm(`${site.url}/api/newsletter`, { email: 'nobody-home@example.com' });
    expect([response.status, response.headers.get('retry-after')]).toEqual([503, '120']);
    await expect(response.json()).resolves.toEqual({ success: false, error: 'The newsletter service is busy right now. Please try again in a few minutes.' });
    const waiting = await runCli('subscribers', ['waiting'], { DATA_DIR: site.dataDir });
    expect([waiting.code, waiting.stdout, waiting.stderr]).toEqual([0, '', 'No signup is waiting for the provider.\n']);
  });
});

describe('the built server with Mailchimp and NEWSLETTER_QUEUE_ON_OUTAGE=true', () => {
  let mailchimp: FakeHttpServer;
  let site: Site;
  beforeAll(async () => {
    mailchimp = await startFakeHttpServer(replyJson(200, { status: 'subscribed' }));
    site = await startSite({
      MAILCHIMP_API_KEY: 'secretkey-us21',
      MAILCHIMP_LIST_ID: 'abc123',
      MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0`,
      NEWSLETTER_QUEUE_ON_OUTAGE: 'true',
      // A stored signup is tried again after 200 ms rather than half a minute.
      DELIVERY_RETRY_BASE_MS: '200',
    });
  });
  afterAll(async () => {
    await site.stop();
    await mailchimp.close();
  });

  test('a provider that keeps failing: after three attempts the signup is stored and answered 200, then reaches the provider once it is back', async () => {
    mailchimp.reply(replyJson(503, { title: 'Service Unavailable' }));
    mailchimp.requests.length = 0;
    const response = await postForm(`${site.url}/api/newsletter`, { email: 'queued@example.com' });
    expect(response.status).toBe(200);
    await expect(response.json()).resolves.toEqual({ success: true });
    expect(mailchimp.requests).toHaveLength(3);
    expect(site.logs).toContainEqual(expect.objectContaining({ level: 'warn', event: 'newsletter.signup_queued', provider: 'mailchimp' }));
    // The owner sees it waiting.
    const waiting = await runCli('subscribers', ['waiting'], { DATA_DIR: site.dataDir });
    expect(waiting.code).toBe(0);
    expect(waiting.stdout).toMatch(
      /^ID\s+SINCE \(UTC\)\s+EMAIL\s+PROVIDER\s+STATUS\s+TRIES\s+LAST ERROR\n\d+\s+\S+ \S+\s+queued@example\.com\s+mailchimp\s+waiting\s/,
    );
    // Back: the stored signup goes out by itself, once.
    mailchimp.reply(replyJson(200, { id: 'member-1', status: 'subscribed' }));
    await eventually('the signup to reach Mailchimp', () => site.logs.some((l) => typeof l === 'object' && l.event === 'newsletter.signup_added'));
    const accepted = mailchimp.requests.filter((r) => r.body.includes('queued@example.com'));
    expect(accepted.length).toBeGreaterThanOrEqual(4);
    // Once: the signup is recorded as added before that line is logged, and the queue takes only a waiting one.
    await expect(runCli('subscribers', ['waiting'], { DATA_DIR: site.dataDir })).resolves.toMatchObject({
      code: 0,
      stdout: '',
      stderr: 'No signup is waiting for the provider.\n',
    });
    expect(mailchimp.requests.filter((r) => r.body.includes('queued@example.com'))).toHaveLength(accepted.length);
  });
});

describe('the built server with Kit', () => {
  let kit: FakeHttpServer;
  let site: Site;
  beforeAll(async () => {
    // The read-only check at start lists the forms; the subscription posts to one.
    kit = await startFakeHttpServer((request, res, req) =>
      (request.method === 'GET' ? replyJson(200, { forms: [{ id: 1234567 }] }) : replyJson(200, { subscription: { id: 1, state: 'inactive' } }))(
        request,
        res,
        req,
      ),
    );
    site = await startSite({ NEWSLETTER_PROVIDER: 'kit', KIT_API_KEY: 'kit-secret', KIT_FORM_ID: '1234567', KIT_API_BASE_URL: `${kit.url}/v3` });
  });
  afterAll(async () => {
    await site.stop();
    await kit.close();
  });

  test('subscribes through the form-subscribe resource and answers 200', async () => {
    await expect(postForm(`${site.url}/api/newsletter`, { email: 'ada@example.com' }).then(answer)).resolves.toMatchObject({
      status: 200,
      body: { success: true },
    });
    const request = kit.requests.at(-1)!;
    expect(request).toMatchObject({ method: 'POST', url: '/v3/forms/1234567/subscribe' });
    expect(JSON.parse(request.body)).toEqual({ api_key: 'kit-secret', email: 'ada@example.com' });
  });

  test('a wrong form: 502, and an error log naming KIT_FORM_ID', async () => {
    kit.reply(replyJson(404, { error: 'Not Found', message: "The entity you were trying to find doesn't exist" }));
    const response = await postForm(`${site.url}/api/newsletter`, { email: 'ada@example.com' });
    expect(response.status).toBe(502);
    expect(site.logs).toContainEqual(expect.objectContaining({ level: 'error', check: 'KIT_FORM_ID' }));
    expect(JSON.stringify(site.logs)).not.toContain('kit-secret');
  });
});

describe('the built server with Resend', () => {
  let resend: FakeHttpServer;
  let site: Site;
  beforeAll(async () => {
    resend = await startFakeHttpServer(replyJson(200, { object: 'contact', id: 'c1' }));
    site = await startSite({ RESEND_API_KEY: 're_secret', RESEND_AUDIENCE_ID: 'aud-1', RESEND_BASE_URL: resend.url });
  });
  afterAll(async () => {
    await site.stop();
    await resend.close();
  });

  test('chosen by its key alone, creates the contact in the audience and answers 200', async () => {
    await expect(postForm(`${site.url}/api/newsletter`, { email: 'ada@example.com' }).then(answer)).resolves.toMatchObject({
      status: 200,
      body: { success: true },
    });
    const request = resend.requests.at(-1)!;
    expect(request).toMatchObject({
      method: 'POST',
      url: '/audiences/aud-1/contacts',
      headers: expect.objectContaining({ authorization: 'Bearer re_secret' }),
    });
    expect(JSON.parse(request.body)).toEqual({ email: 'ada@example.com' });
    expect(site.logs).toContainEqual(expect.objectContaining({ event: 'server.config', newsletterProvider: 'resend', newsletterChoice: 'inferred' }));
  });
});

describe('start-up', () => {
  test.each([
    ['a chosen provider lacks a variable', { NEWSLETTER_PROVIDER: 'mailchimp', MAILCHIMP_API_KEY: 'k-us1' }, /MAILCHIMP_LIST_ID is required/],
    ['Kit has no form', { NEWSLETTER_PROVIDER: 'kit', KIT_API_KEY: 'k' }, /KIT_FORM_ID is required/],
    ['Resend has no segment', { RESEND_API_KEY: 're_k' }, /RESEND_SEGMENT_ID \(or the deprecated RESEND_AUDIENCE_ID\) is required/],
    [
      'two keys are set and none is chosen',
      { MAILCHIMP_API_KEY: 'k-us1', MAILCHIMP_LIST_ID: 'l', KIT_API_KEY: 'k', KIT_FORM_ID: '1' },
      /NEWSLETTER_PROVIDER is required .*MAILCHIMP_API_KEY, KIT_API_KEY/,
    ],
    ['the provider is unknown', { NEWSLETTER_PROVIDER: 'sendgrid' }, /NEWSLETTER_PROVIDER must be one of mailchimp, kit, resend, local/],
  ])('stops with a message naming the variable when %s', async (_, env, message) => {
    await expect(startSite(env)).rejects.toThrow(message);
  });
});
