import { describe, expect, test } from 'vitest';
import { composeContactEmail, contactMessageId } from '../../../packages/site-forms/src/lib/contact/message.ts';
import { encodedWords, headerText, literalInHeader } from '../../../packages/site-forms/src/lib/mail/email.ts';

const smtp = { url: 'smtp://127.0.0.1:25', to: 'owner@example.com', from: 'site@Forms.Example.com' };
const site = { name: 'Atelier Nord', senderName: 'Atelier Nord forms', adminOrigin: undefined };
const submission = {
  id: 42,
  createdAt: '2026-05-04T10:20:30.456Z',
  name: 'Ada Lovelace',
  email: 'ada@example.org',
  message: 'Hello,\nI would like to know more.',
};

describe('the email of a contact message', () => {
  test("goes from CONTACT_FROM under the site's sender name to CONTACT_TO, answers to the visitor, and names the site and them in the subject", () => {
    expect(composeContactEmail(submission, smtp, site)).toEqual({
      from: { name: 'Atelier Nord forms', address: 'site@Forms.Example.com' },
      to: 'owner@example.com',
      replyTo: { name: 'Ada Lovelace', address: 'ada@example.org' },
      subject: '[Atelier Nord] New message from Ada Lovelace',
      text: 'Hello,\nI would like to know more.\n\n-- \nFrom: Ada Lovelace <ada@example.org>\nSent: 4 May 2026 at 10:20 UTC (contact message #42 on Atelier Nord)\n',
      messageId: '<contact-42.1777890030456@forms.example.com>',
      date: new Date('2026-05-04T10:20:30.456Z'),
      envelope: { from: 'site@Forms.Example.com', to: ['owner@example.com'] },
    });
  });

  test.each([
    ['UTC', '4 May 2026 at 10:20 UTC'],
    ['Europe/Vienna', '4 May 2026 at 12:20 CEST'],
    ['America/New_York', '4 May 2026 at 06:20 GMT-4'],
  ])('says when it was sent in the site’s time zone (%s), in words, not as ISO 8601', (timeZone, at) => {
    expect(composeContactEmail(submission, smtp, { ...site, timeZone }).text).toContain(`\nSent: ${at} (contact message #42 on Atelier Nord)\n`);
  });

  test('has the same Message-ID on every attempt, and a different one for another submission', () => {
    expect(composeContactEmail(submission, smtp, site).messageId).toBe(composeContactEmail({ ...submission }, smtp, site).messageId);
    expect(contactMessageId({ id: 43, createdAt: submission.createdAt }, smtp)).not.toBe(contactMessageId(submission, smtp));
    // A database restored from scratch reuses ids; the time keeps the two messages apart.
    expect(contactMessageId({ id: 42, createdAt: '2027-01-01T00:00:00.000Z' }, smtp)).not.toBe(contactMessageId(submission, smtp));
  });

  test('goes to the recipients it is given (people/recipients.ts): the header lists them, the envelope names each', () => {
    const email = composeContactEmail(submission, smtp, site, undefined, ['eddie@example.org', 'owner@example.com']);
    expect(email.to).toEqual(['eddie@example.org', 'owner@example.com']);
    expect(email.envelope).toEqual({ from: 'site@Forms.Example.com', to: ['eddie@example.org', 'owner@example.com'] });
    // One recipient: the very mail of before, to a single address.
    expect(composeContactEmail(submission, smtp, site, undefined, ['owner@example.com'])).toEqual(composeContactEmail(submission, smtp, site));
  });

  test('keeps its Message-ID on every try whoever it goes to, so a choice changed between two tries sends the same message', () => {
    const first = composeContactEmail(submission, smtp, site, undefined, ['owner@example.com']);
    const again = composeContactEmail(submission, smtp, site, undefined, ['eddie@example.org', 'rita@example.org']);
    expect(again.messageId).toBe(first.messageId);
    expect(again.date).toEqual(first.date);
  });

  test.each([
    ['CR LF and a Bcc header', 'Eve\r\nBcc: victim@evil.test', 'Eve Bcc: victim@evil.test'],
    ['a bare LF', 'Eve\nX-Injected: yes', 'Eve X-Injected: yes'],
    ['a bare CR', 'Eve\rCc: x@evil.test', 'Eve Cc: x@evil.test'],
    ['NUL, NEL and a line separator', 'Eve\u0000\u0085\u2028Mallory', 'Eve Mallory'],
    ['a right-to-left override', 'Eve\u202egnp.exe', 'Eve gnp.exe'],
    ['tabs and runs of spaces', '\tAda \t  Lovelace  ', 'Ada Lovelace'],
  ])('keeps %s out of every header', (_, name, cleaned) => {
    const email = composeContactEmail({ ...submission, name }, smtp, site);
    expect(email.subject).toBe(`[Atelier Nord] New message from ${cleaned}`);
    expect(email.replyTo).toEqual({ name: cleaned, address: 'ada@example.org' });
    expect(email.envelope.to).toEqual(['owner@example.com']);
    expect(email.to).toBe('owner@example.com');
    expect(`${email.subject}${email.replyTo?.name}`).not.toMatch(/[\r\n\u0000\u0085\u2028\u202e]/u);
  });

  test.each([
    ['Zoë Ünïcödé 😀', 'Zoë Ünïcödé 😀'],
    ['李小龍', '李小龍'],
    ['"Mallory, <mallory@evil.test>"', '"Mallory, <mallory@evil.test>"'],
  ])('keeps the name %j as typed (nodemailer quotes and encodes it)', (name, expected) => {
    expect(composeContactEmail({ ...submission, name }, smtp, site)).toMatchObject({
      subject: `[Atelier Nord] New message from ${expected}`,
      replyTo: { name: expected },
    });
  });

  test.each([
    ['a line break', 'ada@example.org\r\nBcc: victim@evil.test'],
    ['a second address', 'ada@example.org, victim@evil.test'],
    ['angle brackets', 'Ada <ada@example.org>'],
  ])('leaves Reply-To out when the stored address holds %s', (_, address) => {
    const email = composeContactEmail({ ...submission, email: address }, smtp, site);
    expect(email.replyTo).toBeUndefined();
    expect(email.text).not.toMatch(/\r|\nBcc/);
  });

  test('a name that looks like an encoded word is encoded by us in the subject, and left out of Reply-To', () => {
    const email = composeContactEmail({ ...submission, name: '=?UTF-8?Q?Eve=0D=0ABcc:_x@y.z?=' }, smtp, site);
    expect(email.subject).toBe('[Atelier Nord] New message from =?UTF-8?B?PT9VVEYtOD9RP0V2ZT0wRD0wQUJjYzpfeEB5Lno/PQ==?=');
    expect(email.replyTo).toEqual({ name: '', address: 'ada@example.org' });
    expect(email.text).toContain('From: =?UTF-8?Q?Eve=0D=0ABcc:_x@y.z?= <ada@example.org>');
  });

  test('leaves Reply-To out when the stored address holds =?', () => {
    const email = composeContactEmail({ ...submission, email: '=?utf-8?q?x?=@example.org' }, smtp, site);
    expect(email.replyTo).toBeUndefined();
    expect(email.text).toContain('From: Ada Lovelace <=?utf-8?q?x?=@example.org>');
  });

  test('names an empty (cleaned) name rather than leaving the subject dangling', () => {
    expect(composeContactEmail({ ...submission, name: '\r\n' }, smtp, site).subject).toBe('[Atelier Nord] New message from an unnamed visitor');
  });

  test.each([
    ['the admin at PUBLIC_URL', 'https://www.example.com', 'Read it in your inbox: https://www.example.com/admin/messages/42\n'],
    ['the admin without PUBLIC_URL', '', 'Read it in your inbox: /admin/messages/42\n'],
  ])('ends with where the owner reads it: %s', (_, adminOrigin, line) => {
    const text = composeContactEmail(submission, smtp, { ...site, adminOrigin }).text;
    expect(text.endsWith(`(contact message #42 on Atelier Nord)\n${line}`)).toBe(true);
  });
});

