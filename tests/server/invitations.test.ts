import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, freePort, type ReceivedMail, startSmtpServer } from '../support/smtp.ts';

/**
 * Invitations and sign-in links on the built server (issue 42 items 1 and 6, step S6): with SMTP
 * the invitation is mailed and its link works once; the link's page (GET) never uses it and sends
 * no Referer to another site; reset requests get one answer whoever the address is, and a client's 6th in an hour
 * is refused; with SMTP off the owner is shown the link instead, and no reset page exists.
 */
const PASSWORD = 'correct horse battery staple';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The text of a mail as a person reads it: quoted-printable soft breaks joined, or base64 decoded. */
function bodyOf(mail: ReceivedMail): string {
  const [head = '', ...rest] = mail.raw.split(/\r?\n\r?\n/);
  const body = rest.join('\n\n');
  if (/content-transfer-encoding:\s*base64/i.test(head)) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

async function signIn(site: Site): Promise<{ cookie: string; csrf: string }> {
  const answer = await fetch(`${site.url}/admin/actions/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ password: PASSWORD }),
    headers: { ...FORM, origin: site.url },
    redirect: 'manual',
  });
  expect([answer.status, answer.headers.get('location')]).toEqual([303, '/admin']);
  const cookie = answer.headers.get('set-cookie')!.split(';')[0]!;
  const page = await (await fetch(`${site.url}/admin/people`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page)![1]! };
}

function post(site: Site, action: string, fields: Record<string, string>, cookie?: string): Promise<Response> {
  return fetch(`${site.url}/admin/actions/${action}`, {
    method: 'POST',
    body: new URLSearchParams(fields),
    headers: { ...FORM, origin: site.url, ...(cookie && { cookie }) },
    redirect: 'manual',
  });
}

describe('with SMTP', () => {
  let site: Site;
  let smtp: FakeSmtpServer;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    // Links are mailed on PUBLIC_URL only (decision 0303): the server's own address.
    const port = await freePort();
    site = await startSite({
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD),
      CONTACT_TO: 'owner@example.org',
      CONTACT_FROM: 'forms@example.com',
      SMTP_URL: smtp.url(),
    });
    // A person added by the command line, who asks for a reset link below. The server may be
    // writing (the first owner, its housekeeping) just after it starts: wait for its lock, as
    // tests/server/refused-posts.test.ts does, rather than fail with "database is locked".
    const at = new Date().toISOString();
    const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { timeout: 5_000 });
    try {
      db.prepare(
        `INSERT INTO admin_users (email, name, role, forms, password_hash, origin, user_handle, digest, created_at, updated_at)
         VALUES ('pat@example.org', 'Pat', 'reader', '["contact"]', NULL, 'cli', 'handle-of-pat', 0, ?, ?)`,
      ).run(at, at);
    } finally {
      db.close();
    }
  });
  afterAll(async () => {
    await site?.stop();
    await smtp?.close();
  });

  test('an invitation is mailed; its page never uses it; the link works once and signs the person in', async () => {
    const { cookie, csrf } = await signIn(site);
    const invited = await post(site, 'invite', { csrf, email: 'eddie@example.org', name: 'Eddie', role: 'editor', 'form.contact': 'on' }, cookie);
    expect([invited.status, invited.headers.get('location')]).toEqual([303, '/admin/people?invited=1']);
    const mail = await eventually('the invitation', () => smtp.received.find((received) => received.to.includes('eddie@example.org')));
    expect(bodyOf(mail)).toContain('invited you to read the messages of');
    const link = new RegExp(`${site.url}/admin/welcome/sfl_[A-Za-z0-9_-]{43}`).exec(bodyOf(mail))![0];

    for (let i = 0; i < 2; i++) {
      const page = await fetch(link);
      expect([page.status, page.headers.get('referrer-policy'), page.headers.get('cache-control')]).toEqual([200, 'same-origin', 'no-store']);
      expect(await page.text()).toContain('action="/admin/actions/accept-link"');
    }
    const token = link.slice(link.lastIndexOf('/') + 1);
    const accepted = await post(site, 'accept-link', { token, name: 'Eddie Editor', password: 'twelve chars at least' });
    expect([accepted.status, accepted.headers.get('location')]).toEqual([303, '/admin']);
    const theirs = accepted.headers.get('set-cookie')!.split(';')[0]!;
    // An editor: the people page is the owners'.
    expect((await fetch(`${site.url}/admin/people`, { headers: { cookie: theirs }, redirect: 'manual' })).status).toBe(403);
    expect((await post(site, 'accept-link', { token, name: 'Eve', password: 'twelve chars at least' })).status).toBe(400);
    const used = await fetch(link);
    expect(used.status).toBe(404);
    expect(await used.text()).toContain('This link cannot be used');
    // Their own password signs them in from now on.
    const again = await post(site, 'sign-in', { email: 'eddie@example.org', password: 'twelve chars at least' });
    expect([again.status, again.headers.get('location')]).toEqual([303, '/admin']);
  });

  test('a reset request gets the same answer for anyone; only a person gets the mail; the 6th from one client is 429', async () => {
    expect(await (await fetch(`${site.url}/admin`)).text()).toContain('Forgot your password?');
    const page = await fetch(`${site.url}/admin/reset`);
    expect(page.status).toBe(200);
    const answers = [];
    for (const email of ['nobody@example.org', 'pat@example.org']) {
      const answer = await post(site, 'request-reset', { email });
      answers.push([answer.status, answer.headers.get('location'), await answer.text()]);
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]!.slice(0, 2)).toEqual([303, '/admin/reset?sent=1']);
    const mail = await eventually('the reset mail', () =>
      smtp.received.find((received) => received.to.includes('pat@example.org') && bodyOf(received).includes('set a new password')),
    );
    expect(smtp.received.some((received) => received.to.includes('nobody@example.org'))).toBe(false);
    // Followed: the account page says what changed (decision 0304); Pat has no passkey to check.
    const token = /\/admin\/welcome\/(sfl_[A-Za-z0-9_-]{43})/.exec(bodyOf(mail))![1]!;
    const followed = await post(site, 'accept-link', { token, password: 'pat’s new long password' });
    expect([followed.status, followed.headers.get('location')]).toEqual([303, '/admin/account?reset=1']);
    const cookie = followed.headers.get('set-cookie')!.split(';')[0]!;
    const account = await (await fetch(`${site.url}/admin/account?reset=1`, { headers: { cookie } })).text();
    expect(account).toContain('Your new password is set, and you are signed out everywhere else.');
    expect(account).not.toContain('Check your passkeys');
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(site, 'request-reset', { email: `x${i}@example.org` })).status);
    expect(statuses).toEqual([303, 303, 303, 429]);
  });
});

describe('with SMTP off', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite({ ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD) });
  });
  afterAll(async () => {
    await site?.stop();
  });

  test('the owner is shown the link once, and it works', async () => {
    const { cookie, csrf } = await signIn(site);
    const shown = await post(site, 'invite', { csrf, email: 'rita@example.org', role: 'reader', 'form.contact': 'on' }, cookie);
    expect([shown.status, shown.headers.get('cache-control')]).toEqual([200, 'no-store']);
    const link = /id="shown-value"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*id="shown-value"/.exec(await shown.text());
    const url = link![1] ?? link![2]!;
    expect(url).toMatch(new RegExp(`^${site.url}/admin/welcome/sfl_[A-Za-z0-9_-]{43}$`));
    const token = url.slice(url.lastIndexOf('/') + 1);
    const accepted = await post(site, 'accept-link', { token, name: 'Rita', password: 'twelve chars at least' });
    expect([accepted.status, accepted.headers.get('location')]).toEqual([303, '/admin']);
  });

  test('there is no reset page and no "Forgot your password?"', async () => {
    expect(await (await fetch(`${site.url}/admin`)).text()).not.toContain('Forgot your password?');
    expect((await fetch(`${site.url}/admin/reset`)).status).toBe(404);
  });
});
