/**
 * The daily spam digest with people (issue 42 item 4, spam/upkeep.ts): one mail per person who
 * asked for it, listing only the held messages of their forms, none to a person with nothing held
 * there; nobody asked and CONTACT_TO nobody's: to CONTACT_TO as before people. One digest is taken
 * for the round, and given back only when every mail failed.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import type { Mailer } from '../../../packages/site-forms/src/lib/mail/mailer.ts';
import { createSmtpMailer } from '../../../packages/site-forms/src/lib/mail/mailer.ts';
import { createRecipients } from '../../../packages/site-forms/src/lib/people/recipients.ts';
import { createPeopleStore } from '../../../packages/site-forms/src/lib/people/store.ts';
import { tidySpam } from '../../../packages/site-forms/src/lib/spam/upkeep.ts';
import { parseMail } from '../../support/mime.ts';
import { type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';
import { testEngines } from '../../support/stores.ts';

const INPUT = { name: 'Spammy', email: 'spam@example.com', message: 'Buy now', honeypot: '' };
const CONTACT_TO = 'owner@example.com';
const DAY = 86_400_000;
const T0 = new Date('2030-01-01T10:00:00.000Z');

let smtp: FakeSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(() => smtp.close());

describe.each(testEngines())('the spam digest of each person on $name', (engine) => {
  const open = async () => {
    const { store } = await engine.open();
    const smtpConfig = { url: smtp.url(), to: CONTACT_TO, from: 'site@example.com' };
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', write: (l) => void lines.push(l) });
    const mailer = createSmtpMailer(smtpConfig);
    const deps = {
      spam: store.spam,
      mailer: mailer as Mailer,
      smtp: smtpConfig,
      site: { name: 'Atelier Nord', senderName: 'Atelier Nord', adminOrigin: undefined },
      retentionDays: 30,
      logger,
      recipients: createRecipients(store.sql, CONTACT_TO, logger),
    };
    const people = createPeopleStore(store.sql, { passwordHash: 'x', contactTo: CONTACT_TO });
    const hold = async (form: string) => {
      const id = await store.spam.hold(INPUT, { reasons: ['too-fast'] });
      await store.sql.run('UPDATE submissions SET form = ? WHERE id = ?', [form, id]);
      return id;
    };
    const person = async (email: string, role: 'editor' | 'reader', forms: string[] | null, digest: boolean) => {
      const made = await people.create({ email, role, forms, origin: 'cli', digest }, T0);
      if (!made.ok) throw new Error(made.reason);
      return made.person;
    };
    /** The mails sent from here on: to whom (RCPT), their subject and their Message-ID. */
    const since = () => {
      const before = smtp.received.length;
      return () =>
        smtp.received.slice(before).map((mail) => {
          const parsed = parseMail(mail.raw);
          return { rcpt: mail.to, subject: parsed.header('subject')[0], messageId: parsed.header('message-id')[0], text: parsed.text };
        });
    };
    return { store, deps, people, hold, person, since, lines };
  };
  // A second ahead: the digest lists what arrived before the moment it was taken.
  const soon = () => new Date(Date.now() + 1_000);

  test.skipIf(!engine.available)('goes to each person who asked, listing only their forms; a reader who did not ask gets none', async () => {
    const { deps, people, hold, person, since } = await open();
    await people.ensureEnvOwner(T0);
    await person('eddie@example.org', 'editor', ['quote'], true);
    await person('rita@example.org', 'reader', ['quote'], false);
    await hold('contact');
    const quote = await hold('quote');
    const sent = since();
    await expect(tidySpam(deps, soon())).resolves.toMatchObject({ digest: 'sent' });
    const mails = sent();
    expect(mails.map((m) => [m.rcpt, m.subject])).toEqual([
      [[CONTACT_TO], '[Atelier Nord] Held as spam: 2 messages'],
      [['eddie@example.org'], '[Atelier Nord] Held as spam: 1 message'],
    ]);
    expect(mails[1]!.text).toContain(`#${quote} `);
    expect(new Set(mails.map((m) => m.messageId)).size).toBe(2);
  });

  test.skipIf(!engine.available)('skips a person with nothing held in their forms', async () => {
    const { deps, people, hold, person, since } = await open();
    await people.ensureEnvOwner(T0);
    await person('eddie@example.org', 'editor', ['booking'], true);
    await hold('contact');
    const sent = since();
    await expect(tidySpam(deps, soon())).resolves.toMatchObject({ digest: 'sent' });
    expect(sent().map((m) => m.rcpt)).toEqual([[CONTACT_TO]]);
  });

  test.skipIf(!engine.available)('with nobody who asked and CONTACT_TO nobody’s, goes to CONTACT_TO as before people', async () => {
    const { deps, hold, person, since } = await open();
    await person('eddie@example.org', 'editor', ['quote'], false);
    await hold('contact');
    const sent = since();
    await expect(tidySpam(deps, soon())).resolves.toMatchObject({ digest: 'sent' });
    expect(sent().map((m) => [m.rcpt, m.subject])).toEqual([[[CONTACT_TO], '[Atelier Nord] Held as spam: 1 message']]);
  });

  test.skipIf(!engine.available)('with CONTACT_TO’s owner who turned it off and nobody else asking, is sent to nobody and kept for later', async () => {
    const { deps, people, hold, since } = await open();
    await people.ensureEnvOwner(T0);
    const owner = (await people.envOwner())!;
    await people.update(owner.id, { digest: false }, T0);
    await hold('contact');
    const sent = since();
    const now = soon();
    await expect(tidySpam(deps, now)).resolves.toMatchObject({ digest: 'nothing held' });
    expect(sent()).toEqual([]);
    // Asked again: the same held message is listed at the next pass, not lost with a digest taken for nobody.
    await people.update(owner.id, { digest: true }, T0);
    await expect(tidySpam(deps, now)).resolves.toMatchObject({ digest: 'sent' });
    expect(sent().map((m) => m.rcpt)).toEqual([[CONTACT_TO]]);
  });

  test.skipIf(!engine.available)('is given back only when every mail failed: one failure of two keeps the day’s digest taken', async () => {
    const { deps, people, hold, person, lines } = await open();
    await people.ensureEnvOwner(T0);
    await person('eddie@example.org', 'editor', null, true);
    await hold('contact');
    const real = deps.mailer;
    const refusing = (who: string[]): Mailer => ({
      send: async (mail) => (who.includes(mail.envelope.to[0]!) ? { ok: false, permanent: false, reason: 'try later' } : real.send(mail)),
    });
    const now = soon();
    await expect(tidySpam({ ...deps, mailer: refusing([CONTACT_TO, 'eddie@example.org']) }, now)).resolves.toMatchObject({ digest: 'failed' });
    await expect(tidySpam({ ...deps, mailer: refusing(['eddie@example.org']) }, now)).resolves.toMatchObject({ digest: 'sent' });
    // Taken for the day: the next pass within the day sends nothing more.
    await expect(tidySpam(deps, new Date(now.getTime() + DAY - 1))).resolves.toMatchObject({ digest: 'not due' });
    const events = lines.map((l) => JSON.parse(l) as { event: string; to?: string });
    expect(events.filter((e) => e.event === 'spam.digest_failed').length).toBe(3);
    expect(events.filter((e) => e.event === 'spam.digest_sent').length).toBe(1);
  });
});
