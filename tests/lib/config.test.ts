import { describe, expect, test } from 'vitest';
import { ConfigError, describeConfig, readConfig, requireConfig } from '../../src/lib/config.ts';

const problemsOf = (env: Record<string, string>) => {
  const result = readConfig(env);
  return result.ok ? [] : result.problems;
};

describe('configuration', () => {
  test('works with no configuration at all: local subscribers, no SMTP, port 4321', () => {
    const config = requireConfig({});
    expect(config).toMatchObject({
      host: 'localhost',
      port: 4321,
      dataDir: './data',
      newsletter: { provider: 'local' },
      newsletterChoice: 'default',
      smtp: undefined,
      delivery: { retryBaseMs: 30_000 },
      rateLimit: { max: 5, windowSeconds: 600 },
    });
  });

  test('chooses Mailchimp when only its key is set, taking the server prefix from the key', () => {
    const config = requireConfig({ MAILCHIMP_API_KEY: 'abc-us21', MAILCHIMP_LIST_ID: 'list1' });
    expect(config.newsletter).toEqual({
      provider: 'mailchimp',
      mailchimp: { apiKey: 'abc-us21', listId: 'list1', baseUrl: 'https://us21.api.mailchimp.com/3.0' },
    });
    expect(config.newsletterChoice).toBe('inferred');
  });

  test('MAILCHIMP_SERVER_PREFIX overrides the prefix of the key, MAILCHIMP_API_BASE_URL the whole address', () => {
    expect(requireConfig({ MAILCHIMP_API_KEY: 'abc-us21', MAILCHIMP_LIST_ID: 'l', MAILCHIMP_SERVER_PREFIX: 'us6' }).newsletter).toMatchObject({
      mailchimp: { baseUrl: 'https://us6.api.mailchimp.com/3.0' },
    });
    expect(
      requireConfig({ MAILCHIMP_API_KEY: 'abc-us21', MAILCHIMP_LIST_ID: 'l', MAILCHIMP_API_BASE_URL: 'http://127.0.0.1:9/3.0/' }).newsletter,
    ).toMatchObject({ mailchimp: { baseUrl: 'http://127.0.0.1:9/3.0' } });
  });

  test.each([
    ['a chosen provider without its key', { NEWSLETTER_PROVIDER: 'mailchimp', MAILCHIMP_LIST_ID: 'l' }, 'MAILCHIMP_API_KEY'],
    ['Mailchimp without a list', { MAILCHIMP_API_KEY: 'abc-us21' }, 'MAILCHIMP_LIST_ID'],
    ['a Mailchimp key without a data centre', { MAILCHIMP_API_KEY: 'abc', MAILCHIMP_LIST_ID: 'l' }, 'MAILCHIMP_SERVER_PREFIX'],
    ['an unknown provider', { NEWSLETTER_PROVIDER: 'sendgrid' }, 'NEWSLETTER_PROVIDER'],
    ['two keys and no choice', { MAILCHIMP_API_KEY: 'a-us1', KIT_API_KEY: 'k' }, 'NEWSLETTER_PROVIDER'],
    ['a port that is not a number', { PORT: 'eighty' }, 'PORT'],
    ['a port out of range', { PORT: '70000' }, 'PORT'],
    ['a base URL that is not a URL', { MAILCHIMP_API_KEY: 'a-us1', MAILCHIMP_LIST_ID: 'l', MAILCHIMP_API_BASE_URL: 'nope' }, 'MAILCHIMP_API_BASE_URL'],
    ['an allowed origin that is not a URL', { ALLOWED_ORIGINS: 'example.com' }, 'ALLOWED_ORIGINS'],
    ['SMTP without a recipient', { SMTP_URL: 'smtp://localhost:25', CONTACT_FROM: 'site@example.com' }, 'CONTACT_TO'],
    ['an SMTP URL of another scheme', { SMTP_URL: 'http://localhost' }, 'SMTP_URL'],
    ['SMTP without a sender', { SMTP_URL: 'smtp://localhost:25', CONTACT_TO: 'owner@example.com' }, 'CONTACT_FROM'],
    ['a recipient that is not an address', { SMTP_URL: 'smtp://localhost:25', CONTACT_TO: 'owner', CONTACT_FROM: 'site@example.com' }, 'CONTACT_TO'],
    ['a sender that is not an address', { SMTP_URL: 'smtp://localhost:25', CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'Site <site@example.com>' }, 'CONTACT_FROM'],
    ['a retry delay that is not a number', { DELIVERY_RETRY_BASE_MS: '30s' }, 'DELIVERY_RETRY_BASE_MS'],
    ['a retry delay of zero', { DELIVERY_RETRY_BASE_MS: '0' }, 'DELIVERY_RETRY_BASE_MS'],
  ])('names the variable for %s', (_, env, variable) => {
    const problems = problemsOf(env);
    expect(problems).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^${variable} `))]));
  });

  test('lists every problem at once', () => {
    expect(problemsOf({ PORT: 'x', NEWSLETTER_PROVIDER: 'kit' })).toEqual(
      expect.arrayContaining([expect.stringMatching(/^PORT /)]),
    );
    expect(problemsOf({ NEWSLETTER_PROVIDER: 'kit' })).toEqual([
      'KIT_API_KEY is required when NEWSLETTER_PROVIDER is kit',
      'KIT_FORM_ID is required when NEWSLETTER_PROVIDER is kit',
    ]);
  });

  test('requireConfig throws a ConfigError whose message names each variable and no value', () => {
    const secret = 'super-secret-key-us21';
    expect(() => requireConfig({ MAILCHIMP_API_KEY: secret })).toThrow(ConfigError);
    try {
      requireConfig({ MAILCHIMP_API_KEY: secret, PORT: 'x' });
    } catch (error) {
      expect((error as Error).message).toMatch(/MAILCHIMP_LIST_ID/);
      expect((error as Error).message).toMatch(/PORT/);
      expect((error as Error).message).not.toContain(secret);
    }
  });

  test('SMTP_URL with CONTACT_TO and CONTACT_FROM turns email delivery on, smtps:// included', () => {
    expect(requireConfig({ SMTP_URL: 'smtps://user:pass@smtp.example.com:465', CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'site@example.com' }).smtp).toEqual({
      url: 'smtps://user:pass@smtp.example.com:465',
      to: 'owner@example.com',
      from: 'site@example.com',
    });
    expect(requireConfig({ CONTACT_TO: 'owner@example.com' }).smtp).toBeUndefined();
  });

  test('DELIVERY_RETRY_BASE_MS shortens the first retry delay (a knob for tests and impatient owners)', () => {
    expect(requireConfig({ DELIVERY_RETRY_BASE_MS: '250' }).delivery).toEqual({ retryBaseMs: 250 });
  });

  test('parses ALLOWED_ORIGINS into origins', () => {
    expect(requireConfig({ ALLOWED_ORIGINS: 'https://a.example, https://b.example/path/' }).allowedOrigins).toEqual([
      'https://a.example',
      'https://b.example',
    ]);
  });

  test('describes the configuration with secrets masked', () => {
    const config = requireConfig({
      MAILCHIMP_API_KEY: '0123456789abcdef-us21',
      MAILCHIMP_LIST_ID: 'l',
      SMTP_URL: 'smtp://user:hunter2@mail.example.com:587',
      CONTACT_TO: 'owner@example.com',
      CONTACT_FROM: 'site@example.com',
    });
    const text = JSON.stringify(describeConfig(config));
    expect(text).not.toContain('0123456789abcdef');
    expect(text).not.toContain('hunter2');
    expect(text).toContain('mail.example.com');
  });
});
