import { type ChildProcess, spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { TEST_CONFIGS_OPTION } from '../contact/run-inbox.ts';
import { TEST_FORMS_CONFIG, TEST_SITE_CONFIG } from '../support/build-site.ts';
import { type FakeSmtpServer, freePort, startSmtpServer } from '../support/smtp.ts';

// `npm run dev` (astro dev) reads `.env` as `npm start` does and answers through the same
// dispatcher: the admin, mail, and the same refusals (405, 413, 421, near misses).
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'site-forms-dev-'));
const envFile = join(dataDir, 'dev.env');
let dev: ChildProcess;
let smtp: FakeSmtpServer;
let port: number;
let url: string;
let output = '';

beforeAll(async () => {
  port = await freePort();
  url = `http://localhost:${port}`;
  smtp = await startSmtpServer();
  // What an owner puts in `.env`; the process's environment names only the file.
  writeFileSync(
    envFile,
    [
      `DATA_DIR=${dataDir}`,
      'RATE_LIMIT_MAX=0',
      `PUBLIC_URL=${url}`,
      `ADMIN_PASSWORD_HASH='${await hashPassword('correct horse battery staple')}'`,
      `SMTP_URL=${smtp.url()}`,
      'CONTACT_TO=owner@example.com',
      'CONTACT_FROM=forms@example.com',
      'SPAM_FILTER=off',
    ].join('\n'),
  );
  dev = spawn(process.execPath, [join(ROOT, 'node_modules/astro/bin/astro.mjs'), 'dev', '--port', String(port)], {
    cwd: ROOT,
    // The suite's settings and forms, for the pages (SITE_CONFIG, FORMS_CONFIG) and the dispatcher
    // that astro.config.mjs imports from source (TEST_CONFIGS_OPTION).
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ENV_FILE: envFile,
      ASTRO_TELEMETRY_DISABLED: '1',
      SITE_CONFIG: TEST_SITE_CONFIG,
      FORMS_CONFIG: TEST_FORMS_CONFIG,
      NODE_OPTIONS: TEST_CONFIGS_OPTION,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [dev.stdout!, dev.stderr!]) stream.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/api/health`)).status > 0) break;
    } catch {}
    if (Date.now() > deadline) throw new Error(`astro dev did not answer:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}, 120_000);

afterAll(async () => {
  dev?.kill('SIGTERM');
  await smtp?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A raw request, so that the Host and the declared length are what the test says. */
function raw(method: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('npm run dev', () => {
  test('reads the .env file and logs the configuration as npm start does', () => {
    expect(output).toContain('"event":"server.config"');
    expect(output).toContain('"admin":"on at /admin');
  });

  test('serves the admin that .env turns on', async () => {
    const response = await fetch(`${url}/admin`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('Sign in');
  });

  test('emails a contact message through the SMTP server of .env', async () => {
    const body = new URLSearchParams({ name: 'Dev Tester', email: 'dev@example.com', message: 'Sent from npm run dev, to the mailbox.' });
    const response = await fetch(`${url}/api/contact`, { method: 'POST', body, headers: { origin: url, accept: 'application/json' } });
    expect(response.status).toBe(200);
    await expect(response.json()).resolves.toEqual({ success: true });
    const deadline = Date.now() + 20_000;
    while (smtp.received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]!.to).toEqual(['owner@example.com']);
    expect(smtp.received[0]!.raw).toContain('Sent from npm run dev, to the mailbox.');
  });

  test('a near miss under /api/ is a JSON 404, with no warning about request headers', async () => {
    for (const path of ['/api/nothing', '/api/contact/', '/api/news']) {
      const response = await fetch(`${url}${path}`);
      expect(response.status).toBe(404);
      await expect(response.json()).resolves.toEqual({ success: false, error: 'Not found' });
    }
    expect((await fetch(`${url}/no-such-page`)).status).toBe(404);
    // A later request's own log line: the dev server writes its lines in order (pipes are
    // synchronous on Linux), so a warning of the requests above would be in the output by then.
    // From another address of the loopback (127.0.0.2): a client of its own, whose line the
    // bound on lines per client and event (LOG_CLIENT_LINES) lets through.
    const sentinel = `/api/sentinel-${process.pid}-${Date.now()}`;
    await new Promise<void>((resolve, reject) =>
      httpRequest(`${url}${sentinel}`, { localAddress: '127.0.0.2' }, (response) => response.resume().once('end', resolve))
        .once('error', reject)
        .end(),
    );
    const deadline = Date.now() + 10_000;
    while (!output.includes(sentinel) && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    expect(output).toContain(sentinel);
    expect(output).not.toContain('Astro.request.headers');
  });

  test('a post to a page is a JSON 405, as in production', async () => {
    const response = await raw('POST', '/contact', { host: `localhost:${port}`, 'content-length': '0' });
    expect(response.status).toBe(405);
    expect(JSON.parse(response.body)).toEqual({ success: false, error: 'Use GET or HEAD for this address' });
  });

  test('a declared body over the limit is a 413 before Astro reads it', async () => {
    const response = await raw('GET', '/contact', { host: `localhost:${port}`, 'content-length': String(10 * 1024 * 1024) });
    expect(response.status).toBe(413);
  });

  test('a refused post without JavaScript is 303 to its draft, whose page Astro renders as in production', async () => {
    const navigation = { origin: url, accept: 'text/html', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
    const body = new URLSearchParams({ name: 'D', email: 'dev@example.com', message: 'Typed in npm run dev.' });
    const posted = await fetch(`${url}/api/contact`, { method: 'POST', body, headers: navigation, redirect: 'manual' });
    expect(posted.status).toBe(303);
    const location = posted.headers.get('location') ?? '';
    expect(location).toMatch(/^\/api\/contact\?draft=[\w-]{32}$/);
    const page = await fetch(`${url}${location}`, { headers: navigation });
    expect(page.status).toBe(400);
    const html = await page.text();
    expect(html).toContain('Name must be between 2 and 100 characters');
    expect(html).toContain('Typed in npm run dev.');
  });

  test('a request addressed to a name Vite does not serve is refused by Vite’s Host check before any route of ours (issue 39 item 14)', async () => {
    for (const path of ['/api/health', '/admin']) {
      const response = await raw('GET', path, { host: 'attacker.example' });
      expect([response.status, response.body]).toEqual([403, expect.stringContaining('Blocked request')]);
    }
  });

  test('a request addressed to a name Vite serves but PUBLIC_URL does not name is refused with our 421', async () => {
    // Vite serves every name under .localhost; PUBLIC_URL names localhost alone.
    const response = await raw('GET', '/api/health', { host: `shop.localhost:${port}` });
    expect(response.status).toBe(421);
    expect(JSON.parse(response.body).success).toBe(false);
  });
});
