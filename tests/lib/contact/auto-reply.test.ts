import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { autoReply } from '../../../packages/site-forms/src/lib/config/auto-reply.ts';
import { type AutoReplySettings, composeAutoReply, createAutoReply, pruneAutoReplies } from '../../../packages/site-forms/src/lib/contact/auto-reply.ts';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createSmtpMailer } from '../../../packages/site-forms/src/lib/mail/mailer.ts';
import type { SiteEvent } from '../../../packages/site-forms/src/lib/webhooks/events.ts';
import { parseMail } from '../../support/mime.ts';
import { type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';
import { TEST_DATABASE } from '../../support/stores.ts';

const site = { name: 'Atelier Nord', senderName: 'Atelier Nord forms' };
const settings: AutoReplySettings = {
  subject: 'Thanks from {site}',
  text: 'Hello {name},\n\nthank you for writing to {site}.',
  includeMessage: false,
  maxPerHour: 100,
};
const NOW = new Date('2026-06-01T12:00:00.000Z');
const HOUR = 3_600_000;
// sha256 of "ada@example.org": the address is kept only as the hash of its lower-case form.
const ADA_HASH = 'cfe00dde46ef942601ffafb9e2825e802858b460e586b8305b344c1eb826357d';

function received(data: Record<string, unknown>): SiteEvent {
  return { id: 'evt_1', type: 'contact.received', createdAt: NOW.toISOString(), data };
}

const ada = { id: 7, name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello,\nI would like to know more.', createdAt: NOW.toISOString() };

describe('the automatic reply, through a real SMTP server and a real SQLite store', () => {
  let dir: string;
  let db: Store;
  let smtp: FakeSmtpServer;
  let config: { url: string; to: string; from: string };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'site-forms-auto-reply-'));
    db = openStore({ ...TEST_DATABASE, url: undefined, dataDir: dir }, createLogger({ level: 'silent' }));
    await db.ready;
    smtp = await startSmtpServer();
    config = { url: smtp.url(), to: 'owner@example.com', from: 'site@Forms.Example.com' };
    // The messages the events stand for: 7 to 12 came with a solved proof, 20 was only confirmed on the no-JavaScript page.
    for (const id of [7, 8, 9, 10, 11, 12]) await seed(id, true);
    await seed(20, false);
  });

  async function seed(id: number, shownPerson: boolean) {
    await db.sql.run(
      `INSERT INTO submissions (id, created_at, name, email, message, status, shown_person) VALUES (?, ?, 'Ada', 'ada@example.org', 'Hello there', 'sent', ?)`,
      [id, NOW.toISOString(), shownPerson ? 1 : 0],
    );
  }
  afterEach(async () => {
    await smtp.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function reply(words: AutoReplySettings = settings) {
    return createAutoReply({ settings: words, smtp: config, mailer: createSmtpMailer(config), site, sql: db.sql });
  }

  async function recorded() {
    return db.sql.all<{ address_hash: string; last_sent_at: string }>('SELECT address_hash, last_sent_at FROM auto_replies ORDER BY last_sent_at');
  }

  test('answers the sender from the site, replies going to the owner, marked as automatic (RFC 3834)', async () => {
    await expect(reply()(received(ada), NOW)).resolves.toEqual({ kind: 'delivered', status: 250 });
    expect(smtp.received).toHaveLength(1);
    const [mail] = smtp.received;
    expect({ from: mail!.from, to: mail!.to }).toEqual({ from: 'site@forms.example.com', to: ['ada@example.org'] });
    const parsed = parseMail(mail!.raw);
    expect(parsed.header('from')).toEqual(['Atelier Nord forms <site@forms.example.com>']);
    expect(parsed.header('to')).toEqual(['ada@example.org']);
    expect(parsed.header('reply-to')).toEqual(['Atelier Nord forms <owner@example.com>']);
    expect(parsed.header('subject')).toEqual(['Thanks from Atelier Nord']);
    expect(parsed.header('message-id')).toEqual(['<auto-reply-7.1780315200000@forms.example.com>']);
    expect(parsed.header('auto-submitted')).toEqual(['auto-replied']);
    expect(parsed.header('x-auto-response-suppress')).toEqual(['All']);
    expect(parsed.header('date')).toEqual(['Mon, 01 Jun 2026 12:00:00 +0000']);
    expect(parsed.text).toBe('Hello Ada Lovelace,\n\nthank you for writing to Atelier Nord.\n');
  });

  test('with AUTO_REPLY=true and no words of the owner, the sender reads the default subject and text', async () => {
    const { config: read } = autoReply.read({ SMTP_URL: config.url, AUTO_REPLY: 'true' });
    await expect(reply(read.autoReply)(received(ada), NOW)).resolves.toEqual({ kind: 'delivered', status: 250 });
    const parsed = parseMail(smtp.received[0]!.raw);
    expect(parsed.header('subject')).toEqual(['We received your message']);
    expect(parsed.text).toBe(
      'Hello Ada Lovelace,\n\nthank you for writing to Atelier Nord. We have your message and will reply soon.\n\nThis is an automatic reply.\n',
    );
  });

  test('keeps the address only as the hash of its lower-case form, with the time it answered', async () => {
    await reply()(received({ ...ada, email: 'Ada@Example.ORG' }), NOW);
    await expect(recorded()).resolves.toEqual([{ address_hash: ADA_HASH, last_sent_at: '2026-06-01T12:00:00.000Z' }]);
  });

  test('answers an address once a day, however it is written: a second message the same day gets no second mail', async () => {
    const send = reply();
    await expect(send(received(ada), NOW)).resolves.toEqual({ kind: 'delivered', status: 250 });
    await expect(send(received({ ...ada, id: 8, email: 'ADA@example.org' }), new Date(NOW.getTime() + 23 * HOUR))).resolves.toEqual({
      kind: 'delivered',
      status: 208,
    });
    expect(smtp.received).toHaveLength(1);
    await expect(recorded()).resolves.toEqual([{ address_hash: ADA_HASH, last_sent_at: '2026-06-01T12:00:00.000Z' }]);
  });

  test('answers the same address again once a day has passed', async () => {
    const send = reply();
    await send(received(ada), NOW);
    const later = new Date(NOW.getTime() + 24 * HOUR);
    await expect(send(received({ ...ada, id: 9 }), later)).resolves.toEqual({ kind: 'delivered', status: 250 });
    expect(smtp.received.map((mail) => parseMail(mail.raw).header('message-id')[0])).toEqual([
      '<auto-reply-7.1780315200000@forms.example.com>',
      '<auto-reply-9.1780401600000@forms.example.com>',
    ]);
    await expect(recorded()).resolves.toEqual([{ address_hash: ADA_HASH, last_sent_at: '2026-06-02T12:00:00.000Z' }]);
  });

  test.each([
    ['no address at all', undefined],
    ['an empty address', ''],
    ['no local part', '@example.org'],
    ['no domain', 'ada@'],
    ['two addresses', 'eve@evil.test,ada@example.org'],
    ['an address and more after it', 'ada@example.org, eve@evil.test'],
    ['a name with the address', 'Ada <ada@example.org>'],
    ['a space in it', 'ada lovelace@example.org'],
    ['a line break and a header', 'ada@example.org\r\nBcc: eve@evil.test'],
  ])('writes to nobody when the address is %s, and remembers nothing', async (_, email) => {
    await expect(reply()(received({ ...ada, email }), NOW)).resolves.toEqual({ kind: 'delivered', status: 204 });
    expect(smtp.attempts()).toBe(0);
    await expect(recorded()).resolves.toEqual([]);
  });

  test.each([
    ['was only confirmed on the page for a browser without JavaScript (no proof)', 20],
    ['is gone (deleted before its reply was due)', 99],
  ])('writes to nobody whose message %s, and remembers nothing', async (_, id) => {
    await expect(reply()(received({ ...ada, id }), NOW)).resolves.toEqual({ kind: 'delivered', status: 403 });
    expect(smtp.attempts()).toBe(0);
    await expect(recorded()).resolves.toEqual([]);
  });

  test('answers at most maxPerHour addresses in a clock hour over the whole site; the next hour answers again', async () => {
    const send = reply({ ...settings, maxPerHour: 2 });
    const to = (id: number, at: Date) => send(received({ ...ada, id, email: `sender-${id}@example.org` }), at);
    await expect(to(7, NOW)).resolves.toEqual({ kind: 'delivered', status: 250 });
    await expect(to(8, new Date(NOW.getTime() + 10 * 60_000))).resolves.toEqual({ kind: 'delivered', status: 250 });
    await expect(to(9, new Date(NOW.getTime() + 59 * 60_000))).resolves.toEqual({ kind: 'delivered', status: 429 });
    // A capped reply is not remembered: that sender may be answered later the same day.
    expect((await recorded()).map((row) => row.last_sent_at)).toEqual(['2026-06-01T12:00:00.000Z', '2026-06-01T12:10:00.000Z']);
    await expect(to(10, new Date(NOW.getTime() + 60 * 60_000))).resolves.toEqual({ kind: 'delivered', status: 250 });
    expect(smtp.received.map((mail) => mail.to[0])).toEqual(['sender-7@example.org', 'sender-8@example.org', 'sender-10@example.org']);
  });

  test('an address already answered today does not use up the hour, and a failed send gives its place back', async () => {
    const send = reply({ ...settings, maxPerHour: 2 });
    await expect(send(received(ada), NOW)).resolves.toEqual({ kind: 'delivered', status: 250 });
    await expect(send(received({ ...ada, id: 8 }), NOW)).resolves.toEqual({ kind: 'delivered', status: 208 });
    smtp.answer(() => ({ code: 451, message: 'Greylisted, try later' }));
    await expect(send(received({ ...ada, id: 9, email: 'bea@example.org' }), NOW)).resolves.toMatchObject({ kind: 'retry' });
    smtp.answer(() => 'accept');
    await expect(send(received({ ...ada, id: 9, email: 'bea@example.org' }), NOW)).resolves.toEqual({ kind: 'delivered', status: 250 });
    await expect(send(received({ ...ada, id: 10, email: 'cy@example.org' }), NOW)).resolves.toEqual({ kind: 'delivered', status: 429 });
  });

  test('answers a one-letter address', async () => {
    await expect(reply()(received({ ...ada, email: 'a@b' }), NOW)).resolves.toEqual({ kind: 'delivered', status: 250 });
    expect(smtp.received.map((mail) => mail.to)).toEqual([['a@b']]);
  });

  test('a refusal of the mail server is tried again later, and the first answer of the day is not taken up', async () => {
    smtp.answer(() => ({ code: 451, message: 'Greylisted, try later' }));
    const send = reply();
    await expect(send(received(ada), NOW)).resolves.toEqual({
      kind: 'retry',
      status: null,
      error: 'the mail server did not take it (EMESSAGE 451: 451 Greylisted, try later)',
    });
    await expect(recorded()).resolves.toEqual([]);
    smtp.answer(() => 'accept');
    await expect(send(received(ada), new Date(NOW.getTime() + 60_000))).resolves.toEqual({ kind: 'delivered', status: 250 });
    expect(smtp.received).toHaveLength(1);
  });

  test('a refusal after an earlier day’s answer puts back the time of that answer', async () => {
    const send = reply();
    const twoDaysAgo = new Date(NOW.getTime() - 48 * HOUR);
    await send(received(ada), twoDaysAgo);
    smtp.answer(() => ({ code: 451, message: 'Greylisted, try later' }));
    await expect(send(received(ada), NOW)).resolves.toMatchObject({ kind: 'retry' });
    await expect(recorded()).resolves.toEqual([{ address_hash: ADA_HASH, last_sent_at: '2026-05-30T12:00:00.000Z' }]);
    smtp.answer(() => 'accept');
    await expect(send(received(ada), NOW)).resolves.toEqual({ kind: 'delivered', status: 250 });
    expect(smtp.received).toHaveLength(2);
  });

  test('forgets the answers older than the time given, and keeps the rest', async () => {
    const send = reply();
    await send(received(ada), new Date('2026-05-29T12:00:00.000Z'));
    await send(received({ ...ada, email: 'bob@example.net' }), new Date('2026-05-30T12:00:00.000Z'));
    await send(received({ ...ada, email: 'cy@example.com' }), new Date('2026-05-31T12:00:00.000Z'));
    await expect(pruneAutoReplies(db.sql, new Date('2026-05-30T12:00:00.000Z'))).resolves.toBe(1);
    expect((await recorded()).map((row) => row.last_sent_at)).toEqual(['2026-05-30T12:00:00.000Z', '2026-05-31T12:00:00.000Z']);
    await expect(pruneAutoReplies(db.sql, new Date('2026-05-30T12:00:00.000Z'))).resolves.toBe(0);
  });

  test('forgets the counts of the hours before the time given, and keeps that hour and the later ones', async () => {
    const send = reply();
    await send(received(ada), new Date('2026-05-30T11:59:00.000Z'));
    await send(received({ ...ada, email: 'bob@example.net' }), new Date('2026-05-30T12:30:00.000Z'));
    await send(received({ ...ada, email: 'cy@example.com' }), new Date('2026-05-30T13:00:00.000Z'));
    await pruneAutoReplies(db.sql, new Date('2026-05-30T12:15:00.000Z'));
    const hours = await db.sql.all<{ hour: string }>('SELECT hour FROM auto_reply_hours ORDER BY hour');
    expect(hours.map((row) => row.hour)).toEqual(['2026-05-30T12', '2026-05-30T13']);
  });
});

