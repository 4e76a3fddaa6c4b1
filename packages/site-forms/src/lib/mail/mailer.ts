import { toolCommand } from '../commands.ts';
import { getCACertificates } from 'node:tls';
import type { SmtpConfig } from './mailer-settings.ts';
import { requireWhenNeeded } from '../lazy.ts';
import type { Logger } from '../log.ts';
import type { ContactEmail } from './email.ts';

/** The answer of one delivery attempt: accepted, or refused for a while or for good. */
export type SendResult = { ok: true } | { ok: false; permanent: boolean; reason: string };

/** Hands one email to the outside world; never throws for a refusal, only answers it. */
export interface Mailer {
  send(email: ContactEmail): Promise<SendResult>;
}

/** How long each step of an SMTP conversation may take, in milliseconds. */
export type SmtpTimeouts = { connectionTimeout: number; greetingTimeout: number; socketTimeout: number; dnsTimeout: number };

/**
 * Short limits for every step: nodemailer waits minutes by default, and a worker stuck on
 * a dead server delays every other message and a clean shutdown.
 */
export const SMTP_TIMEOUTS: SmtpTimeouts = { connectionTimeout: 10_000, greetingTimeout: 5_000, socketTimeout: 20_000, dnsTimeout: 10_000 };

/**
 * The longest one send may take within `timeouts`: looking up the server, connecting, its
 * greeting, and the longest silence of the conversation (DELIVERY_LEASE_MS must be longer).
 */
export function longestSendMs(timeouts: SmtpTimeouts = SMTP_TIMEOUTS): number {
  return timeouts.dnsTimeout + timeouts.connectionTimeout + timeouts.greetingTimeout + timeouts.socketTimeout;
}

/** What the SMTP mailer may be given besides the server: its time limits, and where to say what to fix. */
export type SmtpMailerOptions = { timeouts?: SmtpTimeouts; logger?: Logger };

/**
 * A mailer that speaks SMTP to the server of `SMTP_URL` (smtp:// upgrades with STARTTLS
 * when offered, smtps:// is TLS from the start), one connection per message.
 */
export function createSmtpMailer(smtp: SmtpConfig, { timeouts = SMTP_TIMEOUTS, logger }: SmtpMailerOptions = {}): Mailer {
  const tls = smtp.tls ?? {};
  const transport = smtpTransport(smtp, timeouts);
  if (tls.rejectUnauthorized === false) {
    logger?.warn('contact.smtp_tls_unchecked', {
      note: "SMTP_TLS_REJECT_UNAUTHORIZED=false: the mail server's certificate is not checked, so anyone on the way to it can read contact messages and the SMTP password. Prefer SMTP_TLS_CA_FILE.",
    });
  }
  // Each kind of certificate problem is explained once per process, not once per message.
  const explained = new Set<string>();
  return {
    async send(email) {
      try {
        const sent = await transport.sendMail(email);
        // Some recipients refused while others took it: the message went, so the try is done; the
        // owner learns that a mailbox of theirs is gone, by count (an address is personal data).
        if (sent.rejected.length > 0) logger?.warn('contact.recipients_rejected', { rejected: sent.rejected.length, accepted: sent.accepted.length });
        return { ok: true };
      } catch (error) {
        const { fix, ...result } = classifySmtpError(error);
        if (fix && !explained.has(fix)) {
          explained.add(fix);
          logger?.error('contact.smtp_misconfigured', { reason: result.reason, fix });
        }
        return { ok: false, ...result };
      }
    },
  };
}

/**
 * Checks the mail server of `SMTP_URL` without sending anything: connects, upgrades to TLS,
 * and signs in as a message would (`npm run doctor`).
 */
export async function verifySmtp(smtp: SmtpConfig, timeouts: SmtpTimeouts = SMTP_TIMEOUTS): Promise<SendResult & { fix?: string }> {
  const transport = smtpTransport(smtp, timeouts);
  try {
    await transport.verify();
    return { ok: true };
  } catch (error) {
    return { ok: false, ...classifySmtpError(error) };
  } finally {
    transport.close();
  }
}

/** The one way this project talks SMTP: one connection per message, short limits, no files or URLs. */
function smtpTransport(smtp: SmtpConfig, timeouts: SmtpTimeouts) {
  const tls = smtp.tls ?? {};
  const nodemailer = requireWhenNeeded('nodemailer') as typeof import('nodemailer');
  return nodemailer.createTransport({
    url: smtp.url,
    ...timeouts,
    // Our messages never attach files or URLs; refusing them shuts a door nobody needs open.
    disableFileAccess: true,
    disableUrlAccess: true,
    tls: {
      // Added to the default CAs rather than replacing them, so a server that later moves to a public certificate still works.
      ...(tls.ca ? { ca: [...getCACertificates('default'), ...tls.ca] } : {}),
      rejectUnauthorized: tls.rejectUnauthorized !== false,
    },
  });
}

