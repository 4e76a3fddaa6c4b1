import { describe, expect, test } from 'vitest';
import { consent } from '../../../packages/site-forms/src/lib/config/consent.ts';

describe('the configuration of double opt-in', () => {
  test('off by default, as the API contract subscribes at once', () => {
    expect(consent.read({})).toEqual({ config: { doubleOptIn: false }, problems: [] });
  });

  test.each([
    [{ NEWSLETTER_DOUBLE_OPT_IN: 'true', SMTP_URL: 'smtp://127.0.0.1:25', PUBLIC_URL: 'https://www.example.com' }, []],
    [{ NEWSLETTER_DOUBLE_OPT_IN: 'true', MAILCHIMP_API_KEY: 'k-us1' }, []],
    [{ NEWSLETTER_DOUBLE_OPT_IN: 'true', KIT_API_KEY: 'k' }, []],
    [
      { NEWSLETTER_DOUBLE_OPT_IN: 'true', NEWSLETTER_PROVIDER: 'resend' },
      [
        'NEWSLETTER_DOUBLE_OPT_IN needs a mail server for the confirmation email: set SMTP_URL',
        'NEWSLETTER_DOUBLE_OPT_IN needs PUBLIC_URL, the address the confirmation link points to',
      ],
    ],
    [{ NEWSLETTER_DOUBLE_OPT_IN: 'yes' }, ['NEWSLETTER_DOUBLE_OPT_IN must be true or false']],
  ])('%j: %j', (env, problems) => {
    expect(consent.read(env).problems).toEqual(problems);
  });
});
