import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Window } from 'happy-dom';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { buildOtherSite, TEST_SITE_CONFIG } from '../support/build-site.ts';
import { parseMail } from '../support/mime.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';

// The promise: the `phone` field documented in forms.config.ts and the guide, added to the
// contact form's definition and nothing else (tests/fixtures/phone.forms.config.ts), reaches the
// page, the store, the owner's mail, the admin and both exports.
const PASSWORD = 'correct horse battery staple';
const NAME = `phone-${process.pid}`;

let built: ReturnType<typeof buildOtherSite>;
let site: Site;
let smtp: FakeSmtpServer;

beforeAll(async () => {
  built = buildOtherSite(NAME, TEST_SITE_CONFIG, { FORMS_CONFIG: 'tests/fixtures/phone.forms.config.ts' });
  smtp = await startSmtpServer();
  site = await startSite(
    {
      SMTP_URL: smtp.url(),
      CONTACT_TO: 'owner@example.com',
      CONTACT_FROM: 'forms@example.com',
      ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD),
    },
    { start: built.start },
  );
}, 240_000);

afterAll(async () => {
  await site?.stop();
  await smtp?.close();
  built?.remove();
});

async function page(path: string, cookie?: string) {
  const window = new Window();
  window.document.write(await (await fetch(`${site.url}${path}`, { headers: cookie ? { cookie } : {} })).text());
  return window.document;
}

async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const response = await fetch(`${site.url}/admin/actions/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ password: PASSWORD }),
    headers: { origin: site.url },
    redirect: 'manual',
  });
  expect(response.status).toBe(303);
  const cookie = response.headers.get('set-cookie')!.split(';')[0]!;
  const html = await (await fetch(`${site.url}/admin`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(html)![1]! };
}

async function exportMessages(format: 'csv' | 'json'): Promise<string> {
  const { cookie, csrf } = await signIn();
  const response = await fetch(`${site.url}/admin/actions/export`, {
    method: 'POST',
    body: new URLSearchParams({ csrf, what: 'messages', format }),
    headers: { cookie, origin: site.url },
  });
  expect(response.status).toBe(200);
  return response.text();
}

const MESSAGE = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Please call me about a table.', honeypot: '' };

describe('the documented phone field added to the contact form', () => {
  let id: number;

  test('appears on the contact page, labelled, as a telephone input', async () => {
    const doc = await page('/contact/');
    const input = doc.querySelector('#contact-phone');
    expect(input?.getAttribute('name')).toBe('phone');
    expect(input?.getAttribute('type')).toBe('tel');
    expect(input?.getAttribute('autocomplete')).toBe('tel');
    expect(doc.querySelector('label[for="contact-phone"]')?.textContent).toBe('Phone');
    expect(doc.querySelector('#contact-phone-hint')?.textContent?.trim()).toBe('If you would rather we call you.');
    // After the message, before the button: the spec's three come first.
    expect([...doc.querySelectorAll('#contact-form [name]')].map((e) => e.getAttribute('name'))).toEqual(['name', 'email', 'message', 'phone', 'honeypot']);
  });

  test('is validated with a message at the field, the spec fields answering as before', async () => {
    const response = await postForm(`${site.url}/api/contact`, { ...MESSAGE, name: 'A', phone: 'call me' });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      success: false,
      errors: { name: ['Name must be between 2 and 100 characters'], phone: ['Phone must be a phone number'] },
    });
  });

  test('is stored with the message, in its own JSON, with no column of its own', async () => {
    const response = await postForm(`${site.url}/api/contact`, { ...MESSAGE, phone: '+44 20 7946 0958' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ success: true });
    const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
    const row = db.prepare('SELECT id, form, name, message, fields FROM submissions').get() as Record<string, unknown>;
    db.close();
    expect(row).toMatchObject({ form: 'contact', name: 'Ada Lovelace', message: 'Please call me about a table.', fields: '{"phone":"+44 20 7946 0958"}' });
    id = Number(row.id);
  });

  test("is in the owner's mail, with its label, after the message", async () => {
    await expect.poll(() => smtp.received.length, { timeout: 10_000 }).toBe(1);
    const mail = parseMail(smtp.received[0]!.raw);
    expect(mail.text).toMatch(/^Please call me about a table\.\r?\n\r?\nPhone: \+44 20 7946 0958\r?\n\r?\n-- \r?\nFrom: Ada Lovelace <ada@example\.org>/);
  });

  test("is on the message's page in the admin, with its label", async () => {
    const { cookie } = await signIn();
    const doc = await page(`/admin/messages/${id}`, cookie);
    const value = doc.querySelector('dd[data-field="phone"]');
    expect(value?.textContent).toBe('+44 20 7946 0958');
    expect(value?.previousElementSibling?.textContent).toBe('Phone');
  });

  test('is a column of both exports', async () => {
    const csv = (await exportMessages('csv')).split('\r\n');
    expect(csv[0]).toBe('id,createdAt,name,email,message,status,attempts,nextAttemptAt,lastError,sentAt,spamReasons,phone');
    // A phone number is written as it is: a spreadsheet reads `+44 20 7946 0958` as text, not a formula (decisions 0071, 0148).
    expect(csv[1]).toMatch(/,Ada Lovelace,ada@example\.org,Please call me about a table\.,sent,1,,,[^,]+,,\+44 20 7946 0958$/);
    const json = JSON.parse(await exportMessages('json')) as Record<string, unknown>[];
    expect(json).toEqual([expect.objectContaining({ id, name: 'Ada Lovelace', phone: '+44 20 7946 0958' })]);
    expect(Object.keys(json[0]!)).not.toContain('form');
  });
});
