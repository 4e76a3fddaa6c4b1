import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { needs } from './services.ts';

/** A key and its certificate, in PEM. */
export type KeyPair = { key: string; cert: string };

/** The certificates the TLS tests need, made fresh by openssl for this run. */
export type TestCertificates = {
  /** Self-signed, for IP 127.0.0.1: what a mail server set up without a CA offers. */
  selfSigned: KeyPair;
  /** A private CA, trusted by nobody until told to. */
  ca: KeyPair;
  /** Signed by `ca`, for IP 127.0.0.1. */
  byCa: KeyPair;
  /** Signed by `ca`, for mail.example.com only: the right CA, the wrong name. */
  otherName: KeyPair;
};

/** Whether the tests that need openssl run: without it the run fails, or skips them under ALLOW_SKIP=1 (tests/support/services.ts). */
export const opensslAvailable = needs('openssl');

/** Makes the certificates with openssl in a temporary folder, which it removes; valid for two days. */
export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'site-forms-certs-'));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  const read = (name: string): KeyPair => ({ key: readFileSync(file(`${name}.key`), 'utf8'), cert: readFileSync(file(`${name}.pem`), 'utf8') });
  const signedByCa = (name: string, subjectAltName: string) => {
    openssl('req', ...newKey, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', `/CN=${name}`);
    writeFileSync(file(`${name}.ext`), `subjectAltName=${subjectAltName}\n`);
    openssl(
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      file(`${name}.ext`),
      '-out',
      file(`${name}.pem`),
    );
  };
  try {
    openssl(
      'req',
      '-x509',
      ...newKey,
      '-keyout',
      file('self.key'),
      '-out',
      file('self.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    );
    openssl('req', '-x509', ...newKey, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=Site forms test CA');
    signedByCa('by-ca', 'IP:127.0.0.1');
    signedByCa('other-name', 'DNS:mail.example.com');
    return { selfSigned: read('self'), ca: read('ca'), byCa: read('by-ca'), otherName: read('other-name') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