describe('the words of the automatic reply', () => {
  const smtp = { url: 'smtp://127.0.0.1:25', to: 'owner@example.com', from: 'site@Forms.Example.com' };

  test('fills in the site and the sender everywhere they appear, and ends the text with a line break', () => {
    const email = composeAutoReply(ada, { subject: '{site}: {name}, {name}', text: '{name} / {site} / {site}', includeMessage: false }, smtp, site, NOW);
    expect(email).toEqual({
      from: { name: 'Atelier Nord forms', address: 'site@Forms.Example.com' },
      to: 'ada@example.org',
      replyTo: { name: 'Atelier Nord forms', address: 'owner@example.com' },
      subject: 'Atelier Nord: Ada Lovelace, Ada Lovelace',
      text: 'Ada Lovelace / Atelier Nord / Atelier Nord\n',
      messageId: '<auto-reply-7.1780315200000@forms.example.com>',
      date: NOW,
      envelope: { from: 'site@Forms.Example.com', to: ['ada@example.org'] },
      headers: { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All' },
    });
  });

  test.each([
    ['no name', undefined],
    ['an empty name', ''],
    ['a name of control characters only', '\r\n\t'],
  ])('calls a sender with %s "there"', (_, name) => {
    const email = composeAutoReply({ ...ada, name }, settings, smtp, site, NOW);
    expect(email.text).toBe('Hello there,\n\nthank you for writing to Atelier Nord.\n');
  });

  test('keeps line breaks typed in the name out of the subject', () => {
    const email = composeAutoReply({ ...ada, name: 'Eve\r\nBcc: victim@evil.test' }, { ...settings, subject: 'For {name}' }, smtp, site, NOW);
    expect(email.subject).toBe('For Eve Bcc: victim@evil[.]test');
  });

  test('quotes the message under a signature line when the owner asks for it', () => {
    const email = composeAutoReply(ada, { ...settings, includeMessage: true }, smtp, site, NOW);
    expect(email.text).toBe('Hello Ada Lovelace,\n\nthank you for writing to Atelier Nord.\n\n-- \nYour message:\n\nHello,\nI would like to know more.\n');
  });

  test('quotes the message without a live link: schemes and the dots of domains are broken', () => {
    const message = 'Claim at https://WIN-BIG.COM/prize, www.win-big.com or prizes@win-big.com (version 3.5, e.g. today).';
    const email = composeAutoReply({ ...ada, message }, { ...settings, includeMessage: true }, smtp, site, NOW);
    expect(email.text).toBe(
      'Hello Ada Lovelace,\n\nthank you for writing to Atelier Nord.\n\n-- \nYour message:\n\n' +
        'Claim at https[:]//WIN-BIG[.]COM/prize, www[.]win-big[.]com or prizes@win-big[.]com (version 3.5, e[.]g. today).\n',
    );
  });

  test('a link at the very start of the message, and a host name with a digit before its dot, are broken too', () => {
    const message = 'https://win-big.com or host1.example';
    const email = composeAutoReply({ ...ada, message }, { ...settings, includeMessage: true }, smtp, site, NOW);
    expect(email.text).toBe(
      'Hello Ada Lovelace,\n\nthank you for writing to Atelier Nord.\n\n-- \nYour message:\n\nhttps[:]//win-big[.]com or host1[.]example\n',
    );
  });

  test('a name holding a domain is greeted without a live link', () => {
    const email = composeAutoReply({ ...ada, name: 'Prize Desk WIN-BIG.COM' }, { ...settings, subject: 'For {name}' }, smtp, site, NOW);
    expect(email.subject).toBe('For Prize Desk WIN-BIG[.]COM');
    expect(email.text).toBe('Hello Prize Desk WIN-BIG[.]COM,\n\nthank you for writing to Atelier Nord.\n');
  });

  test('quotes nothing when the message is empty, even when asked to', () => {
    const email = composeAutoReply({ ...ada, message: '' }, { ...settings, includeMessage: true }, smtp, site, NOW);
    expect(email.text).toBe('Hello Ada Lovelace,\n\nthank you for writing to Atelier Nord.\n');
  });

  test('a message without an id still has a Message-ID, numbered 0', () => {
    const { id: _, ...withoutId } = ada;
    expect(composeAutoReply(withoutId, settings, smtp, site, NOW).messageId).toBe('<auto-reply-0.1780315200000@forms.example.com>');
  });
});
