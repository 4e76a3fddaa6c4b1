import type { SmtpConfig } from '../config.ts';
import { requireWhenNeeded } from '../lazy.ts';
import type { ContactEmail } from './message.ts';

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
 * A mailer that speaks SMTP to the server of `SMTP_URL` (smtp:// upgrades with STARTTLS
 * when offered, smtps:// is TLS from the start), one connection per message.
 */
export function createSmtpMailer(smtp: SmtpConfig, timeouts: SmtpTimeouts = SMTP_TIMEOUTS): Mailer {
  const nodemailer = requireWhenNeeded('nodemailer') as typeof import('nodemailer');
  const transport = nodemailer.createTransport({
    url: smtp.url,
    ...timeouts,
    // Our messages never attach files or URLs; refusing them shuts a door nobody needs open.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    async send(email) {
      try {
        await transport.sendMail(email);
        return { ok: true };
      } catch (error) {
        return { ok: false, ...classifySmtpError(error) };
      }
    },
  };
}

/** The error codes that retrying will not cure: the configuration has to change first. */
const PERMANENT_CODES = new Set(['EAUTH', 'ENOAUTH', 'ECONFIG']);

/**
 * Tells a failure that may pass (no connection, a timeout, a 4xx reply) from one that
 * will not (a 5xx reply, refused credentials), with a reason for the owner.
 * Hint: 503 "bad sequence of commands" counts as transient, as nodemailer counts it: it
 * says the session went wrong, not that the message was refused. Anything unknown is
 * transient too, since retries end after 24 h anyway and a message is never dropped early.
 */
export function classifySmtpError(error: unknown): { permanent: boolean; reason: string } {
  const e = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    responseCode?: unknown;
    response?: unknown;
    message?: unknown;
    timeoutType?: unknown;
  };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const responseCode = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  const text = typeof e.response === 'string' ? e.response : typeof e.message === 'string' ? e.message : String(error);
  const label = [code, typeof e.timeoutType === 'string' ? `(${e.timeoutType})` : undefined, responseCode].filter((x) => x !== undefined).join(' ');
  const reason = `${label ? `${label}: ` : ''}${text}`.replace(/\s+/g, ' ').trim().slice(0, 500);

  let permanent: boolean;
  if (responseCode !== undefined && responseCode >= 400 && responseCode < 500) permanent = false;
  else if (responseCode !== undefined && responseCode >= 500 && responseCode < 600) permanent = responseCode !== 503;
  else permanent = code !== undefined && PERMANENT_CODES.has(code);
  return { permanent, reason };
}
