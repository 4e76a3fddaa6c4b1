import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { composeContactEmail } from '../../../packages/site-forms/src/lib/contact/message.ts';
import { type ContactEmail, encodedWords } from '../../../packages/site-forms/src/lib/mail/email.ts';
import { classifySmtpError, createSmtpMailer } from '../../../packages/site-forms/src/lib/mail/mailer.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { makeCertificates, opensslAvailable, type TestCertificates } from '../../support/certificates.ts';
import { type FakeHttpServer, startFakeHttpServer } from '../../support/fake-http.ts';
import { type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';

const SITE = { name: 'Atelier Nord', senderName: 'Atelier Nord', adminOrigin: undefined };
const submission = { id: 7, createdAt: '2026-05-04T10:20:30.456Z', name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello.' };
const addresses = { to: 'owner@example.com', from: 'site@example.com' };

let smtp: FakeSmtpServer | undefined;
let http: FakeHttpServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await smtp?.close();
  await http?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  smtp = undefined;
  http = undefined;
  dir = undefined;
});

/** The result of one message sent to a real SMTP server that answers DATA with `code` and `message`. */
async function refusedWith(code: number, message: string) {
  smtp = await startSmtpServer({ answer: () => ({ code, message }) });
  const config = { url: smtp.url(), ...addresses };
  return createSmtpMailer(config).send(composeContactEmail(submission, config, SITE));
}

describe('a reply code decides whether a refusal may pass: 4xx retries, 5xx (but 503) is final, anything else by the error code', () => {
  test.each([
    [399, false],
    [400, false],
    [450, false],
    [499, false],
    [500, true],
    [503, false],
    [550, true],
    [599, true],
    [600, false],
  ])('the real server answering DATA with %i: permanent %s', async (code, permanent) => {
    await expect(refusedWith(code, 'Refused here')).resolves.toEqual({ ok: false, permanent, reason: `EMESSAGE ${code}: ${code} Refused here` });
  });

  // Refused credentials are final by their error code, unless the reply code says "try later".
  const auth = (responseCode?: number) => Object.assign(new Error('Invalid login'), { code: 'EAUTH', response: 'Invalid login', responseCode });
  test.each([
    [undefined, true, 'EAUTH: Invalid login'],
    [399, true, 'EAUTH 399: Invalid login'],
    [400, false, 'EAUTH 400: Invalid login'],
    [499, false, 'EAUTH 499: Invalid login'],
    [500, true, 'EAUTH 500: Invalid login'],
    [600, true, 'EAUTH 600: Invalid login'],
  ])('refused credentials with reply code %s: permanent %s', (responseCode, permanent, reason) => {
    expect(classifySmtpError(auth(responseCode))).toEqual({ permanent, reason });
  });
});

describe("the reason holds the server's reply on one line, at most 500 characters", () => {
  test('a reply of several lines with runs of blanks becomes one line with single spaces', async () => {
    await expect(refusedWith(550, 'first line\nsecond   line')).resolves.toEqual({
      ok: false,
      permanent: true,
      reason: 'EMESSAGE 550: 550 first line second line',
    });
  });

  test('a very long reply is cut at 500 characters', async () => {
    const result = await refusedWith(550, 'y'.repeat(700));
    expect(result).toEqual({ ok: false, permanent: true, reason: `EMESSAGE 550: 550 ${'y'.repeat(482)}` });
    expect((result as { reason: string }).reason).toHaveLength(500);
  });

  test('an error with no code at all is its bare message', () => {
    expect(classifySmtpError(new Error('something odd'))).toEqual({ permanent: false, reason: 'something odd' });
  });

  test('a thrown string is the reason itself', () => {
    expect(classifySmtpError('odd')).toEqual({ permanent: false, reason: 'odd' });
  });

  // What a library or a plugin could throw: fields of another type than nodemailer's are not read as its.
  test.each([
    ['a numeric error code', { code: 535, message: 'bad' }, { permanent: false, reason: 'bad' }],
    ['a reply code given as text', { code: 'EMESSAGE', responseCode: '550', message: 'bad' }, { permanent: false, reason: 'EMESSAGE: bad' }],
    ['a message that is not text', { code: 'ECONNECTION', message: 42 }, { permanent: false, reason: 'ECONNECTION: [object Object]' }],
    ['a list as the TLS code', { code: 'ESOCKET', originalCode: ['CERT_HAS_EXPIRED'], message: 'bad' }, { permanent: false, reason: 'ESOCKET: bad' }],
  ])('%s is left out', (_, error, expected) => {
    expect(classifySmtpError(error)).toEqual(expected);
  });
});

