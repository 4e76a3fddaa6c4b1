import * as v from 'valibot';
import { type ConfigConcern, readVariables } from './variables.ts';

/** Double opt-in for the newsletter (`NEWSLETTER_DOUBLE_OPT_IN`), off by default as the API contract subscribes at once. */
export type ConsentConfig = { doubleOptIn: boolean };

const VARIABLES = {
  NEWSLETTER_DOUBLE_OPT_IN: v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.picklist(['true', 'false'], 'must be true or false')), 'false'),
};

/**
 * NEWSLETTER_DOUBLE_OPT_IN. With the local list or Resend the site sends the confirmation email
 * itself, so it needs a mail server and its public address (the link); Mailchimp and Kit send their own.
 */
export const consent: ConfigConcern<ConsentConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    const doubleOptIn = e.NEWSLETTER_DOUBLE_OPT_IN === 'true';
    const provider = (env.NEWSLETTER_PROVIDER ?? '').trim().toLowerCase();
    const ownMail = provider === 'local' || provider === 'resend' || (!provider && !env.MAILCHIMP_API_KEY?.trim() && !env.KIT_API_KEY?.trim());
    if (doubleOptIn && ownMail && !env.SMTP_URL?.trim()) problems.push('NEWSLETTER_DOUBLE_OPT_IN needs a mail server for the confirmation email: set SMTP_URL');
    if (doubleOptIn && ownMail && !env.PUBLIC_URL?.trim())
      problems.push('NEWSLETTER_DOUBLE_OPT_IN needs PUBLIC_URL, the address the confirmation link points to');
    return { config: { doubleOptIn }, problems };
  },
  describe: ({ doubleOptIn }) => ({ newsletterDoubleOptIn: doubleOptIn }),
};
