import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { classifySmtpError, createSmtpMailer } from '../../../packages/site-forms/src/lib/mail/mailer.ts';
import type { SmtpTls } from '../../../packages/site-forms/src/lib/config/smtp.ts';
import { composeContactEmail } from '../../../packages/site-forms/src/lib/contact/message.ts';

const SITE = { name: 'Atelier Nord', senderName: 'Atelier Nord', adminOrigin: undefined };
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { type KeyPair, makeCertificates, opensslAvailable, type TestCertificates } from '../../support/certificates.ts';
import { type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';

const submission = {
  id: 7,
  createdAt: '2026-05-04T10:20:30.456Z',
  name: 'Ada Lovelace',
  email: 'ada@example.org',
  message: 'Hello, I would like to know more.',
};
const addresses = { to: 'owner@example.com', from: 'site@example.com' };

const UNTRUSTED_FIX =
  "set SMTP_TLS_CA_FILE to the certificate of the CA that signed the mail server's certificate (to its own certificate if it is self-signed), restart, then npm run inbox -- retry <id> for each failed message";
const NAME_FIX = 'use in SMTP_URL the host name the certificate was issued for, restart, then npm run inbox -- retry <id> for each failed message';

let certificates: TestCertificates;
let smtp: FakeSmtpServer | undefined;
let logs: Array<Record<string, unknown>>;

beforeAll(() => {
  if (opensslAvailable) certificates = makeCertificates();
});
afterEach(async () => {
  await smtp?.close();
  smtp = undefined;
});

/** Starts a TLS mail server with `pair`, and a mailer for it trusting what `tls` says; answers the mailer and the way to send one message. */
async function mailerFor(pair: KeyPair, secure: boolean, tls?: SmtpTls) {
  smtp = await startSmtpServer({ tls: { ...pair, secure } });
  logs = [];
  const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  const config = { url: smtp.url(), ...addresses, tls };
  const mailer = createSmtpMailer(config, { logger });
  return { send: () => mailer.send(composeContactEmail(submission, config, SITE)) };
}

const entries = () => logs.map(({ time: _, ...rest }) => rest);

describe.skipIf(!opensslAvailable)(opensslAvailable ? 'a mail server over TLS' : 'a mail server over TLS (skipped: openssl is not installed)', () => {
  describe.each([
    ['STARTTLS', false],
    ['smtps', true],
  ])('with %s', (_, secure) => {
    test('a self-signed certificate fails the message for good, saying to set SMTP_TLS_CA_FILE, and the log says it once', async () => {
      const { send } = await mailerFor(certificates.selfSigned, secure);
      const refused = {
        ok: false,
        permanent: true,
        reason:
          "ESOCKET DEPTH_ZERO_SELF_SIGNED_CERT: the mail server's TLS certificate is self-signed (self-signed certificate); set SMTP_TLS_CA_FILE to its CA's certificate",
      };
      await expect(send()).resolves.toEqual(refused);
      await expect(send()).resolves.toEqual(refused);
      expect(entries()).toEqual([{ level: 'error', event: 'contact.smtp_misconfigured', reason: refused.reason, fix: UNTRUSTED_FIX }]);
      expect(smtp?.received).toEqual([]);
    });

    test('a certificate from a CA nobody told us to trust fails the message for good', async () => {
      const { send } = await mailerFor(certificates.byCa, secure);
      await expect(send()).resolves.toEqual({
        ok: false,
        permanent: true,
        reason:
          "ESOCKET UNABLE_TO_VERIFY_LEAF_SIGNATURE: the mail server's TLS certificate comes from a CA that is not trusted (unable to verify the first certificate); set SMTP_TLS_CA_FILE to its CA's certificate",
      });
    });

    test('with SMTP_TLS_CA_FILE naming the private CA, the message is delivered', async () => {
      const { send } = await mailerFor(certificates.byCa, secure, { ca: [certificates.ca.cert] });
      await expect(send()).resolves.toEqual({ ok: true });
      expect(smtp?.received).toHaveLength(1);
      expect(entries()).toEqual([]);
    });

    test("with SMTP_TLS_CA_FILE naming a self-signed server's own certificate, the message is delivered", async () => {
      const { send } = await mailerFor(certificates.selfSigned, secure, { ca: [certificates.selfSigned.cert] });
      await expect(send()).resolves.toEqual({ ok: true });
      expect(smtp?.received).toHaveLength(1);
    });

    test('a trusted certificate for another host name fails the message for good, saying to fix SMTP_URL', async () => {
      const { send } = await mailerFor(certificates.otherName, secure, { ca: [certificates.ca.cert] });
      const result = await send();
      expect(result).toEqual({
        ok: false,
        permanent: true,
        reason:
          "ESOCKET ERR_TLS_CERT_ALTNAME_INVALID: the mail server's TLS certificate is for DNS:mail.example.com, not 127.0.0.1; use in SMTP_URL the host name on the certificate",
      });
      expect(entries()).toEqual([{ level: 'error', event: 'contact.smtp_misconfigured', reason: (result as { reason: string }).reason, fix: NAME_FIX }]);
    });

    test('with SMTP_TLS_REJECT_UNAUTHORIZED=false any certificate is accepted, with a warning when the mailer is made', async () => {
      const { send } = await mailerFor(certificates.selfSigned, secure, { rejectUnauthorized: false });
      await expect(send()).resolves.toEqual({ ok: true });
      expect(smtp?.received).toHaveLength(1);
      expect(entries()).toEqual([
        {
          level: 'warn',
          event: 'contact.smtp_tls_unchecked',
          note: "SMTP_TLS_REJECT_UNAUTHORIZED=false: the mail server's certificate is not checked, so anyone on the way to it can read contact messages and the SMTP password. Prefer SMTP_TLS_CA_FILE.",
        },
      ]);
    });
  });
});

describe('classifying certificate refusals', () => {
  const tlsError = (originalCode: string, message: string, more: Record<string, unknown> = {}) =>
    Object.assign(new Error(message), { code: 'ESOCKET', originalCode, ...more });
  test.each([
    [
      'an expired certificate is left to retry, since its owner renews it',
      tlsError('CERT_HAS_EXPIRED', 'certificate has expired'),
      { permanent: false, reason: "ESOCKET CERT_HAS_EXPIRED: the mail server's TLS certificate has expired (certificate has expired)" },
    ],
    [
      'a certificate not valid yet is left to retry, since a clock is wrong',
      tlsError('CERT_NOT_YET_VALID', 'certificate is not yet valid'),
      {
        permanent: false,
        reason: "ESOCKET CERT_NOT_YET_VALID: the mail server's TLS certificate is not valid yet (or our clock is wrong) (certificate is not yet valid)",
      },
    ],
    [
      'a chain ending in an unknown root is for good',
      tlsError(
        'SELF_SIGNED_CERT_IN_CHAIN',
        'self-signed certificate in certificate chain; if the root CA is installed locally, try running Node.js with --use-system-ca',
      ),
      {
        permanent: true,
        reason:
          "ESOCKET SELF_SIGNED_CERT_IN_CHAIN: the mail server's TLS certificate comes from a CA that is not trusted (self-signed certificate in certificate chain); set SMTP_TLS_CA_FILE to its CA's certificate",
        fix: UNTRUSTED_FIX,
      },
    ],
    [
      "a wrong name without the certificate at hand keeps Node's words",
      tlsError('ERR_TLS_CERT_ALTNAME_INVALID', "Host: smtp.example.com. is not in the cert's altnames: DNS:mail.example.net"),
      {
        permanent: true,
        reason:
          "ESOCKET ERR_TLS_CERT_ALTNAME_INVALID: the mail server's TLS certificate is for another host name (Host: smtp.example.com. is not in the cert's altnames: DNS:mail.example.net); use in SMTP_URL the host name on the certificate",
        fix: NAME_FIX,
      },
    ],
    ['another socket error is not about the certificate', tlsError('ECONNRESET', 'read ECONNRESET'), { permanent: false, reason: 'ESOCKET: read ECONNRESET' }],
  ])('%s', (_, error, expected) => {
    expect(classifySmtpError(error)).toEqual(expected);
  });
});