describe('a certificate refusal names the host only when it is about the name and both names are known', () => {
  const tlsError = (originalCode: string, message: string, more: Record<string, unknown>) =>
    Object.assign(new Error(message), { code: 'ESOCKET', originalCode, ...more });
  const cert = { subjectaltname: 'DNS:mail.example.com' };
  test.each([
    [
      'an untrusted certificate, even with the host and the certificate at hand',
      tlsError('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate', { host: '127.0.0.1', cert }),
      "ESOCKET DEPTH_ZERO_SELF_SIGNED_CERT: the mail server's TLS certificate is self-signed (self-signed certificate); set SMTP_TLS_CA_FILE to its CA's certificate",
    ],
    [
      'a wrong name with the host but not the certificate',
      tlsError('HOSTNAME_MISMATCH', 'Hostname/IP does not match', { host: 'smtp.example.net' }),
      "ESOCKET HOSTNAME_MISMATCH: the mail server's TLS certificate is for another host name (Hostname/IP does not match); use in SMTP_URL the host name on the certificate",
    ],
    [
      'a wrong name with the certificate but not the host',
      tlsError('HOSTNAME_MISMATCH', 'Hostname/IP does not match', { cert }),
      "ESOCKET HOSTNAME_MISMATCH: the mail server's TLS certificate is for another host name (Hostname/IP does not match); use in SMTP_URL the host name on the certificate",
    ],
    [
      'a wrong name with both',
      tlsError('HOSTNAME_MISMATCH', 'Hostname/IP does not match', { host: 'smtp.example.net', cert }),
      "ESOCKET HOSTNAME_MISMATCH: the mail server's TLS certificate is for DNS:mail.example.com, not smtp.example.net; use in SMTP_URL the host name on the certificate",
    ],
  ])('%s', (_, error, reason) => {
    expect(classifySmtpError(error)).toMatchObject({ permanent: true, reason });
  });
});

describe('recipients the server refuses while it takes others', () => {
  test('the message is sent to the others, and the refusal is logged once as a count, never an address', async () => {
    const logs: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line)) });
    smtp = await startSmtpServer({ refuseRecipient: (address) => address === 'gone@example.com' });
    const config = { url: smtp.url(), ...addresses };
    const email = composeContactEmail(submission, config, SITE, undefined, ['owner@example.com', 'gone@example.com', 'editor@example.com']);
    await expect(createSmtpMailer(config, { logger }).send(email)).resolves.toEqual({ ok: true });
    expect(smtp.received.map((mail) => [...mail.to].sort())).toEqual([['editor@example.com', 'owner@example.com']]);
    expect(logs.filter((line) => line.event === 'contact.recipients_rejected')).toEqual([
      expect.objectContaining({ level: 'warn', event: 'contact.recipients_rejected', rejected: 1, accepted: 2 }),
    ]);
    expect(JSON.stringify(logs)).not.toContain('gone@');
  });

  test('every recipient taken: nothing is logged', async () => {
    const logs: string[] = [];
    const logger = createLogger({ level: 'debug', write: (line) => logs.push(line) });
    smtp = await startSmtpServer();
    const config = { url: smtp.url(), ...addresses };
    await expect(createSmtpMailer(config, { logger }).send(composeContactEmail(submission, config, SITE))).resolves.toEqual({ ok: true });
    expect(logs).toEqual([]);
  });

  test('every recipient refused: a failed try, as before', async () => {
    smtp = await startSmtpServer({ refuseRecipient: () => true });
    const config = { url: smtp.url(), ...addresses };
    const result = await createSmtpMailer(config).send(composeContactEmail(submission, config, SITE));
    expect(result).toMatchObject({ ok: false });
    expect(smtp.received).toEqual([]);
  });
});

