/**
 * Each person chooses the mail they get (issue 42 item 4, admin/actions/account.ts, decision 0301):
 * `mail-preferences` (every signed-in person, their own choices) and `person-mail` (an owner, for
 * a person, from the person's page) through `handleAdminPost`, over a real store on both engines.
 * The choice is saved, and the next mail's recipients (people/recipients.ts, read at each send)
 * follow it; a form outside the person's forms is refused with nothing changed; every change is
 * audited; the write is conditional on the forms the choice was checked against.
 */
import { describe, expect, test } from 'vitest';
import { type AdminDeps, handleAdminPost } from '../../../packages/site-forms/src/lib/admin/actions/index.ts';
import type { TeamDeps } from '../../../packages/site-forms/src/lib/admin/actions/people.ts';
import { createAuditLog } from '../../../packages/site-forms/src/lib/admin/audit.ts';
import { createSessions } from '../../../packages/site-forms/src/lib/admin/session.ts';
import { createSessionStore } from '../../../packages/site-forms/src/lib/admin/session-store.ts';
import { createRecipients } from '../../../packages/site-forms/src/lib/people/recipients.ts';
import { createPeopleStore, type Person } from '../../../packages/site-forms/src/lib/people/store.ts';
import { testEngines } from '../../support/stores.ts';

const SITE = 'https://site.test';
const T0 = new Date('2030-01-01T10:00:00.000Z');
const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g';
const CONTACT_TO = 'owner@example.org';

