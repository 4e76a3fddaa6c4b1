/**
 * Who a form's mail goes to (issue 42 item 4, people/recipients.ts): the formula of the plan's
 * section 7 as a table (a form's own `to`, the people who chose it within their forms, CONTACT_TO
 * while it is nobody's, CONTACT_TO as the last resort), who gets the spam digest, and the reader
 * over the people's table on both engines, read at each send so a change applies to the next try.
 */
import { describe, expect, test } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createRecipients, digestRecipients, mailRecipients, type MailPerson } from '../../../packages/site-forms/src/lib/people/recipients.ts';
import { createPeopleStore } from '../../../packages/site-forms/src/lib/people/store.ts';
import { testEngines } from '../../support/stores.ts';

const CONTACT_TO = 'Owner@Example.org';
const T0 = new Date('2030-01-01T10:00:00.000Z');

/** A person as the formula reads them; the first owner from ADMIN_PASSWORD_HASH unless told. */
const person = (more: Partial<MailPerson> = {}): MailPerson => ({
  id: 1,
  email: 'owner@example.org',
  role: 'owner',
  forms: null,
  mailForms: null,
  digest: true,
  ...more,
});
const envOwner = person();
const editor = (more: Partial<MailPerson> = {}) => person({ id: 2, email: 'eddie@example.org', role: 'editor', forms: ['quote'], digest: false, ...more });
const reader = (more: Partial<MailPerson> = {}) => person({ id: 3, email: 'rita@example.org', role: 'reader', forms: ['quote'], digest: false, ...more });

describe('the recipients of a form’s mail', () => {
  test.each<[string, MailPerson[], { name: string; to?: string | string[] }, string[]]>([
    ['nobody: CONTACT_TO, as before people', [], { name: 'contact' }, [CONTACT_TO]],
    ['nobody, a form with its own address: that address only', [], { name: 'booking', to: 'bookings@example.org' }, ['bookings@example.org']],
    ['the first owner with CONTACT_TO’s address, by default: CONTACT_TO once, as configured', [envOwner], { name: 'contact' }, [CONTACT_TO]],
    [
      'the first owner by default, a form with its own address: that address only',
      [envOwner],
      { name: 'booking', to: 'bookings@example.org' },
      ['bookings@example.org'],
    ],
    [
      'a form with several addresses: each once, sorted, compared without case',
      [],
      { name: 'booking', to: ['z@example.org', 'A@example.org', 'a@example.org'] },
      ['A@example.org', 'z@example.org'],
    ],
    [
      'an owner who chose only contact: not mailed for quote, and CONTACT_TO is theirs, so CONTACT_TO as the last resort',
      [envOwner, editor()].map((p) => (p.role === 'owner' ? { ...p, mailForms: ['contact'] } : p)),
      { name: 'quote' },
      [CONTACT_TO],
    ],
    ['an owner who chose only contact: mailed for contact', [person({ mailForms: ['contact'] })], { name: 'contact' }, [CONTACT_TO]],
    [
      'an editor who chose quote, the owner who chose contact: quote goes to the editor only',
      [person({ mailForms: ['contact'] }), editor({ mailForms: ['quote'] })],
      { name: 'quote' },
      ['eddie@example.org'],
    ],
    [
      'an editor who chose quote beside a form’s own address: both',
      [editor({ mailForms: ['quote'] })],
      { name: 'quote', to: 'quotes@example.org' },
      ['eddie@example.org', 'quotes@example.org'],
    ],
    [
      'an editor who chose a form outside their forms: not mailed for it',
      [envOwner, editor({ forms: ['contact'], mailForms: ['quote'] })],
      { name: 'quote' },
      [CONTACT_TO],
    ],
    ['an editor and a reader by default (no choice made): neither', [envOwner, editor(), reader()], { name: 'quote' }, [CONTACT_TO]],
    ['a reader who chose quote: mailed like anyone else', [envOwner, reader({ mailForms: ['quote'] })], { name: 'quote' }, [CONTACT_TO, 'rita@example.org']],
    ['CONTACT_TO nobody’s and the owner someone else: both', [person({ email: 'boss@example.org' })], { name: 'contact' }, ['boss@example.org', CONTACT_TO]],
    [
      'CONTACT_TO nobody’s, a form with its own address: only that address and who chose it',
      [person({ email: 'boss@example.org', mailForms: ['booking'] })],
      { name: 'booking', to: 'bookings@example.org' },
      ['bookings@example.org', 'boss@example.org'],
    ],
    ['an owner without an email: not mailed, CONTACT_TO still', [person({ email: null })], { name: 'contact' }, [CONTACT_TO]],
    [
      'a person’s address also the form’s own: once, as the form writes it',
      [editor({ mailForms: ['booking'], forms: null, email: 'bookings@example.org' })],
      { name: 'booking', to: 'Bookings@Example.org' },
      ['Bookings@Example.org'],
    ],
    ['every owner chose nothing: CONTACT_TO as the last resort', [person({ mailForms: [] })], { name: 'contact' }, [CONTACT_TO]],
    ['a form since removed from the site goes as the contact form would', [envOwner], { name: 'gone' }, [CONTACT_TO]],
  ])('%s', (_, people, form, expected) => {
    expect(mailRecipients(people, form, CONTACT_TO)).toEqual(expected);
  });
});

