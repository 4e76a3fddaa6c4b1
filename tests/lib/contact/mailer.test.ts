import { afterEach, describe, expect, test, vi } from 'vitest';
import { classifySmtpError, createSmtpMailer, type SendResult } from '../../../packages/site-forms/src/lib/mail/mailer.ts';
import { composeContactEmail } from '../../../packages/site-forms/src/lib/contact/message.ts';

const SITE = { name: 'Atelier Nord', senderName: 'Atelier Nord', adminOrigin: undefined };
import { parseMail } from '../../support/mime.ts';
import { parseWithPython } from '../../support/python-mail.ts';
import { type FakeSmtpServer, freePort, startSilentServer, startSmtpServer } from '../../support/smtp.ts';

const submission = {
  id: 7,
  createdAt: '2026-05-04T10:20:30.456Z',
  name: 'Ada Lovelace',
  email: 'ada@example.org',
  message: 'Hello, I would like to know more.',
};
const addresses = { to: 'owner@example.com', from: 'site@example.com' };

describe('classifying SMTP failures', () => {
  const err = (fields: Record<string, unknown>) => Object.assign(new Error(String(fields.message ?? 'failed')), fields);
  test.each([
    ['connection refused', err({ code: 'ESOCKET', originalCode: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:2525' }), false],
    ['connection reset', err({ code: 'ECONNECTION', message: 'Connection closed unexpectedly' }), false],
    ['a greeting timeout', err({ code: 'ETIMEDOUT', timeoutType: 'GREETING_TIMEOUT', message: 'Greeting never received' }), false],
    ['a DNS failure', err({ code: 'EDNS', message: 'getaddrinfo ENOTFOUND smtp.example.com' }), false],
    ['421 service not available', err({ code: 'EENVELOPE', responseCode: 421, response: '421 Try again later' }), false],
    ['451 greylisted', err({ code: 'EMESSAGE', responseCode: 451, response: '451 4.7.1 Greylisted' }), false],
    ['454 temporary authentication failure', err({ code: 'EAUTH', responseCode: 454, response: '454 4.7.0 Temporary authentication failure' }), false],
    ['503 bad sequence of commands', err({ code: 'EPROTOCOL', responseCode: 503, response: '503 Bad sequence' }), false],
    ['an error nobody expected', new Error('something odd'), false],
    ['a thrown string', 'odd', false],
    ['550 mailbox unavailable', err({ code: 'EENVELOPE', responseCode: 550, response: '550 5.1.1 No such user' }), true],
    ['554 rejected as spam', err({ code: 'EMESSAGE', responseCode: 554, response: '554 5.7.1 Spam' }), true],
    ['535 bad credentials', err({ code: 'EAUTH', responseCode: 535, response: '535 5.7.8 Authentication failed' }), true],
    ['authentication refused without a reply code', err({ code: 'EAUTH', message: 'No supported authentication method' }), true],
    ['credentials missing', err({ code: 'ENOAUTH', message: 'Missing credentials for "PLAIN"' }), true],
  ])('%s is %s permanent', (_, error, permanent) => {
    const result = classifySmtpError(error);
    expect(result.permanent).toBe(permanent);
    expect(result.reason).not.toBe('');
  });

  test('the reason names the code, the reply code and the server reply on one line', () => {
    expect(classifySmtpError(err({ code: 'EENVELOPE', responseCode: 550, response: '550 5.1.1 No such user\r\n' })).reason).toBe(
      'EENVELOPE 550: 550 5.1.1 No such user',
    );
    expect(classifySmtpError(err({ code: 'ETIMEDOUT', timeoutType: 'GREETING_TIMEOUT', message: 'Greeting never received' })).reason).toBe(
      'ETIMEDOUT (GREETING_TIMEOUT): Greeting never received',
    );
  });
});

describe('the SMTP mailer against a real SMTP server on 127.0.0.1', () => {
  let smtp: FakeSmtpServer | undefined;
  afterEach(async () => {
    await smtp?.close();
    smtp = undefined;
  });

  test('delivers To, From, Reply-To, subject, body and Message-ID as composed', async () => {
    smtp = await startSmtpServer();
    const config = { url: smtp.url(), ...addresses };
    await expect(createSmtpMailer(config).send(composeContactEmail(submission, config, SITE))).resolves.toEqual({ ok: true });
    expect(smtp.received).toHaveLength(1);
    const [mail] = smtp.received;
    expect(mail).toMatchObject({ from: 'site@example.com', to: ['owner@example.com'] });
    const parsed = parseMail(mail!.raw);
    expect(parsed.header('from')).toEqual(['Atelier Nord <site@example.com>']);
    expect(parsed.header('to')).toEqual(['owner@example.com']);
    expect(parsed.header('reply-to')).toEqual(['Ada Lovelace <ada@example.org>']);
    expect(parsed.header('subject')).toEqual(['[Atelier Nord] New message from Ada Lovelace']);
    expect(parsed.header('message-id')).toEqual(['<contact-7.1777890030456@example.com>']);
    expect(parsed.text).toContain('Hello, I would like to know more.\n\n-- \nFrom: Ada Lovelace <ada@example.org>\nSent: 4 May 2026 at 10:20 UTC');
  });

  test('logs in with the user and password of SMTP_URL', async () => {
    const credentials = { user: 'site@example.com', pass: 'p@ss:w/rd' };
    smtp = await startSmtpServer({ credentials });
    const config = { url: smtp.url(credentials), ...addresses };
    await expect(createSmtpMailer(config).send(composeContactEmail(submission, config, SITE))).resolves.toEqual({ ok: true });
    expect(smtp.received[0]?.user).toBe('site@example.com');
  });

  // The HTTP form refuses control characters in a name; these rows are what a bug or a
  // hand-edited database could still hold, and the raw message shows none of it escapes.
  test.each([
    ['Eve\r\nBcc: victim@evil.test'],
    ['Eve\nTo: victim@evil.test\r\n\r\nInjected body'],
    ['Eve\rCc: victim@evil.test'],
    ['victim@evil.test, other@evil.test'],
    ['"Eve" <victim@evil.test>'],
  ])('a name of %j adds no header and no recipient to the raw message', async (name) => {
    smtp = await startSmtpServer();
    const config = { url: smtp.url(), ...addresses };
    await expect(createSmtpMailer(config).send(composeContactEmail({ ...submission, name }, config, SITE))).resolves.toEqual({ ok: true });
    const [mail] = smtp.received;
    expect(mail!.to).toEqual(['owner@example.com']);
    const parsed = parseMail(mail!.raw);
    const names = parsed.headers.map((h) => h.name);
    expect(names.filter((n) => ['to', 'cc', 'bcc', 'from', 'reply-to', 'subject'].includes(n)).sort()).toEqual(['from', 'reply-to', 'subject', 'to']);
    expect(parsed.header('to')).toEqual(['owner@example.com']);
    expect(names).not.toContain('x-injected');
    // Reply-To still holds one address, the visitor's, whatever the name looked like.
    expect(parsed.header('reply-to')[0]).toMatch(/<ada@example\.org>$/);
    expect(parsed.header('reply-to')[0]!.match(/@/g)?.length ?? 0).toBe(1 + (name.match(/@/g)?.length ?? 0));
    expect(parsed.header('subject')[0]).not.toMatch(/[\r\n]/);
    expect(parsed.text.startsWith('Hello, I would like to know more.')).toBe(true);
  });

  // What a mail program shows, read by a real parser (Python's email package): the name
  // exactly as typed, never decoded a second time into headers of its own.
  test.each([
    ['an encoded word that decodes to CR LF Bcc', '=?UTF-8?Q?Eve=0D=0ABcc:_x@y.z?='],
    ['a base64 encoded word', '=?utf-8?b?RXZlDQpCY2M6IHhAeS56?='],
    ['an encoded word between words', 'Eve =?UTF-8?Q?=0D=0ABcc:_x@y.z?= Smith'],
    ['two encoded words and Unicode', 'Zoë =?UTF-8?Q?a?= =?UTF-8?Q?b?= 😀'],
    ['a lone =?', 'a =? b ?= c'],
    ['an apostrophe and a comma', "O'Brien, Ada"],
    // Short enough for one encoded word: Python's address parser keeps the blank between two
    // adjacent encoded words in a display name, which RFC 2047 and mail programs drop.
    ['Unicode', 'Zoë 😀 李小龍'],
  ])('a name with %s reaches the owner literally in every header', async (_, name) => {
    smtp = await startSmtpServer();
    const config = { url: smtp.url(), ...addresses };
    await expect(createSmtpMailer(config).send(composeContactEmail({ ...submission, name }, config, SITE))).resolves.toEqual({ ok: true });
    const mail = parseWithPython(smtp.received[0]!.raw);

    expect(mail.subject).toBe(`[Atelier Nord] New message from ${name}`);
    expect(mail.names).toEqual(['From', 'To', 'Reply-To', 'Subject', 'Message-ID', 'Date', 'Content-Transfer-Encoding', 'MIME-Version', 'Content-Type']);
    expect(mail.replyTo).toEqual([{ name: name.includes('=?') ? '' : name, address: 'ada@example.org' }]);
    expect(mail.defects).toEqual([]);
  });

  test('a Unicode name arrives encoded and reads back as typed', async () => {
    smtp = await startSmtpServer();
    const config = { url: smtp.url(), ...addresses };
    const name = 'Zoë Ünïcödé 😀 李小龍';
    await expect(createSmtpMailer(config).send(composeContactEmail({ ...submission, name }, config, SITE))).resolves.toEqual({ ok: true });
    const raw = smtp.received[0]!.raw;
    const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
    expect(head).toMatch(/^[\x20-\x7e\r\n\t]*$/);
    const parsed = parseMail(raw);
    expect(parsed.header('subject')).toEqual([`[Atelier Nord] New message from ${name}`]);
    expect(parsed.header('reply-to')).toEqual([`${name} <ada@example.org>`]);
    expect(parsed.text).toContain(`From: ${name} <ada@example.org>`);
  });

  test.each([
    [421, false],
    [451, false],
    [550, true],
    [554, true],
  ])('a %i reply is refused with permanent %s', async (code, permanent) => {
    smtp = await startSmtpServer({ answer: () => ({ code, message: `Reply ${code}` }) });
    const config = { url: smtp.url(), ...addresses };
    await expect(createSmtpMailer(config).send(composeContactEmail(submission, config, SITE))).resolves.toEqual({
      ok: false,
      permanent,
      reason: expect.stringContaining(`${code}`),
    });
  });

  test('a wrong password is permanent', async () => {
    smtp = await startSmtpServer({ credentials: { user: 'site', pass: 'right' } });
    const config = { url: smtp.url({ user: 'site', pass: 'wrong' }), ...addresses };
    await expect(createSmtpMailer(config).send(composeContactEmail(submission, config, SITE))).resolves.toEqual({
      ok: false,
      permanent: true,
      reason: expect.stringMatching(/^EAUTH 535/),
    });
    expect(smtp.received).toEqual([]);
  });

  test('nobody listening is transient', async () => {
    const config = { url: `smtp://127.0.0.1:${await freePort()}`, ...addresses };
    await expect(createSmtpMailer(config).send(composeContactEmail(submission, config, SITE))).resolves.toEqual({
      ok: false,
      permanent: false,
      reason: expect.stringContaining('ECONNREFUSED'),
    });
  });

  test('by default a server that never greets is given 5 s: still waiting at 4 999 ms, a transient failure at 5 000 ms', async () => {
    const silent = await startSilentServer();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const config = { url: `smtp://127.0.0.1:${silent.port}`, ...addresses };
      let result: SendResult | undefined;
      void createSmtpMailer(config)
        .send(composeContactEmail(submission, config, SITE))
        .then((answer) => {
          result = answer;
        });
      // The connection is real: wait for it on the event loop, the fake clock standing still.
      for (let turn = 0; silent.connections() === 0 || turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
      await vi.advanceTimersByTimeAsync(4_999);
      expect(result).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      for (let turn = 0; result === undefined && turn < 1_000; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(result).toEqual({ ok: false, permanent: false, reason: expect.stringContaining('ETIMEDOUT') });
    } finally {
      vi.useRealTimers();
      await silent.close();
    }
  });
});