describe('the fields of a message beyond name, email and message', () => {
  test('follow the message, each on its own line, one holding line breaks under its name', () => {
    const email = composeContactEmail({ ...submission, fields: { phone: '+49 30 1234', callback: true, notes: 'First line\nsecond line' } }, smtp, site);
    expect(email.text).toBe(
      'Hello,\nI would like to know more.\n\nphone: +49 30 1234\ncallback: Yes\nnotes:\nFirst line\nsecond line\n\n-- \nFrom: Ada Lovelace <ada@example.org>\nSent: 4 May 2026 at 10:20 UTC (contact message #42 on Atelier Nord)\n',
    );
  });

  test('of a form since removed from the site are still all listed, and the mail goes to CONTACT_TO', () => {
    const email = composeContactEmail({ ...submission, form: 'quote', fields: { budget: '5000' } }, smtp, site);
    expect(email).toMatchObject({
      to: 'owner@example.com',
      subject: '[Atelier Nord] New message from Ada Lovelace',
      text: 'Hello,\nI would like to know more.\n\nbudget: 5000\n\n-- \nFrom: Ada Lovelace <ada@example.org>\nSent: 4 May 2026 at 10:20 UTC (contact message #42 on Atelier Nord)\n',
    });
  });

  test('none at all leave the message as it is', () => {
    expect(composeContactEmail({ ...submission, fields: {} }, smtp, site).text.startsWith('Hello,\nI would like to know more.\n\n-- \n')).toBe(true);
  });
});

describe('headerText', () => {
  test.each([
    ['plain', 'plain'],
    ['a\r\nb', 'a b'],
    ['\u0007bell', 'bell'],
    ['x\u2066y\u2069z', 'x y z'],
  ])('%j becomes %j', (input, output) => {
    expect(headerText(input)).toBe(output);
  });
});

describe('text in a header that a mail program must not decode', () => {
  test.each([
    ['plain text stays as it is', 'Ada Lovelace', 'Ada Lovelace'],
    ['Unicode stays as it is (nodemailer encodes it)', 'Zoë 😀', 'Zoë 😀'],
    ['a question mark and an equals sign apart stay as they are', 'a? b= c', 'a? b= c'],
    ['text holding =? becomes encoded words', '=?x?=', '=?UTF-8?B?PT94Pz0=?='],
    ['a lone =?', '=?', '=?UTF-8?B?PT8=?='],
  ])('%s', (_, text, expected) => {
    expect(literalInHeader(text)).toBe(expected);
  });

  test.each([
    ['45 bytes fit one word', 'a'.repeat(45), [`=?UTF-8?B?${'YWFh'.repeat(15)}?=`]],
    ['46 bytes need two', 'a'.repeat(46), [`=?UTF-8?B?${'YWFh'.repeat(15)}?=`, '=?UTF-8?B?YQ==?=']],
    ['a character is never cut in two', `${'a'.repeat(43)}😀`, [`=?UTF-8?B?${'YWFh'.repeat(14)}YQ==?=`, '=?UTF-8?B?8J+YgA==?=']],
  ])('encoded words: %s, each within 75 characters', (_, text, words) => {
    const encoded = encodedWords(text);
    expect(encoded.split(' ')).toEqual(words);
    for (const word of encoded.split(' ')) expect(word.length).toBeLessThanOrEqual(75);
  });
});
