import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { openStore, type Store } from '../../packages/site-forms/src/lib/database/database.ts';
import { createLogger } from '../../packages/site-forms/src/lib/log.ts';
import { createPeopleStore, type PeopleStore } from '../../packages/site-forms/src/lib/people/store.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';
import { TEST_DATABASE } from '../support/stores.ts';

// The mail of a message through the built server and a real SMTP server, with people in the admin
// (issue 42 item 4, decision 0285): the people were made on the server's database file before it
// started, and changed while it runs; each message's RCPTs are whom the people's choices name at
// the time of its send, never nobody. A person also changes their own choice by a signed-in post
// (decision 0301), and the owner reads it on the person's page.
const CONTACT_TO = 'owner@example.com';
const PASSWORD = 'the owner’s own passphrase';
const RITA_PASSWORD = 'a reader reads and reads';
let HASH: string;
const T0 = new Date('2030-01-01T10:00:00.000Z');

let smtp: FakeSmtpServer;
let site: Site;
let store: Store;
let people: PeopleStore;
let dataDir: string;
let ids: { owner: number; eddie: number; rita: number };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'site-forms-recipients-'));
  HASH = await hashPassword(PASSWORD);
  // The server's own database file, brought to the current schema and given its people before the start.
  store = openStore({ ...TEST_DATABASE, url: undefined, dataDir }, createLogger({ level: 'silent' }));
  await store.ready;
  people = createPeopleStore(store.sql, { passwordHash: HASH, contactTo: CONTACT_TO });
  await people.ensureEnvOwner(T0);
  const owner = (await people.envOwner())!;
  const eddie = await people.create({ email: 'eddie@example.org', role: 'editor', forms: ['contact'], origin: 'cli' }, T0);
  const rita = await people.create(
    { email: 'rita@example.org', name: 'Rita', role: 'reader', forms: ['contact'], origin: 'cli', passwordHash: await hashPassword(RITA_PASSWORD) },
    T0,
  );
  if (!eddie.ok || !rita.ok) throw new Error('people not made');
  ids = { owner: owner.id, eddie: eddie.person.id, rita: rita.person.id };
  smtp = await startSmtpServer();
  site = await startSite({ CONTACT_TO, CONTACT_FROM: 'forms@example.com', SMTP_URL: smtp.url(), ADMIN_PASSWORD_HASH: HASH }, { dataDir });
});
afterAll(async () => {
  await site?.stop();
  await smtp?.close();
  await store?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** Sends one contact message and answers the RCPTs of its mail, found by the visitor's name in the subject. */
async function rcptOf(name: string): Promise<string[]> {
  const fields = { name, email: 'visitor@example.net', message: 'Hello there, a question about your work.' };
  expect((await postForm(`${site.url}/api/contact`, fields, { accept: 'application/json' })).status).toBe(200);
  const mail = await eventually(`the mail of ${name}`, () => smtp.received.find((received) => received.raw.includes(name)));
  return [...mail.to].sort();
}

describe('the mail of a message with people in the admin', () => {
  test('by default goes to CONTACT_TO, the first owner’s address, exactly as before people', async () => {
    expect(await rcptOf('Ada Default')).toEqual([CONTACT_TO]);
  });

  test('goes only to who chose the form: the editor, and then the reader and the owner too', async () => {
    await people.update(ids.owner, { mailForms: [] }, T0);
    await people.update(ids.eddie, { mailForms: ['contact'] }, T0);
    expect(await rcptOf('Bea Editor')).toEqual(['eddie@example.org']);
    await people.update(ids.rita, { mailForms: ['contact'] }, T0);
    await people.update(ids.owner, { mailForms: ['contact'] }, T0);
    expect(await rcptOf('Cy Everyone')).toEqual(['eddie@example.org', CONTACT_TO, 'rita@example.org'].sort());
  });

  test('stops reaching a person whose forms lose the form, and never goes to nobody', async () => {
    await people.update(ids.owner, { mailForms: [] }, T0);
    await people.update(ids.rita, { mailForms: [] }, T0);
    await people.update(ids.eddie, { forms: ['quote'] }, T0);
    expect(await rcptOf('Di Nobody')).toEqual([CONTACT_TO]);
  });
});

/** Signs a person in with their email and password: the session's cookie. */
async function signIn(email: string, password: string): Promise<string> {
  const signedIn = await fetch(`${site.url}/admin/actions/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ email, password }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url },
    redirect: 'manual',
  });
  expect([signedIn.status, signedIn.headers.get('location')]).toEqual([303, '/admin']);
  return signedIn.headers.get('set-cookie')!.split(';')[0]!;
}

/** A page of the admin as the signed-in person reads it. */
async function page(path: string, cookie: string): Promise<string> {
  const answer = await fetch(`${site.url}${path}`, { headers: { cookie }, redirect: 'manual' });
  expect(answer.status).toBe(200);
  return answer.text();
}

/** The checkbox of `name` in a page's HTML, and whether it is ticked. */
function checkbox(html: string, name: string): 'ticked' | 'not ticked' | 'absent' {
  const input = new RegExp(`<input[^>]*name="${name.replace('.', '\\.')}"[^>]*>`).exec(html)?.[0];
  return input === undefined ? 'absent' : /\schecked\b/.test(input) ? 'ticked' : 'not ticked';
}

describe('a person’s own choice, posted signed in', () => {
  test('a reader unticks the contact form: the next message of it is not mailed to them, and the owner reads it on their page', async () => {
    await people.update(ids.owner, { mailForms: [] }, T0);
    await people.update(ids.eddie, { forms: ['contact'], mailForms: ['contact'] }, T0);
    await people.update(ids.rita, { mailForms: ['contact'] }, T0);
    expect(await rcptOf('Ed Before')).toEqual(['eddie@example.org', 'rita@example.org']);

    const cookie = await signIn('rita@example.org', RITA_PASSWORD);
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page('/admin/messages', cookie))?.[1];
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const post = (fields: Record<string, string>) =>
      fetch(`${site.url}/admin/actions/mail-preferences`, {
        method: 'POST',
        body: new URLSearchParams(fields),
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site.url, cookie },
        redirect: 'manual',
      });
    // Without the CSRF token nothing changes.
    expect((await post({ digest: 'on' })).status).toBe(403);
    expect((await people.find(ids.rita))!.mailForms).toEqual(['contact']);
    const saved = await post({ csrf: csrf!, digest: 'on' });
    expect([saved.status, saved.headers.get('location')]).toEqual([303, '/admin/account?mail=saved']);
    expect(await rcptOf('Flo After')).toEqual(['eddie@example.org']);

    const owner = await signIn(CONTACT_TO, PASSWORD);
    const html = await page(`/admin/people/${ids.rita}`, owner);
    expect(html).toContain('action="/admin/actions/person-mail"');
    expect([checkbox(html, 'mail.contact'), checkbox(html, 'digest')]).toEqual(['not ticked', 'ticked']);
    expect(html).toContain('Mail them new messages of');
    expect(await page('/admin/audit', owner)).toContain('Chose the mail they get: Rita &lt;rita@example.org&gt;: no form; the digest on');
  });
});
