import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { nginxAvailable, startTlsProxy, type TlsProxy } from '../support/nginx.ts';
import { type Site, startSite } from '../support/site.ts';
import { freePort } from '../support/smtp.ts';

// Debian's nginx terminating TLS in front of the built server, with deploy/nginx.conf as
// the README ships it: what a site owner deploys, and what an attacker reaches.

const CONTACT = 'name=Ada+Lovelace&email=ada%40example.com&message=Hello%2C+I+would+like+to+know+more.&honeypot=';

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/** One request through the proxy over real TLS, trusting this run's certificate, with the Host a browser would send. */
function send(proxy: TlsProxy, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const url = new URL(path, proxy.url);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        ca: proxy.certificate,
        // The chain is checked; the name is not, since some tests send another Host on purpose.
        checkServerIdentity: () => undefined,
        headers: { accept: 'application/json', ...options.headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.once('error', reject);
    req.end(options.body);
  });
}

/** A contact post as the site's script sends it, from the page at `origin`, or none. */
function postContact(proxy: TlsProxy, headers: Record<string, string>): Promise<Answer> {
  return send(proxy, '/api/contact', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: CONTACT });
}

function storedMessages(site: Site): number {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    return Number((db.prepare('SELECT count(*) AS n FROM submissions').get() as { n: number }).n);
  } finally {
    db.close();
  }
}

const FOREIGN = { status: 403, body: { success: false, error: 'Forms on this site cannot be posted from another website' } };
const MISDIRECTED = { status: 421, body: { success: false, error: 'This site does not answer to that address' } };
const ACCEPTED = { status: 200, body: { success: true } };

function outcome(answer: Answer) {
  return { status: answer.status, body: JSON.parse(answer.body) as unknown };
}

describe.skipIf(!nginxAvailable)('behind nginx with HTTPS and TRUST_PROXY=1', () => {
  let site: Site;
  let proxy: TlsProxy;
  let origin: string;
  beforeAll(async () => {
    site = await startSite({ TRUST_PROXY: '1' });
    proxy = await startTlsProxy(site.url);
    origin = proxy.url;
  });
  afterAll(async () => {
    await proxy?.stop();
    await site?.stop();
  });

  test('the https page posts the contact form: 200 and stored', async () => {
    const before = storedMessages(site);
    await expect(postContact(proxy, { origin }).then(outcome)).resolves.toEqual(ACCEPTED);
    expect(storedMessages(site)).toBe(before + 1);
  });

  test('the https page subscribes to the newsletter: 200', async () => {
    const answer = await send(proxy, '/api/newsletter', {
      method: 'POST',
      headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=reader%40example.com',
    });
    expect(outcome(answer)).toEqual(ACCEPTED);
  });

  test('the same page over plain http (another origin) is refused', async () => {
    await expect(postContact(proxy, { origin: origin.replace('https:', 'http:') }).then(outcome)).resolves.toEqual(FOREIGN);
  });

  test('another website is refused and nothing is stored', async () => {
    const before = storedMessages(site);
    await expect(postContact(proxy, { origin: 'https://evil.test' }).then(outcome)).resolves.toEqual(FOREIGN);
    expect(storedMessages(site)).toBe(before);
  });

  test('a visitor cannot forge the scheme or host: nginx overwrites X-Forwarded-Proto and X-Forwarded-Host', async () => {
    const forged = { origin: 'http://evil.test', 'x-forwarded-proto': 'http', 'x-forwarded-host': 'evil.test' };
    await expect(postContact(proxy, forged).then(outcome)).resolves.toEqual(FOREIGN);
  });

  test('plain http is redirected to https', async () => {
    const response = await fetch(`http://127.0.0.1:${proxy.httpPort}/contact/`, { redirect: 'manual' });
    expect(response.status).toBe(301);
    expect(response.headers.get('location')).toBe('https://127.0.0.1/contact/');
  });
});

