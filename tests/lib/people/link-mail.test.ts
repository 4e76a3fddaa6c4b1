/**
 * The mail that carries an invitation or a sign-in link (issue 42, people/link-mail.ts): from
 * CONTACT_FROM to the one person, what it is, the link, until when it works and who sent it; and
 * what became of it (sent, or why not, so that the owner is shown the link), never logging the link.
 */
import { describe, expect, test } from 'vitest';
import type { ContactEmail } from '../../../packages/site-forms/src/lib/mail/email.ts';
import { composeLinkMail, createLinkMailer, linkUrl } from '../../../packages/site-forms/src/lib/people/link-mail.ts';

const NOW = new Date('2030-01-01T10:00:00.000Z');
const URL = 'https://site.test/admin/welcome/sfl_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const SITE = { name: 'Ada’s\nworkshop', senderName: 'Workshop forms' };

describe('the link mail', () => {
  test('an invitation: from CONTACT_FROM to the invitee, with the link, its end, the inviter and the role', () => {
    const mail = composeLinkMail(
      { kind: 'invite', to: 'eddie@example.org', url: URL, expiresAt: new Date('2030-01-04T10:00:00.000Z'), by: 'Owner', role: 'editor' },
      { from: 'forms@site.test' },
      SITE,
      NOW,
    );
    expect(mail).toMatchObject({
      from: { name: 'Workshop forms', address: 'forms@site.test' },
      to: 'eddie@example.org',
      envelope: { from: 'forms@site.test', to: ['eddie@example.org'] },
      subject: 'You are invited to the inbox of Ada’s workshop',
      date: NOW,
    });
    expect(mail.messageId).toMatch(/^<link\.\d+\.[0-9a-f]{12}@site\.test>$/);
    expect(mail.text).toBe(
      [
        'Owner invited you to read the messages of Ada’s workshop as editor.',
        '',
        URL,
        '',
        'The link works once, until 2030-01-04 10:00 UTC.',
        'Open the link, choose your name and a password, and you are in.',
        '',
      ].join('\n'),
    );
  });

  test('a reset link the person asked for names nobody and says what to do if they did not ask', () => {
    const mail = composeLinkMail(
      { kind: 'reset', to: 'rita@example.org', url: URL, expiresAt: new Date('2030-01-01T11:00:00.000Z') },
      { from: 'forms@site.test' },
      SITE,
      NOW,
    );
    expect(mail.subject).toBe('Your sign-in link for the inbox of Ada’s workshop');
    expect(mail.text).toContain('Someone asked for a link to set a new password for the inbox of Ada’s workshop.');
    expect(mail.text).toContain('The link works once, until 2030-01-01 11:00 UTC.');
    expect(mail.text).toContain('If you did not ask for it, ignore this mail');
  });

  test('the link is under the site’s origin', () => {
    expect(linkUrl('https://site.test', 'sfl_x')).toBe('https://site.test/admin/welcome/sfl_x');
  });
});

describe('the link mailer', () => {
  const mailing = { kind: 'reset' as const, to: 'rita@example.org', url: URL, expiresAt: NOW };
  const setUp = (answer: 'ok' | 'refused', allowed = true) => {
    const sent: ContactEmail[] = [];
    const failures: string[] = [];
    const mailer = createLinkMailer({
      smtp: { from: 'forms@site.test' },
      mailer: {
        send: async (email) => {
          sent.push(email);
          return answer === 'ok' ? { ok: true } : { ok: false, permanent: true, reason: '550 mailbox unavailable' };
        },
      },
      site: SITE,
      allow: async () => allowed,
      onFailure: (reason) => failures.push(reason),
    });
    return { mailer, sent, failures };
  };

  test('sent, refused by the server (told without the link), or over the address’s limit (not sent)', async () => {
    const ok = setUp('ok');
    expect([ok.mailer.on, await ok.mailer.send(mailing, NOW), ok.sent.length]).toEqual([true, 'sent', 1]);
    const refused = setUp('refused');
    expect(await refused.mailer.send(mailing, NOW)).toBe('failed');
    expect(refused.failures).toEqual(['550 mailbox unavailable']);
    const limited = setUp('ok', false);
    expect([await limited.mailer.send(mailing, NOW), limited.sent.length]).toEqual(['limited', 0]);
  });

  test('a link to be made is made only when the address may have a mail, and sent if one was made', async () => {
    let made = 0;
    const make = async () => {
      made += 1;
      return mailing;
    };
    const limited = setUp('ok', false);
    expect([await limited.mailer.sendMade(mailing.to, make, NOW), made, limited.sent.length]).toEqual(['limited', 0, 0]);
    const ok = setUp('ok');
    expect([await ok.mailer.sendMade(mailing.to, make, NOW), made, ok.sent.length]).toEqual(['sent', 1, 1]);
    expect([await ok.mailer.sendMade(mailing.to, async () => undefined, NOW), ok.sent.length]).toEqual(['nothing', 1]);
  });

  test('without SMTP it is off and sends nothing', async () => {
    const off = createLinkMailer({ smtp: undefined, mailer: undefined, site: SITE, allow: async () => true });
    expect([off.on, await off.send(mailing, NOW)]).toEqual([false, 'off']);
  });
});