describe('the recipients of the spam digest', () => {
  test.each<[string, MailPerson[], Array<{ to: string; scope: unknown }>]>([
    ['nobody: CONTACT_TO, every form, as before people', [], [{ to: CONTACT_TO, scope: { all: true } }]],
    ['the first owner with CONTACT_TO’s address: CONTACT_TO as configured, every form', [envOwner], [{ to: CONTACT_TO, scope: { all: true } }]],
    ['the first owner who turned it off, CONTACT_TO theirs: nobody', [person({ digest: false })], []],
    [
      'only people who asked, each with their own forms',
      [envOwner, editor({ digest: true }), reader()],
      [
        { to: CONTACT_TO, scope: { all: true } },
        { to: 'eddie@example.org', scope: { all: false, forms: ['quote'] } },
      ],
    ],
    ['someone asked, CONTACT_TO nobody’s: only who asked', [editor({ digest: true })], [{ to: 'eddie@example.org', scope: { all: false, forms: ['quote'] } }]],
    ['nobody asked, CONTACT_TO nobody’s: CONTACT_TO as before', [editor()], [{ to: CONTACT_TO, scope: { all: true } }]],
    ['who asked without an email: not sent', [person({ email: null })], [{ to: CONTACT_TO, scope: { all: true } }]],
  ])('%s', (_, people, expected) => {
    expect(digestRecipients(people, CONTACT_TO).map(({ to, scope }) => ({ to, scope }))).toEqual(expected);
  });
});

describe.each(testEngines())('the recipients read from the people on $name', (engine) => {
  test.skipIf(!engine.available)('are read at each send: a choice or a lost form applies to the next mail, never empty', async () => {
    const { store } = await engine.open();
    const people = createPeopleStore(store.sql, { passwordHash: 'x', contactTo: CONTACT_TO });
    const lines: string[] = [];
    const recipients = createRecipients(store.sql, CONTACT_TO, createLogger({ level: 'info', write: (line) => void lines.push(line) }));
    // Before anybody: CONTACT_TO, as an install without people.
    expect(await recipients.forForm({ name: 'quote' })).toEqual([CONTACT_TO]);
    await people.ensureEnvOwner(T0);
    const owner = (await people.envOwner())!;
    const made = await people.create({ email: 'Eddie@Example.org', role: 'editor', forms: ['quote'], origin: 'cli' }, T0);
    if (!made.ok) throw new Error('not made');
    expect(await recipients.forForm({ name: 'quote' })).toEqual([CONTACT_TO]);
    await people.update(made.person.id, { mailForms: ['quote'] }, T0);
    await people.update(owner.id, { mailForms: ['contact'] }, T0);
    expect(await recipients.forForm({ name: 'quote' })).toEqual(['eddie@example.org']);
    expect(await recipients.forForm({ name: 'contact' })).toEqual([CONTACT_TO]);
    expect(await recipients.forForm({ name: 'booking', to: 'bookings@example.org' })).toEqual(['bookings@example.org']);
    // The editor loses quote: the next mail of quote finds nobody, so it goes to CONTACT_TO, and says so.
    await people.update(made.person.id, { forms: ['contact'] }, T0);
    expect(await recipients.forForm({ name: 'quote' })).toEqual([CONTACT_TO]);
    expect(lines.map((line) => JSON.parse(line) as { event: string; form?: string })).toContainEqual(
      expect.objectContaining({ event: 'contact.no_recipient_chose', form: 'quote' }),
    );
    // The digest: the owner (digest on since made), the editor once they ask.
    expect((await recipients.forDigest()).map((r) => r.to)).toEqual([CONTACT_TO]);
    await people.update(made.person.id, { digest: true }, T0);
    expect(await recipients.forDigest()).toEqual([
      { id: owner.id, to: CONTACT_TO, scope: { all: true } },
      { id: made.person.id, to: 'eddie@example.org', scope: { all: false, forms: ['contact'] } },
    ]);
  });
});