describe('a message that names a file or a URL to attach is refused without reading either', () => {
  test('a file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailer-attach-'));
    const path = join(dir, 'secret.txt');
    writeFileSync(path, 'the secret');
    smtp = await startSmtpServer();
    const config = { url: smtp.url(), ...addresses };
    // What our own attachments (streams) never are: a path nodemailer would open itself.
    const email = { ...composeContactEmail(submission, config, SITE), attachments: [{ path }] } as unknown as ContactEmail;
    await expect(createSmtpMailer(config).send(email)).resolves.toEqual({ ok: false, permanent: false, reason: `ESTREAM: File access rejected for ${path}` });
    expect(smtp.received).toEqual([]);
  });

  test('a URL', async () => {
    http = await startFakeHttpServer();
    smtp = await startSmtpServer();
    const config = { url: smtp.url(), ...addresses };
    const href = `${http.url}/attachment`;
    const email = { ...composeContactEmail(submission, config, SITE), attachments: [{ href }] } as unknown as ContactEmail;
    await expect(createSmtpMailer(config).send(email)).resolves.toEqual({ ok: false, permanent: false, reason: `ESTREAM: Url access rejected for ${href}` });
    expect(http.requests).toEqual([]);
    expect(smtp.received).toEqual([]);
  });
});

describe.skipIf(!opensslAvailable)('what the mailer says about TLS, with and without a logger', () => {
  let certificates: TestCertificates;
  beforeAll(() => {
    certificates = makeCertificates();
  });

  test('without a logger, SMTP_TLS_REJECT_UNAUTHORIZED=false still delivers the message', async () => {
    smtp = await startSmtpServer({ tls: { ...certificates.selfSigned, secure: true } });
    const config = { url: smtp.url(), ...addresses, tls: { rejectUnauthorized: false } };
    await expect(createSmtpMailer(config).send(composeContactEmail(submission, config, SITE))).resolves.toEqual({ ok: true });
    expect(smtp.received).toHaveLength(1);
  });

  test('without a logger, a certificate for the wrong name is still refused with its reason', async () => {
    smtp = await startSmtpServer({ tls: { ...certificates.otherName, secure: true } });
    const config = { url: smtp.url(), ...addresses, tls: { ca: [certificates.ca.cert] } };
    await expect(createSmtpMailer(config).send(composeContactEmail(submission, config, SITE))).resolves.toEqual({
      ok: false,
      permanent: true,
      reason:
        "ESOCKET ERR_TLS_CERT_ALTNAME_INVALID: the mail server's TLS certificate is for DNS:mail.example.com, not 127.0.0.1; use in SMTP_URL the host name on the certificate",
    });
  });

  test('with a logger, each mailer logs its certificate problem once, with the fix for its kind (wrong name or untrusted)', async () => {
    const logs: unknown[] = [];
    const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line)) });
    smtp = await startSmtpServer({ tls: { ...certificates.otherName, secure: true } });
    const wrongName = { url: smtp.url(), ...addresses, tls: { ca: [certificates.ca.cert] } };
    const untrusted = { url: smtp.url(), ...addresses };
    const named = createSmtpMailer(wrongName, { logger });
    const plain = createSmtpMailer(untrusted, { logger });
    await named.send(composeContactEmail(submission, wrongName, SITE));
    await named.send(composeContactEmail(submission, wrongName, SITE));
    await plain.send(composeContactEmail(submission, untrusted, SITE));
    expect(logs.map((entry) => ({ ...(entry as object), time: undefined }))).toEqual([
      {
        time: undefined,
        level: 'error',
        event: 'contact.smtp_misconfigured',
        reason:
          "ESOCKET ERR_TLS_CERT_ALTNAME_INVALID: the mail server's TLS certificate is for DNS:mail.example.com, not 127.0.0.1; use in SMTP_URL the host name on the certificate",
        fix: 'use in SMTP_URL the host name the certificate was issued for, restart, then npm run inbox -- retry <id> for each failed message',
      },
      {
        time: undefined,
        level: 'error',
        event: 'contact.smtp_misconfigured',
        reason:
          "ESOCKET UNABLE_TO_VERIFY_LEAF_SIGNATURE: the mail server's TLS certificate comes from a CA that is not trusted (unable to verify the first certificate); set SMTP_TLS_CA_FILE to its CA's certificate",
        fix: "set SMTP_TLS_CA_FILE to the certificate of the CA that signed the mail server's certificate (to its own certificate if it is self-signed), restart, then npm run inbox -- retry <id> for each failed message",
      },
    ]);
  });
});

describe('encoded words', () => {
  test('empty text is no word at all', () => {
    expect(encodedWords('')).toBe('');
  });
});
