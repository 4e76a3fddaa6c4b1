import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli } from '../contact/run-inbox.ts';
import { parseMail } from '../support/mime.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';

// NEWSLETTER_DOUBLE_OPT_IN with the local list, through the built server and a real SMTP server:
// an unconfirmed address is never on the list, a confirmed one is with its consent record,
// and one-click unsubscribe (RFC 8058) takes it off.
let smtp: FakeSmtpServer;
let site: Site;
const PUBLIC = 'https://news.example';

beforeAll(async () => {
  smtp = await startSmtpServer();
  site = await startSite({
    SMTP_URL: smtp.url(),
    CONTACT_TO: 'owner@example.com',
    CONTACT_FROM: 'forms@example.com',
    PUBLIC_URL: PUBLIC,
    NEWSLETTER_DOUBLE_OPT_IN: 'true',
  });
});
afterAll(async () => {
  await site?.stop();
  await smtp?.close();
});

const listed = () => {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    return (db.prepare('SELECT email FROM subscribers ORDER BY email').all() as { email: string }[]).map((row) => row.email);
  } finally {
    db.close();
  }
};
const mailsTo = (address: string) => smtp.received.filter((mail) => mail.to.includes(address)).map((mail) => parseMail(mail.raw));

describe('double opt-in with the local list', () => {
  test('a signup gets a confirmation email and is on the list only once confirmed, with its consent record', async () => {
    const response = await postForm(`${site.url}/api/newsletter`, { email: 'reader@example.org' }, { referer: `${site.url}/` });
    expect(response.status).toBe(200);
    // The spec's success, and that the address waits for its confirmation (the form's script says so).
    await expect(response.json()).resolves.toEqual({ success: true, awaitingConfirmation: true });
    await eventually('the confirmation email', () => mailsTo('reader@example.org').length === 1);
    expect(listed()).toEqual([]);

    const mail = mailsTo('reader@example.org')[0]!;
    expect(mail.header('subject')[0]).toMatch(/^Confirm your subscription to /);
    expect(mail.header('list-unsubscribe')[0]).toMatch(new RegExp(`^<${PUBLIC}/api/newsletter/unsubscribe\\?token=[\\w-]{32}>$`));
    expect(mail.header('list-unsubscribe-post')).toEqual(['List-Unsubscribe=One-Click']);
    const confirm = new RegExp(`${PUBLIC}/newsletter/confirm/\\?token=([\\w-]{32})`).exec(mail.text)![1]!;

    // A second signup minutes later sends no second email.
    expect((await postForm(`${site.url}/api/newsletter`, { email: 'reader@example.org' })).status).toBe(200);
    // The mail is sent, or not, before the answer; the line the server logs after deciding says which.
    const asked = () => site.logs.filter((line) => typeof line === 'object' && line.event === 'newsletter.confirmation_asked');
    await eventually('the second signup to be decided', () => asked().length === 2);
    expect(asked().map((line) => (line as { sent: boolean }).sent)).toEqual([true, false]);
    expect(mailsTo('reader@example.org')).toHaveLength(1);

    // The link opens a page with one button; following the link alone changes nothing.
    const page = await fetch(`${site.url}/newsletter/confirm/?token=${confirm}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`name="token" value="${confirm}"`);
    expect(listed()).toEqual([]);

    const confirmed = await postForm(`${site.url}/api/newsletter/confirm`, { token: confirm });
    expect(confirmed.status).toBe(200);
    expect(listed()).toEqual(['reader@example.org']);
    const again = await postForm(`${site.url}/api/newsletter/confirm`, { token: confirm });
    expect(again.status).toBe(400);
    await expect(again.json()).resolves.toEqual({ success: false, error: 'This confirmation link has expired or was already used. Please subscribe again.' });

    // The export carries the consent record.
    const exported = await runCli('subscribers', ['export', '--format', 'csv'], { DATA_DIR: site.dataDir });
    const [header, row] = exported.stdout.split('\r\n');
    expect(header).toBe('Email Address,Created,Consent,Signed Up,Confirmed,Consent Text,Consent Version,Consent Page,Client');
    expect(row).toMatch(/^reader@example\.org,\S+ \S+,confirmed,\S+ \S+,\S+ \S+,I would like to receive the newsletter[^,]*,[0-9a-f]{12},\/,127\.0\.0\.0\/24$/);

    // One-click unsubscribe, as a mail program posts it (no Origin, RFC 8058's body).
    const unsubscribe = /token=([\w-]{32})>$/.exec(mail.header('list-unsubscribe')[0]!)![1]!;
    const oneClick = await fetch(`${site.url}/api/newsletter/unsubscribe?token=${unsubscribe}`, {
      method: 'POST',
      body: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(oneClick.status).toBe(200);
    expect(listed()).toEqual([]);
  });

  test('a person without JavaScript is told to check their inbox', async () => {
    const body = new URLSearchParams({ email: 'paper@example.org' });
    const response = await fetch(`${site.url}/api/newsletter`, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-mode': 'navigate',
        'sec-fetch-dest': 'document',
        'sec-fetch-site': 'same-origin',
      },
      redirect: 'manual',
    });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/thank-you/confirm-subscription/');
  });
});
