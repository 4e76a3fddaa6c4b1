import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../support/fake-http.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { eventually } from '../support/smtp.ts';

const valid = { name: 'Ada Lovelace', email: 'ada.lovelace@example.com', message: 'A message that must never be logged.', honeypot: '' };

describe('rate limits over HTTP', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_SECONDS: '600', TRUST_PROXY: '1', LOG_CLIENT_LINES: 'all' });
  });
  afterAll(() => site.stop());

  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  test('a client past its limit gets 429 JSON with Retry-After; other clients are unaffected', async () => {
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await postForm(`${site.url}/api/contact`, valid, from('203.0.113.10'))).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);

    const limited = await postForm(`${site.url}/api/contact`, valid, from('203.0.113.10'));
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    await expect(limited.json()).resolves.toEqual({ success: false, error: expect.any(String) });

    expect((await postForm(`${site.url}/api/contact`, valid, from('203.0.113.11'))).status).toBe(200);
    expect((await postForm(`${site.url}/api/newsletter`, { email: 'x@example.com' }, from('203.0.113.10'))).status).toBe(200);
  });

  test('the left end of X-Forwarded-For is what the client wrote, and is not trusted', async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await postForm(`${site.url}/api/contact`, valid, from(`198.51.100.${i}, 203.0.113.20`))).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  test('an address may subscribe 3 times a day, whatever the client', async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await postForm(`${site.url}/api/newsletter`, { email: 'popular@example.com' }, from(`192.0.2.${i}`))).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  test('logs one JSON line per form request with a hashed client and no address, body or key', async () => {
    const lines = site.logs.filter((l): l is Record<string, unknown> => typeof l === 'object' && l.event === 'form.request');
    expect(lines.length).toBeGreaterThan(10);
    expect(lines[0]).toEqual({
      time: expect.any(String),
      level: 'info',
      event: 'form.request',
      route: '/api/contact',
      status: 200,
      durationMs: expect.any(Number),
      outcome: 'accepted',
      client: expect.stringMatching(/^[0-9a-f]{12}$/),
    });
    const all = JSON.stringify(site.logs);
    expect(all).not.toContain('ada.lovelace@example.com');
    expect(all).not.toContain('must never be logged');
    expect(all).not.toContain('203.0.113.10');
  });
});

describe('operations', () => {
  let provider: FakeHttpServer;
  beforeAll(async () => {
    provider = await startFakeHttpServer(replyJson(200, {}));
  });
  afterAll(() => provider.close());

  test('GET /api/health answers with the provider, the database and the messages waiting, and nothing secret', async () => {
    const site = await startSite({ MAILCHIMP_API_KEY: 'topsecret-us1', MAILCHIMP_LIST_ID: 'l', MAILCHIMP_API_BASE_URL: provider.url });
    try {
      await postForm(`${site.url}/api/contact`, valid);
      const response = await fetch(`${site.url}/api/health`);
      const text = await response.text();
      expect(response.status).toBe(200);
      expect(JSON.parse(text)).toEqual({
        success: true,
        provider: 'mailchimp',
        database: 'SQLite',
        databaseWritable: true,
        databaseIntegrity: 'ok',
        pendingMessages: 1,
        failedMessages: 0,
      });
      expect(text).not.toContain('topsecret');
    } finally {
      await site.stop();
    }
  });

  test('logs its configuration at start with the secrets masked', async () => {
    const site = await startSite({
      MAILCHIMP_API_KEY: '0123456789abcdef0123-us1',
      MAILCHIMP_LIST_ID: 'l',
      MAILCHIMP_API_BASE_URL: provider.url,
    });
    await site.stop();
    const config = site.logs.find((l) => typeof l === 'object' && l.event === 'server.config');
    expect(config).toMatchObject({ newsletterProvider: 'mailchimp' });
    expect(JSON.stringify(site.logs)).not.toContain('0123456789abcdef0123');
  });

  test('200 idle or slow sockets do not stop a normal request from being answered', async () => {
    const site = await startSite();
    const sockets: Socket[] = [];
    try {
      await Promise.all(
        Array.from(
          { length: 200 },
          (_, i) =>
            new Promise<void>((resolve, reject) => {
              const socket = connect(Number(new URL(site.url).port), '127.0.0.1', () => {
                // Half of them idle, half of them trickling headers that never end.
                if (i % 2) socket.write('POST /api/contact HTTP/1.1\r\nHost: x\r\n');
                resolve();
              });
              socket.on('error', reject);
              sockets.push(socket);
            }),
        ),
      );
      const response = await postForm(`${site.url}/api/contact`, valid);
      expect(response.status).toBe(200);
    } finally {
      for (const s of sockets) s.destroy();
      await site.stop();
    }
  });

  test('answers a declared Content-Length of 10 MB with 413 at once, without waiting for the body', async () => {
    const site = await startSite();
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(site.url).port), '127.0.0.1', () => {
          socket.write('POST /api/contact HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10485760\r\n\r\nname=');
        });
        let text = '';
        socket.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
          if (text.includes('}')) resolve(text);
        });
        socket.on('error', reject);
        setTimeout(() => reject(new Error(`no answer within 3 s: ${text}`)), 3000);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 413/);
      expect(answer).toContain('"success":false');
    } finally {
      await site.stop();
    }
  });

  test('SIGTERM during a slow provider call: the request is answered, then the process exits 0', async () => {
    provider.reply((_, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      }, 1500);
    });
    const site = await startSite({ MAILCHIMP_API_KEY: 'k-us1', MAILCHIMP_LIST_ID: 'l', MAILCHIMP_API_BASE_URL: provider.url });
    const asked = provider.requests.length;
    const pending = postForm(`${site.url}/api/newsletter`, { email: 'slow@example.com' });
    // SIGTERM while the provider call is under way: once the provider has the request.
    await eventually('the signup to reach the provider', () => provider.requests.length > asked);
    const exit = site.stop('SIGTERM');
    const response = await pending;
    expect(response.status).toBe(200);
    await expect(response.json()).resolves.toEqual({ success: true });
    await expect(exit).resolves.toBe(0);
    // Stopped: no new connections.
    await expect(fetch(`${site.url}/`)).rejects.toThrow();
  });
});

describe('a one-client flood writes a bounded log (the default LOG_CLIENT_LINES=limited)', () => {
  test('300 near misses, 300 invalid posts and 300 refused ones from one address: one line of each kind', async () => {
    const site = await startSite({ RATE_LIMIT_MAX: '1' });
    try {
      const invalid = { name: 'A', email: 'x', message: 'short', honeypot: '' };
      for (let i = 0; i < 300; i++) {
        await fetch(`${site.url}/api/x${'y'.repeat(i)}`, { method: 'POST' });
        await postForm(`${site.url}/api/contact`, invalid);
      }
      const lines = site.logs.filter((l): l is Record<string, unknown> => typeof l === 'object' && typeof l.client === 'string');
      const kinds = lines.map((l) => `${l.event} ${l.status ?? ''}`.trim());
      // The first four invalid posts are 400s, then the budget of 4 × 1 answers 429.
      expect(kinds).toEqual(['request.near_miss', 'form.request 400', 'form.request 429']);
      const bytes = site.logs.map((l) => JSON.stringify(l).length).reduce((a, b) => a + b, 0);
      expect(bytes).toBeLessThan(8_000);
    } finally {
      await site.stop();
    }
  });
});
