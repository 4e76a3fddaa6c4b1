import * as v from 'valibot';
import { isEmailAddress } from '../forms/email.ts';
import { withoutCredentials } from './secrets.ts';
import { type ConfigConcern, integer, optionalUrlOf, readVariables, text } from './variables.ts';

/** SMTP delivery of contact messages, or `undefined` when messages are only stored. */
export type SmtpConfig = { url: string; to: string; from: string };

/** The contact form's delivery part of the configuration. */
export type DeliveryConfig = {
  smtp: SmtpConfig | undefined;
  /** The wait after the first failed delivery attempt; it doubles up to an hour. */
  delivery: { retryBaseMs: number };
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
};

/** SMTP_URL, CONTACT_TO, CONTACT_FROM and DELIVERY_RETRY_BASE_MS. */
export const smtp: ConfigConcern<DeliveryConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    const required = (name: string, value: string | undefined): string => {
      if (!value) problems.push(`${name} is required when SMTP_URL is set`);
      return value ?? '';
    };
    const smtp = e.SMTP_URL ? { url: e.SMTP_URL, to: required('CONTACT_TO', e.CONTACT_TO), from: required('CONTACT_FROM', e.CONTACT_FROM) } : undefined;
    return { config: { smtp, delivery: { retryBaseMs: e.DELIVERY_RETRY_BASE_MS } }, problems };
  },
  describe: ({ smtp, delivery }) => ({
    smtp: smtp ? { url: withoutCredentials(smtp.url), to: smtp.to, from: smtp.from } : 'off (messages are stored, not sent)',
    deliveryRetryBaseMs: delivery.retryBaseMs,
  }),
};
