import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openStore, type Store } from '../../packages/site-forms/src/lib/database/database.ts';
import { createLogger } from '../../packages/site-forms/src/lib/log.ts';
import { createPeopleStore, type PeopleStore } from '../../packages/site-forms/src/lib/people/store.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';
import { TEST_DATABASE } from '../support/stores.ts';

// The mail of a message through the built server and a real SMTP server, with people in the admin
// (issue 42 item 4, decision 0285): the people were made on the server's database file before it
// started, and changed while it runs; each message's RCPTs are whom the people's choices name at
// the time of its send, never nobody.
const CONTACT_TO = 'owner@example.com';
const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g';
const T0 = new Date('2030-01-01T10:00:00.000Z');

let smtp: FakeSmtpServer;
let site: Site;
let store: Store;
let people: PeopleStore;
let dataDir: string;
let ids: { owner: number; eddie: number; rita: number };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'site-forms-recipients-'));
  // The server's own database file, brought to the current schema and given its people before the start.
  store = openStore({ ...TEST_DATABASE, url: undefined, dataDir }, createLogger({ level: 'silent' }));
  await store.ready;
  people = createPeopleStore(store.sql, { passwordHash: HASH, contactTo: CONTACT_TO });
  await people.ensureEnvOwner(T0);
  const owner = (await people.envOwner())!;
  const eddie = await people.create({ email: 'eddie@example.org', role: 'editor', forms: ['contact'], origin: 'cli' }, T0);
  const rita = await people.create({ email: 'rita@example.org', role: 'reader', forms: ['contact'], origin: 'cli' }, T0);
  if (!eddie.ok || !rita.ok) throw new Error('people not made');
  ids = { owner: owner.id, eddie: eddie.person.id, rita: rita.person.id };
  smtp = await startSmtpServer();
  site = await startSite({ CONTACT_TO, CONTACT_FROM: 'forms@example.com', SMTP_URL: smtp.url() }, { dataDir });
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