describe.skipIf(!nginxAvailable)('behind nginx without TRUST_PROXY (the mistake of issue 11)', () => {
  let site: Site;
  let proxy: TlsProxy;
  beforeAll(async () => {
    site = await startSite({ TRUST_PROXY: '0' });
    proxy = await startTlsProxy(site.url);
  });
  afterAll(async () => {
    await proxy?.stop();
    await site?.stop();
  });

  test('the https page is refused, because the server cannot know it was https', async () => {
    await expect(postContact(proxy, { origin: proxy.url }).then(outcome)).resolves.toEqual(FOREIGN);
  });
});

describe.skipIf(!nginxAvailable)('behind nginx with PUBLIC_URL (DNS rebinding)', () => {
  let site: Site;
  let proxy: TlsProxy;
  let publicUrl: string;
  beforeAll(async () => {
    const httpsPort = await freePort();
    publicUrl = `https://localhost:${httpsPort}`;
    site = await startSite({ TRUST_PROXY: '1', PUBLIC_URL: publicUrl });
    proxy = await startTlsProxy(site.url, { httpsPort });
  });
  afterAll(async () => {
    await proxy?.stop();
    await site?.stop();
  });

  test('the public page posts: 200', async () => {
    const host = new URL(publicUrl).host;
    await expect(postContact(proxy, { host, origin: publicUrl }).then(outcome)).resolves.toEqual(ACCEPTED);
  });

  test('a page under another name that resolves here (rebinding) cannot post: 421, nothing stored', async () => {
    const before = storedMessages(site);
    const port = new URL(publicUrl).port;
    await expect(postContact(proxy, { host: `evil.test:${port}`, origin: `https://evil.test:${port}` }).then(outcome)).resolves.toEqual(MISDIRECTED);
    expect(storedMessages(site)).toBe(before);
  });

  test('nor read the API or the pages under that name: 421', async () => {
    const port = new URL(publicUrl).port;
    await expect(send(proxy, '/api/health', { headers: { host: `evil.test:${port}` } }).then(outcome)).resolves.toEqual(MISDIRECTED);
    const page = await send(proxy, '/contact/', { headers: { host: `evil.test:${port}`, accept: 'text/html' } });
    expect({ status: page.status, body: page.body }).toEqual({ status: 421, body: 'This site does not answer to that address.\n' });
  });

  test('a rebinding page reaching the server itself over plain http is refused too: 421', async () => {
    const port = new URL(site.url).port;
    const answer = await new Promise<Answer>((resolve, reject) => {
      // node:http, since fetch always sends the Host of the URL.
      const req = httpRequest(
        `${site.url}/api/contact`,
        { method: 'POST', headers: { host: `evil.test:${port}`, origin: `http://evil.test:${port}`, 'content-type': 'application/x-www-form-urlencoded' } },
        (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.once('error', reject);
      req.end(CONTACT);
    });
    expect(outcome(answer)).toEqual(MISDIRECTED);
  });

  test('the address nginx itself answers at (127.0.0.1), as a browser would post from it, is another origin: 403', async () => {
    await expect(postContact(proxy, { origin: proxy.url }).then(outcome)).resolves.toEqual(FOREIGN);
  });

  test("an operator's curl straight to the server (no Origin) still works", async () => {
    const response = await fetch(`${site.url}/api/health`);
    expect(response.status).toBe(200);
  });
});

describe.skipIf(!nginxAvailable)('behind nginx, the limits count the visitor nginx saw', () => {
  let site: Site;
  let proxy: TlsProxy;
  beforeAll(async () => {
    site = await startSite({ TRUST_PROXY: '1', RATE_LIMIT_MAX: '1' });
    proxy = await startTlsProxy(site.url);
  });
  afterAll(async () => {
    await proxy?.stop();
    await site?.stop();
  });

  test('a visitor who writes another X-Forwarded-For each time is still limited', async () => {
    const first = await postContact(proxy, { origin: proxy.url, 'x-forwarded-for': '198.51.100.1' });
    const second = await postContact(proxy, { origin: proxy.url, 'x-forwarded-for': '198.51.100.2' });
    expect([first.status, second.status]).toEqual([200, 429]);
  });
});
