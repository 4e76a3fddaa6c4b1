import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createSmtpMailer } from '../../../packages/site-forms/src/lib/mail/mailer.ts';
import { consentVersion, createConsents } from '../../../packages/site-forms/src/lib/newsletter/consents.ts';
import { composeConfirmation, createOptIn, evidenceOf } from '../../../packages/site-forms/src/lib/newsletter/opt-in.ts';
import { parseMail } from '../../support/mime.ts';
import { type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';
import { testEngines } from '../../support/stores.ts';

// The site's double opt-in (local list and Resend), in this process: the confirmation mail and
// when it goes, against a real SMTP server and a real store.
const T0 = new Date('2026-11-25T12:00:00.000Z');
const SITE = { name: 'Atelier Nord', senderName: 'Atelier Nord website' };
const TEXT = 'I would like the newsletter.';
const EVIDENCE = { page: '/', text: TEXT, version: consentVersion(TEXT), client: '203.0.113.0/24' };

let smtp: FakeSmtpServer;
let refuse = false;
beforeAll(async () => {
  smtp = await startSmtpServer({ answer: () => (refuse ? { code: 550, message: 'no such user' } : 'accept') });
});
afterAll(() => smtp.close());

describe('the confirmation email', () => {
  const smtpConfig = { url: 'smtp://127.0.0.1:25', to: 'owner@example.com', from: 'Forms@Example.com' };
  const tokens = { confirm: 'c'.repeat(32), unsubscribe: 'u1234567'.repeat(4) };
  const mail = composeConfirmation('reader@example.org', tokens, { smtp: smtpConfig, site: SITE, publicUrl: 'https://www.example.com', now: T0 });

  test('goes to the reader alone, from the configured address under the sender name', () => {
    expect(mail.to).toBe('reader@example.org');
    expect(mail.envelope).toEqual({ from: 'Forms@Example.com', to: ['reader@example.org'] });
    expect(mail.from).toEqual({ name: 'Atelier Nord website', address: 'Forms@Example.com' });
    expect(mail.subject).toBe('Confirm your subscription to Atelier Nord');
  });

  test('holds the page link to confirm and the page to unsubscribe, and offers one-click unsubscribe', () => {
    expect(mail.text).toContain('\nhttps://www.example.com/newsletter/confirm/?token=cccccccccccccccccccccccccccccccc\n');
    expect(mail.text).toContain('https://www.example.com/newsletter/unsubscribe/?token=u1234567u1234567u1234567u1234567');
    expect(mail.text.startsWith('Someone, probably you, asked to receive the newsletter of Atelier Nord at this address.\n')).toBe(true);
    expect(mail.text.endsWith('\n')).toBe(true);
    expect(mail.headers).toEqual({
      'List-Unsubscribe': '<https://www.example.com/api/newsletter/unsubscribe?token=u1234567u1234567u1234567u1234567>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'Auto-Submitted': 'auto-generated',
    });
  });

  test('has a Message-ID of its own on the sender’s domain, lower-cased, and the time it was asked', () => {
    expect(mail.messageId).toBe(`<newsletter-confirm.${T0.getTime()}.u1234567@example.com>`);
    expect(mail.date).toEqual(T0);
  });

  test('a site name with a line break cannot add a header', () => {
    const hostile = composeConfirmation('reader@example.org', tokens, {
      smtp: smtpConfig,
      site: { name: 'Nord\r\nBcc: x@evil.test', senderName: 'Nord\nBcc: y@evil.test' },
      publicUrl: 'https://www.example.com',
      now: T0,
    });
    expect(hostile.subject).toBe('Confirm your subscription to Nord Bcc: x@evil.test');
    expect(hostile.from.name).toBe('Nord Bcc: y@evil.test');
  });
});

describe('the evidence of a signup', () => {
  const request = (referer?: string) => ({
    method: 'POST',
    url: 'https://www.example.com/api/newsletter',
    headers: new Headers(referer === undefined ? {} : { referer }),
  });

  test.each([
    ['the page of this site it was sent from', 'https://www.example.com/blog/post?utm=1', '/blog/post'],
    ['no page from another site', 'https://elsewhere.example/page', '/'],
    ['no page from a referer that is not an address', 'not a url', '/'],
    ['no page without a referer', undefined, '/'],
  ])('keeps %s', (_, referer, page) => {
    expect(evidenceOf(request(referer) as never, '203.0.113.77', TEXT)).toEqual({ page, text: TEXT, version: consentVersion(TEXT), client: '203.0.113.0/24' });
  });

  test('a page path is kept to 200 characters', () => {
    const long = `/${'a'.repeat(300)}`;
    expect(evidenceOf(request(`https://www.example.com${long}`) as never, '', TEXT).page).toBe(long.slice(0, 200));
  });
});

describe.each(testEngines())('asking for a confirmation on $name', (engine) => {
  test.skipIf(!engine.available)('sends once, not again within minutes, and says when the mail server refused it', async () => {
    const consents = createConsents((await engine.open()).store.sql);
    const smtpConfig = { url: smtp.url(), to: 'owner@example.com', from: 'forms@example.com' };
    const optIn = createOptIn({ consents, mailer: createSmtpMailer(smtpConfig), smtp: smtpConfig, site: SITE, publicUrl: 'https://www.example.com' });
    const before = smtp.received.length;

    await expect(optIn.ask('ada@example.org', EVIDENCE, T0)).resolves.toBe('sent');
    expect(smtp.received.length).toBe(before + 1);
    const sent = parseMail(smtp.received.at(-1)!.raw);
    expect(smtp.received.at(-1)!.to).toEqual(['ada@example.org']);
    expect(sent.header('list-unsubscribe-post')).toEqual(['List-Unsubscribe=One-Click']);
    await expect(consents.find('ada@example.org')).resolves.toMatchObject({ status: 'pending', page: '/' });

    // A second signup a minute later sends nothing: the first mail is on its way.
    await expect(optIn.ask('ada@example.org', EVIDENCE, new Date(T0.getTime() + 60_000))).resolves.toBe('not-sent');
    expect(smtp.received.length).toBe(before + 1);

    refuse = true;
    try {
      await expect(optIn.ask('grace@example.org', EVIDENCE, T0)).resolves.toBe('failed');
    } finally {
      refuse = false;
    }
    expect(smtp.received.length).toBe(before + 1);
  });
});
