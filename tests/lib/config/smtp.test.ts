import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { smtp } from '../../../packages/site-forms/src/lib/config/smtp.ts';
import { makeCertificates, opensslAvailable } from '../../support/certificates.ts';

const base = { SMTP_URL: 'smtp://mail.example.com:587', CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'site@example.com' };

let dir: string;
let certificate: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'site-forms-ca-'));
  // openssl is what the real test uses; without it, a fixed certificate would do for reading.
  certificate = opensslAvailable ? makeCertificates().ca.cert : '';
  writeFileSync(join(dir, 'ca.pem'), certificate);
  writeFileSync(join(dir, 'two.pem'), `${certificate}\n${certificate}`);
  writeFileSync(join(dir, 'empty.pem'), 'not a certificate\n');
  writeFileSync(join(dir, 'broken.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!opensslAvailable)('trusting the mail server’s certificate', () => {
  test('with nothing set, the certificate is checked against Node’s CAs only', () => {
    expect(smtp.read(base)).toEqual({
      config: {
        smtp: { url: 'smtp://mail.example.com:587', to: 'owner@example.com', from: 'site@example.com', tls: { rejectUnauthorized: true } },
        delivery: { retryBaseMs: 30_000, leaseMs: 120_000, maxAttempts: 40 },
      },
      problems: [],
    });
  });

  test('SMTP_TLS_CA_FILE adds every certificate of the file, and the start-up log names it', () => {
    const reading = smtp.read({ ...base, SMTP_TLS_CA_FILE: join(dir, 'two.pem') });
    expect(reading.problems).toEqual([]);
    expect(reading.config.smtp?.tls).toEqual({ rejectUnauthorized: true, ca: [certificate.trim(), certificate.trim()], caFile: join(dir, 'two.pem') });
    expect(smtp.describe(reading.config)).toEqual({
      smtp: {
        url: 'smtp://mail.example.com:587',
        to: 'owner@example.com',
        from: 'site@example.com',
        certificate: `checked, also trusting ${join(dir, 'two.pem')}`,
      },
      deliveryRetryBaseMs: 30_000,
      deliveryLeaseMs: 120_000,
      deliveryMaxAttempts: 40,
    });
  });

  test('SMTP_TLS_REJECT_UNAUTHORIZED=false turns the check off, and the start-up log says so', () => {
    const reading = smtp.read({ ...base, SMTP_TLS_REJECT_UNAUTHORIZED: 'false' });
    expect(reading.config.smtp?.tls).toEqual({ rejectUnauthorized: false });
    expect(smtp.describe(reading.config).smtp).toMatchObject({ certificate: 'not checked' });
  });

  test.each([
    ['a relative path', { SMTP_TLS_CA_FILE: 'certs/ca.pem' }, 'SMTP_TLS_CA_FILE must be an absolute path'],
    ['a file that is not there', { SMTP_TLS_CA_FILE: '/nonexistent/ca.pem' }, 'SMTP_TLS_CA_FILE cannot be read (ENOENT)'],
    ['a folder', { SMTP_TLS_CA_FILE: '/' }, 'SMTP_TLS_CA_FILE cannot be read (EISDIR)'],
    ['a file without a certificate', { SMTP_TLS_CA_FILE: '<dir>/empty.pem' }, 'SMTP_TLS_CA_FILE holds no PEM certificate (-----BEGIN CERTIFICATE-----)'],
    ['a certificate that is not one', { SMTP_TLS_CA_FILE: '<dir>/broken.pem' }, 'SMTP_TLS_CA_FILE holds a certificate that cannot be read'],
    ['a yes for true', { SMTP_TLS_REJECT_UNAUTHORIZED: 'yes' }, 'SMTP_TLS_REJECT_UNAUTHORIZED must be true or false'],
  ])('%s stops the start naming the variable', (_, variables, problem) => {
    const env = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, value.replace('<dir>', dir)]));
    expect(smtp.read({ ...base, ...env }).problems).toEqual([problem]);
  });
});

describe('the lease and the tries of a delivery', () => {
  test('a lease no longer than the longest send (45 s within the mailer’s limits) is refused when mail is sent', () => {
    expect(smtp.read({ ...base, DELIVERY_LEASE_MS: '45000' }).problems).toEqual([
      "DELIVERY_LEASE_MS must be more than 45000 when SMTP_URL is set (the longest a send may take within the mailer's time limits)",
    ]);
    expect(smtp.read({ ...base, DELIVERY_LEASE_MS: '45001' }).problems).toEqual([]);
    // Without mail, the lease keeps only webhook tries (15 s each) from the other instances.
    expect(smtp.read({ DELIVERY_LEASE_MS: '2000' }).problems).toEqual([]);
  });

  test('DELIVERY_MAX_ATTEMPTS: 40 unless set, at least 1', () => {
    expect(smtp.read(base).config.delivery.maxAttempts).toBe(40);
    expect(smtp.read({ ...base, DELIVERY_MAX_ATTEMPTS: '3' }).config.delivery.maxAttempts).toBe(3);
    expect(smtp.read({ ...base, DELIVERY_MAX_ATTEMPTS: '0' }).problems).toEqual(['DELIVERY_MAX_ATTEMPTS must be at least 1']);
  });
});
