import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { nginxAvailable, startTlsProxy, type TlsProxy } from '../support/nginx.ts';
import { type Site, startSite } from '../support/site.ts';
import { freePort } from '../support/smtp.ts';

// The admin as a site owner deploys it: Debian's nginx terminating TLS (deploy/nginx.conf),
// where the cookie must be Secure and __Host-, and "same origin" is the https address.

const PASSWORD = 'correct horse battery staple';

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

function send(proxy: TlsProxy, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, proxy.url),
      { method: options.method ?? 'GET', ca: proxy.certificate, checkServerIdentity: () => undefined, headers: options.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk;
        });
        res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.once('error', reject);
    req.end(options.body);
  });
}

function post(proxy: TlsProxy, path: string, fields: Record<string, string>, headers: Record<string, string>): Promise<Answer> {
  return send(proxy, path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: String(new URLSearchParams(fields)),
  });
}

describe.skipIf(!nginxAvailable).each([
  ['TRUST_PROXY=1', false],
  ['PUBLIC_URL', true],
])('the admin behind nginx with HTTPS and %s', (_, withPublicUrl) => {
  let site: Site;
  let proxy: TlsProxy;
  let origin: string;
  beforeAll(async () => {
    const httpsPort = await freePort();
    const publicUrl = `https://localhost:${httpsPort}`;
    site = await startSite({ TRUST_PROXY: '1', ...(withPublicUrl && { PUBLIC_URL: publicUrl }), ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD) });
    proxy = await startTlsProxy(site.url, { httpsPort });
    origin = withPublicUrl ? publicUrl : proxy.url.replace(/\/$/, '');
  });
  afterAll(async () => {
    await proxy?.stop();
    await site?.stop();
  });

  test('signing in from the https page sets a Secure __Host- cookie that opens the admin; another origin is refused', async () => {
    const signIn = await post(proxy, '/admin/actions/sign-in', { password: PASSWORD }, { origin });
    expect(signIn.status).toBe(303);
    const cookie = String(signIn.headers['set-cookie']);
    expect(cookie).toMatch(/^__Host-admin_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure$/);
    const session = cookie.split(';')[0]!;

    const overview = await send(proxy, '/admin', { headers: { cookie: session } });
    expect(overview.status).toBe(200);
    expect(overview.body).toContain('<h1>Overview</h1>');
    // The same token without the prefix is not the session: a sibling subdomain could have set it.
    expect((await send(proxy, '/admin', { headers: { cookie: session.replace('__Host-', '') } })).body).toContain('<h1>Sign in</h1>');

    const csrf = /name="csrf" value="([^"]+)"/.exec(overview.body)![1]!;
    // The http:// origin of the same host is another origin.
    const plain = await post(proxy, '/admin/actions/sign-out', { csrf }, { origin: origin.replace('https:', 'http:'), cookie: session });
    expect(plain.status).toBe(403);
    const out = await post(proxy, '/admin/actions/sign-out', { csrf }, { origin, cookie: session });
    expect(out.status).toBe(303);
    expect(out.headers['set-cookie']).toEqual(['__Host-admin_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure']);
    expect((await send(proxy, '/admin', { headers: { cookie: session } })).body).toContain('<h1>Sign in</h1>');
  });
});
