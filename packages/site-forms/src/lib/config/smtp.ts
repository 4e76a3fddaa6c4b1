import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { isAbsolute } from 'node:path';
import * as v from 'valibot';
import { isEmailAddress } from '../forms/email.ts';
import { longestSendMs } from '../mail/mailer.ts';
import { DEFAULT_MAX_ATTEMPTS } from '../queue/queue.ts';
import type { SmtpConfig, SmtpTls } from '../mail/mailer-settings.ts';
import { withoutCredentials } from './secrets.ts';
import { type ConfigConcern, integer, optionalText, optionalUrlOf, readVariables, text } from './variables.ts';

export type { SmtpConfig, SmtpTls };

/** The contact form's delivery part of the configuration. */
export type DeliveryConfig = {
  smtp: SmtpConfig | undefined;
  /** The wait after the first failed delivery attempt; it doubles up to an hour. */
  delivery: { retryBaseMs: number; leaseMs: number; maxAttempts: number };
};

// Trimmed first, so that a blank value counts as not set.
// The owner's own addresses may be on a one-label domain, such as owner@localhost.
const emailAddress = v.optional(
  v.pipe(
    text,
    v.check((value) => value === '' || isEmailAddress(value, { dotless: true }), 'must be an email address'),
  ),
);

const VARIABLES = {
  SMTP_URL: optionalUrlOf(['smtp', 'smtps'], 'smtp://user:pass@smtp.example.com:587'),
  CONTACT_TO: emailAddress,
  CONTACT_FROM: emailAddress,
  DELIVERY_RETRY_BASE_MS: v.optional(integer(1, 3_600_000), '30000'),
  SMTP_TLS_CA_FILE: optionalText,
  SMTP_TLS_REJECT_UNAUTHORIZED: v.optional(v.picklist(['true', 'false'], 'must be true or false'), 'true'),
  // How long an instance keeps a message it is sending from the others (decision 0051).
  DELIVERY_LEASE_MS: v.optional(integer(1_000, 3_600_000), '120000'),
  // How many tries a message, a webhook delivery or a signup gets before it waits for the owner (decision 0160).
  DELIVERY_MAX_ATTEMPTS: v.optional(integer(1, 1_000), String(DEFAULT_MAX_ATTEMPTS)),
};

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/**
 * The certificates in the file SMTP_TLS_CA_FILE names, or what is wrong with it.
 * Hint: an absolute path only, because a relative one would depend on the directory the
 * server happens to be started from.
 */
export function readCaFile(path: string): { ok: true; ca: string[] } | { ok: false; problem: string } {
  if (!isAbsolute(path)) return { ok: false, problem: 'SMTP_TLS_CA_FILE must be an absolute path' };
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    return { ok: false, problem: `SMTP_TLS_CA_FILE cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  const ca = pem.match(PEM_CERTIFICATE) ?? [];
  if (ca.length === 0) return { ok: false, problem: 'SMTP_TLS_CA_FILE holds no PEM certificate (-----BEGIN CERTIFICATE-----)' };
  for (const certificate of ca) {
    try {
      new X509Certificate(certificate);
    } catch {
      return { ok: false, problem: 'SMTP_TLS_CA_FILE holds a certificate that cannot be read' };
    }
  }
  return { ok: true, ca };
}

/** SMTP_URL, CONTACT_TO, CONTACT_FROM, DELIVERY_RETRY_BASE_MS, DELIVERY_LEASE_MS, DELIVERY_MAX_ATTEMPTS, SMTP_TLS_CA_FILE and SMTP_TLS_REJECT_UNAUTHORIZED. */
export const smtp: ConfigConcern<DeliveryConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    const required = (name: string, value: string | undefined): string => {
      if (!value) problems.push(`${name} is required when SMTP_URL is set`);
      return value ?? '';
    };
    const tls: SmtpTls = { rejectUnauthorized: e.SMTP_TLS_REJECT_UNAUTHORIZED !== 'false' };
    if (e.SMTP_TLS_CA_FILE) {
      const file = readCaFile(e.SMTP_TLS_CA_FILE);
      if (file.ok) Object.assign(tls, { ca: file.ca, caFile: e.SMTP_TLS_CA_FILE });
      else problems.push(file.problem);
    }
    // A lease that ends before a send can let a second instance send the same message while the
    // first is still talking to the mail server: refused rather than allowed to happen.
    const longest = longestSendMs();
    if (e.SMTP_URL && e.DELIVERY_LEASE_MS <= longest) {
      problems.push(`DELIVERY_LEASE_MS must be more than ${longest} when SMTP_URL is set (the longest a send may take within the mailer's time limits)`);
    }
    const smtp = e.SMTP_URL ? { url: e.SMTP_URL, to: required('CONTACT_TO', e.CONTACT_TO), from: required('CONTACT_FROM', e.CONTACT_FROM), tls } : undefined;
    return {
      config: { smtp, delivery: { retryBaseMs: e.DELIVERY_RETRY_BASE_MS, leaseMs: e.DELIVERY_LEASE_MS, maxAttempts: e.DELIVERY_MAX_ATTEMPTS } },
      problems,
    };
  },
  describe: ({ smtp, delivery }) => ({
    smtp: smtp
      ? {
          url: withoutCredentials(smtp.url),
          to: smtp.to,
          from: smtp.from,
          certificate: smtp.tls?.rejectUnauthorized === false ? 'not checked' : smtp.tls?.caFile ? `checked, also trusting ${smtp.tls.caFile}` : 'checked',
        }
      : 'off (messages are stored, not sent)',
    deliveryRetryBaseMs: delivery.retryBaseMs,
    deliveryLeaseMs: delivery.leaseMs,
    deliveryMaxAttempts: delivery.maxAttempts,
  }),
};