/** The error codes that retrying will not cure: the configuration has to change first. */
const PERMANENT_CODES = new Set(['EAUTH', 'ENOAUTH', 'ECONFIG']);

/** What to change when the mail server's certificate is refused, by kind of refusal: in short for the message's reason, in full for the log. */
export const CERTIFICATE_FIXES = {
  untrusted: {
    short: "set SMTP_TLS_CA_FILE to its CA's certificate",
    full: `set SMTP_TLS_CA_FILE to the certificate of the CA that signed the mail server's certificate (to its own certificate if it is self-signed), restart, then ${toolCommand('inbox', 'retry <id>')} for each failed message`,
  },
  name: {
    short: 'use in SMTP_URL the host name on the certificate',
    full: `use in SMTP_URL the host name the certificate was issued for, restart, then ${toolCommand('inbox', 'retry <id>')} for each failed message`,
  },
} as const;

// Node's (OpenSSL's) verification codes. Untrusted and wrong-name certificates are
// configuration: retrying for 24 h cannot cure them. An expired or not yet valid one is left
// transient: the provider renews it, or our clock is corrected, without the owner.
const CERTIFICATE_PROBLEMS: Record<string, { problem: string; fix?: keyof typeof CERTIFICATE_FIXES }> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: { problem: 'is self-signed', fix: 'untrusted' },
  SELF_SIGNED_CERT_IN_CHAIN: { problem: 'comes from a CA that is not trusted', fix: 'untrusted' },
  UNABLE_TO_GET_ISSUER_CERT: { problem: 'comes from a CA that is not trusted', fix: 'untrusted' },
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: { problem: 'comes from a CA that is not trusted', fix: 'untrusted' },
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: { problem: 'comes from a CA that is not trusted', fix: 'untrusted' },
  CERT_UNTRUSTED: { problem: 'is not trusted', fix: 'untrusted' },
  CERT_REJECTED: { problem: 'is not trusted', fix: 'untrusted' },
  INVALID_CA: { problem: 'comes from an invalid CA', fix: 'untrusted' },
  CERT_SIGNATURE_FAILURE: { problem: 'has an invalid signature', fix: 'untrusted' },
  ERR_TLS_CERT_ALTNAME_INVALID: { problem: 'is for another host name', fix: 'name' },
  HOSTNAME_MISMATCH: { problem: 'is for another host name', fix: 'name' },
  CERT_HAS_EXPIRED: { problem: 'has expired' },
  CERT_NOT_YET_VALID: { problem: 'is not valid yet (or our clock is wrong)' },
};

/**
 * Tells a failure that may pass (no connection, a timeout, a 4xx reply) from one that
 * will not (a 5xx reply, refused credentials, a certificate we cannot trust), with a reason
 * for the owner and, for a configuration error, what to change.
 * Hint: 503 "bad sequence of commands" counts as transient, as nodemailer counts it: it
 * says the session went wrong, not that the message was refused. Anything unknown is
 * transient too, since retries end after 24 h anyway and a message is never dropped early.
 */
export function classifySmtpError(error: unknown): { permanent: boolean; reason: string; fix?: string } {
  const e = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    originalCode?: unknown;
    host?: unknown;
    cert?: { subjectaltname?: unknown };
    responseCode?: unknown;
    response?: unknown;
    message?: unknown;
    timeoutType?: unknown;
  };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const responseCode = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  const text = typeof e.response === 'string' ? e.response : typeof e.message === 'string' ? e.message : String(error);

  const certificate = typeof e.originalCode === 'string' ? CERTIFICATE_PROBLEMS[e.originalCode] : undefined;
  if (certificate) {
    // Node's own advice after the ";" (--use-system-ca) is not how this service is configured.
    const detail = text.split(';')[0];
    // Node's check of the name leaves out DNS names when the host is an IP; its error has both.
    const names = e.cert?.subjectaltname;
    const problem =
      certificate.fix === 'name' && typeof names === 'string' && typeof e.host === 'string'
        ? `is for ${names}, not ${e.host}`
        : `${certificate.problem} (${detail})`;
    const reason = oneLine(`${code} ${e.originalCode}: the mail server's TLS certificate ${problem}`);
    if (!certificate.fix) return { permanent: false, reason };
    const fix = CERTIFICATE_FIXES[certificate.fix];
    return { permanent: true, reason: oneLine(`${reason}; ${fix.short}`), fix: fix.full };
  }

  const label = [code, typeof e.timeoutType === 'string' ? `(${e.timeoutType})` : undefined, responseCode].filter((x) => x !== undefined).join(' ');
  const reason = oneLine(`${label ? `${label}: ` : ''}${text}`);

  let permanent: boolean;
  if (responseCode !== undefined && responseCode >= 400 && responseCode < 500) permanent = false;
  else if (responseCode !== undefined && responseCode >= 500 && responseCode < 600) permanent = responseCode !== 503;
  else permanent = code !== undefined && PERMANENT_CODES.has(code);
  return { permanent, reason };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 500);
}