function post(path: string, fields: Record<string, string>, cookie: string): Request {
  return new Request(`${SITE}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: SITE, cookie },
    body: new URLSearchParams(fields),
  });
}

describe.each(testEngines())('the mail choices on $name', ({ available, open }) => {
  const setUp = async () => {
    const { store } = await open();
    const env = { passwordHash: HASH, contactTo: CONTACT_TO };
    const people = createPeopleStore(store.sql, env);
    await people.ensureEnvOwner(T0);
    const owner = (await people.envOwner())!;
    const now = () => T0;
    const sessions = createSessions(createSessionStore(store.sql, { legacyOwner: true }), now);
    const audit = createAuditLog(store.sql);
    const team = { people, forms: ['contact', 'quote', 'booking'] } as unknown as TeamDeps;
    const deps = { team, sessions, audit, people, now } as unknown as AdminDeps;
    const send = (action: Parameters<typeof handleAdminPost>[0], fields: Record<string, string>, cookie: string) =>
      handleAdminPost(action, post(`/admin/actions/${action}`, fields, cookie), deps, { publicOrigin: SITE, clientKey: '198.51.100.7', clientHash: 'c0ffee' });
    const as = async (person: Person) => {
      const session = await sessions.start({ userId: person.id, stage: 'full', method: 'password' });
      return { cookie: `__Host-admin_session=${session.token}`, csrf: session.csrfToken };
    };
    const add = async (email: string, role: Person['role'], forms: string[] | null = null) => {
      const made = await people.create({ email, name: email.split('@')[0]!, role, forms, origin: 'cli' }, T0);
      if (!made.ok) throw new Error('not made');
      return made.person;
    };
    const entries = async () => (await audit.list(50, 0)).entries.reverse().map((entry) => [entry.action, entry.detail, entry.actorName]);
    const recipients = createRecipients(store.sql, CONTACT_TO);
    const choices = async (id: number) => {
      const person = (await people.find(id))!;
      return { mailForms: person.mailForms, digest: person.digest };
    };
    return { people, owner, send, as, add, entries, recipients, choices };
  };

  describe.skipIf(!available)('one’s own (mail-preferences)', () => {
    test('a reader chooses their form’s mail and the digest: saved, audited, and the next mail and digest follow it', async () => {
      const { add, as, send, entries, recipients, choices } = await setUp();
      const rita = await add('rita@example.org', 'reader', ['quote']);
      expect(await recipients.forForm({ name: 'quote' })).toEqual([CONTACT_TO]);
      const { cookie, csrf } = await as(rita);
      expect(await send('mail-preferences', { csrf, 'mail.quote': 'on', digest: 'on' }, cookie)).toEqual({
        kind: 'redirect',
        location: '/admin/account?mail=saved',
      });
      expect(await choices(rita.id)).toEqual({ mailForms: ['quote'], digest: true });
      expect(await recipients.forForm({ name: 'quote' })).toEqual([CONTACT_TO, 'rita@example.org']);
      expect((await recipients.forDigest()).map((r) => r.to)).toEqual([CONTACT_TO, 'rita@example.org']);
      expect(await entries()).toEqual([['mail-preferences', 'rita <rita@example.org>: quote; the digest on', 'rita <rita@example.org>']]);
    });

    test('unticking everything stops the form’s mail and the digest at the next send', async () => {
      const { owner, as, send, recipients, choices, entries } = await setUp();
      expect(await recipients.forForm({ name: 'quote' })).toEqual([CONTACT_TO]);
      const { cookie, csrf } = await as(owner);
      // The owner ticks contact only: quote's next mail has nobody who chose it, so CONTACT_TO stands in (and says so in the log).
      expect(await send('mail-preferences', { csrf, 'mail.contact': 'on' }, cookie)).toMatchObject({ kind: 'redirect' });
      expect(await choices(owner.id)).toEqual({ mailForms: ['contact'], digest: false });
      expect(await recipients.forDigest()).toEqual([]);
      expect(await send('mail-preferences', { csrf, digest: 'on' }, cookie)).toMatchObject({ kind: 'redirect' });
      expect(await choices(owner.id)).toEqual({ mailForms: [], digest: true });
      expect(await recipients.forDigest()).toEqual([{ id: owner.id, to: CONTACT_TO, scope: { all: true } }]);
      expect((await entries()).map(([, detail]) => detail)).toEqual([
        'Owner <owner@example.org>: contact; the digest off',
        'Owner <owner@example.org>: no form; the digest on',
      ]);
    });

    test('an editor’s choice moves a form’s mail from CONTACT_TO to them', async () => {
      const { owner, add, as, send, recipients } = await setUp();
      const eddie = await add('eddie@example.org', 'editor', ['quote', 'newsletter']);
      const owners = await as(owner);
      await send('mail-preferences', { csrf: owners.csrf, 'mail.contact': 'on' }, owners.cookie);
      const { cookie, csrf } = await as(eddie);
      expect(await send('mail-preferences', { csrf, 'mail.quote': 'on' }, cookie)).toMatchObject({ kind: 'redirect' });
      expect(await recipients.forForm({ name: 'quote' })).toEqual(['eddie@example.org']);
      expect(await recipients.forForm({ name: 'contact' })).toEqual([CONTACT_TO]);
    });

    test.each([
      ['a form outside their forms', { 'mail.contact': 'on' }],
      ['a form outside their forms beside one of theirs', { 'mail.quote': 'on', 'mail.booking': 'on' }],
      ['a form the site does not have', { 'mail.payroll': 'on' }],
      ['the newsletter list, which has no messages to mail', { 'mail.newsletter': 'on' }],
    ])('%s is refused (400) and nothing changes', async (_, fields) => {
      const { add, as, send, entries, choices } = await setUp();
      const rita = await add('rita@example.org', 'reader', ['quote', 'newsletter']);
      const { cookie, csrf } = await as(rita);
      expect(await send('mail-preferences', { csrf, ...fields }, cookie)).toEqual({
        kind: 'refused',
        status: 400,
        message: 'Choose among your forms only: one of those ticked is not yours. Reload the page and try again.',
      });
      expect(await choices(rita.id)).toEqual({ mailForms: null, digest: false });
      expect(await entries()).toEqual([]);
    });

    test('without the CSRF token it is refused (403) and nothing changes', async () => {
      const { add, as, send, choices } = await setUp();
      const rita = await add('rita@example.org', 'reader', ['quote']);
      const { cookie } = await as(rita);
      expect(await send('mail-preferences', { 'mail.quote': 'on', digest: 'on' }, cookie)).toMatchObject({ kind: 'refused', status: 403 });
      expect(await choices(rita.id)).toEqual({ mailForms: null, digest: false });
    });
  });

  describe.skipIf(!available)('a person’s, by an owner (person-mail)', () => {
    test('the owner sets a reader’s choices from their page: saved through the same rules, audited with both names', async () => {
      const { owner, add, as, send, entries, choices, recipients } = await setUp();
      const rita = await add('rita@example.org', 'reader', ['quote']);
      const { cookie, csrf } = await as(owner);
      expect(await send('person-mail', { csrf, id: String(rita.id), 'mail.quote': 'on' }, cookie)).toEqual({
        kind: 'redirect',
        location: `/admin/people/${rita.id}?mail=saved`,
      });
      expect(await choices(rita.id)).toEqual({ mailForms: ['quote'], digest: false });
      expect(await recipients.forForm({ name: 'quote' })).toEqual([CONTACT_TO, 'rita@example.org']);
      expect(await send('person-mail', { csrf, id: String(rita.id), 'mail.contact': 'on' }, cookie)).toMatchObject({ kind: 'refused', status: 400 });
      expect(await choices(rita.id)).toEqual({ mailForms: ['quote'], digest: false });
      expect(await send('person-mail', { csrf, id: '999', 'mail.quote': 'on' }, cookie)).toMatchObject({ kind: 'refused', status: 404 });
      expect(await entries()).toEqual([['mail-preferences', 'rita <rita@example.org>: quote; the digest off', 'Owner <owner@example.org>']]);
    });

    test('an editor or a reader cannot set another person’s choices (403), nor their own through it', async () => {
      const { owner, add, as, send, choices } = await setUp();
      const eddie = await add('eddie@example.org', 'editor', ['quote']);
      const { cookie, csrf } = await as(eddie);
      for (const id of [owner.id, eddie.id]) {
        expect(await send('person-mail', { csrf, id: String(id), 'mail.quote': 'on' }, cookie)).toMatchObject({ kind: 'refused', status: 403 });
      }
      expect(await choices(owner.id)).toEqual({ mailForms: null, digest: true });
      expect(await choices(eddie.id)).toEqual({ mailForms: null, digest: false });
    });
  });

  describe.skipIf(!available)('the one conditional write (people store chooseMail)', () => {
    test('writes only while the person’s role and forms are those the choice was checked against', async () => {
      const { people, add, choices } = await setUp();
      const rita = await add('rita@example.org', 'reader', ['quote']);
      // The owner takes quote from Rita between her page's check and her write: the write does nothing.
      await people.update(rita.id, { forms: ['contact'] }, T0);
      expect(await people.chooseMail(rita.id, { mailForms: ['quote'], digest: true }, { role: 'reader', forms: ['quote'] }, T0)).toEqual({
        ok: false,
        reason: 'changed',
      });
      expect(await choices(rita.id)).toEqual({ mailForms: null, digest: false });
      const saved = await people.chooseMail(rita.id, { mailForms: ['contact'], digest: true }, { role: 'reader', forms: ['contact'] }, T0);
      expect(saved.ok && { mailForms: saved.person.mailForms, digest: saved.person.digest }).toEqual({ mailForms: ['contact'], digest: true });
      expect(await people.chooseMail(999, { mailForms: [], digest: false }, { role: 'reader', forms: null }, T0)).toEqual({ ok: false, reason: 'not-found' });
    });

    test('an owner’s forms (every form) compare as such', async () => {
      const { people, owner, choices } = await setUp();
      const saved = await people.chooseMail(owner.id, { mailForms: ['contact'], digest: false }, { role: 'owner', forms: null }, T0);
      expect(saved.ok).toBe(true);
      expect(await choices(owner.id)).toEqual({ mailForms: ['contact'], digest: false });
      expect((await people.chooseMail(owner.id, { mailForms: [], digest: false }, { role: 'editor', forms: null }, T0)).ok).toBe(false);
    });
  });
});
