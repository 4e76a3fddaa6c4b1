import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
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

  test('.env.example copied as it is starts the site with the local provider', () => {
    const example = parseEnv(readFileSync(new URL('../../.env.example', import.meta.url), 'utf8'));
    expect(requireConfig(example)).toMatchObject({ newsletter: { provider: 'local' }, newsletterChoice: 'default' });
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

  test("chooses Kit when only its key is set, at Kit's v3 address unless told otherwise", () => {
    const config = requireConfig({ KIT_API_KEY: 'kk', KIT_FORM_ID: '1234567' });
    expect(config.newsletter).toEqual({ provider: 'kit', kit: { apiKey: 'kk', formId: '1234567', baseUrl: 'https://api.convertkit.com/v3' } });
    expect(config.newsletterChoice).toBe('inferred');
    expect(requireConfig({ KIT_API_KEY: 'kk', KIT_FORM_ID: '1', KIT_API_BASE_URL: 'http://127.0.0.1:9/v3/' }).newsletter).toMatchObject({
      kit: { baseUrl: 'http://127.0.0.1:9/v3' },
    });
  });

  test("chooses Resend when only its key is set, at Resend's address unless RESEND_BASE_URL says otherwise", () => {
    const config = requireConfig({ RESEND_API_KEY: 're_1', RESEND_AUDIENCE_ID: 'aud' });
    expect(config.newsletter).toEqual({ provider: 'resend', resend: { apiKey: 're_1', audienceId: 'aud', baseUrl: 'https://api.resend.com' } });
    expect(requireConfig({ RESEND_API_KEY: 're_1', RESEND_AUDIENCE_ID: 'aud', RESEND_BASE_URL: 'http://127.0.0.1:9' }).newsletter).toMatchObject({
      resend: { baseUrl: 'http://127.0.0.1:9' },
    });
  });

  test.each([
    ['kit', { NEWSLETTER_PROVIDER: 'kit', MAILCHIMP_API_KEY: 'a-us1', KIT_API_KEY: 'k', KIT_FORM_ID: '1' }],
    ['resend', { NEWSLETTER_PROVIDER: 'resend', KIT_API_KEY: 'k', RESEND_API_KEY: 'r', RESEND_AUDIENCE_ID: 'a' }],
    ['local', { NEWSLETTER_PROVIDER: 'local', MAILCHIMP_API_KEY: 'a-us1', KIT_API_KEY: 'k' }],
    ['kit', { NEWSLETTER_PROVIDER: ' Kit ', KIT_API_KEY: 'k', KIT_FORM_ID: '1' }],
  ])('NEWSLETTER_PROVIDER chooses %s whatever other keys are set', (provider, env) => {
    const config = requireConfig(env);
    expect(config.newsletter.provider).toBe(provider);
    expect(config.newsletterChoice).toBe('configured');
  });

  test('two keys and no choice: the message names both keys and the choices', () => {
    expect(problemsOf({ KIT_API_KEY: 'k', KIT_FORM_ID: '1', RESEND_API_KEY: 'r', RESEND_AUDIENCE_ID: 'a' })).toEqual([
      'NEWSLETTER_PROVIDER is required when keys of several providers are set (KIT_API_KEY, RESEND_API_KEY): choose one of mailchimp, kit, resend, local',
    ]);
  });

  test.each([
    ['a chosen provider without its key', { NEWSLETTER_PROVIDER: 'mailchimp', MAILCHIMP_LIST_ID: 'l' }, 'MAILCHIMP_API_KEY'],
    ['Mailchimp without a list', { MAILCHIMP_API_KEY: 'abc-us21' }, 'MAILCHIMP_LIST_ID'],
    ['a Mailchimp key without a data centre', { MAILCHIMP_API_KEY: 'abc', MAILCHIMP_LIST_ID: 'l' }, 'MAILCHIMP_SERVER_PREFIX'],
    ['an unknown provider', { NEWSLETTER_PROVIDER: 'sendgrid' }, 'NEWSLETTER_PROVIDER'],
    ['two keys and no choice', { MAILCHIMP_API_KEY: 'a-us1', KIT_API_KEY: 'k' }, 'NEWSLETTER_PROVIDER'],
    ['three keys and no choice', { MAILCHIMP_API_KEY: 'a-us1', KIT_API_KEY: 'k', RESEND_API_KEY: 'r' }, 'NEWSLETTER_PROVIDER'],
    ['Kit without a form', { KIT_API_KEY: 'k' }, 'KIT_FORM_ID'],
    ['Kit chosen without its key', { NEWSLETTER_PROVIDER: 'kit', KIT_FORM_ID: '1234567' }, 'KIT_API_KEY'],
    ["a Kit form id that is the embed code's uid", { KIT_API_KEY: 'k', KIT_FORM_ID: 'a1b2c3d4e5' }, 'KIT_FORM_ID'],
    ['a Kit address that is not a URL', { KIT_API_KEY: 'k', KIT_FORM_ID: '1', KIT_API_BASE_URL: 'api.convertkit.com' }, 'KIT_API_BASE_URL'],
    ['Resend without an audience', { RESEND_API_KEY: 're_1' }, 'RESEND_AUDIENCE_ID'],
    ['Resend chosen without its key', { NEWSLETTER_PROVIDER: 'resend', RESEND_AUDIENCE_ID: 'a' }, 'RESEND_API_KEY'],
    ['a Resend address that is not a URL', { RESEND_API_KEY: 're_1', RESEND_AUDIENCE_ID: 'a', RESEND_BASE_URL: 'ftp://x' }, 'RESEND_BASE_URL'],
    ['a Mailchimp list without its key and no choice', { MAILCHIMP_LIST_ID: 'l' }, 'MAILCHIMP_API_KEY'],
    ['a Kit form without its key and no choice', { KIT_FORM_ID: '1234567' }, 'KIT_API_KEY'],
    ['a Resend audience without its key and no choice', { RESEND_AUDIENCE_ID: 'a' }, 'RESEND_API_KEY'],
    ['a port that is not a number', { PORT: 'eighty' }, 'PORT'],
    ['a port out of range', { PORT: '70000' }, 'PORT'],
    ['a base URL that is not a URL', { MAILCHIMP_API_KEY: 'a-us1', MAILCHIMP_LIST_ID: 'l', MAILCHIMP_API_BASE_URL: 'nope' }, 'MAILCHIMP_API_BASE_URL'],
    ['an allowed origin that is not a URL', { ALLOWED_ORIGINS: 'example.com' }, 'ALLOWED_ORIGINS'],
    ['SMTP without a recipient', { SMTP_URL: 'smtp://localhost:25', CONTACT_FROM: 'site@example.com' }, 'CONTACT_TO'],
    ['an SMTP URL of another scheme', { SMTP_URL: 'http://localhost' }, 'SMTP_URL'],
    ['SMTP without a sender', { SMTP_URL: 'smtp://localhost:25', CONTACT_TO: 'owner@example.com' }, 'CONTACT_FROM'],
    ['a recipient that is not an address', { SMTP_URL: 'smtp://localhost:25', CONTACT_TO: 'owner', CONTACT_FROM: 'site@example.com' }, 'CONTACT_TO'],
    [
      'a sender that is not an address',
      { SMTP_URL: 'smtp://localhost:25', CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'Site <site@example.com>' },
      'CONTACT_FROM',
    ],
    ['a retry delay that is not a number', { DELIVERY_RETRY_BASE_MS: '30s' }, 'DELIVERY_RETRY_BASE_MS'],
    ['a retry delay of zero', { DELIVERY_RETRY_BASE_MS: '0' }, 'DELIVERY_RETRY_BASE_MS'],
  ])('names the variable for %s', (_, env, variable) => {
    const problems = problemsOf(env);
    expect(problems).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^${variable} `))]));
  });

  test('lists every problem at once', () => {
    expect(problemsOf({ PORT: 'x', NEWSLETTER_PROVIDER: 'kit' })).toEqual(expect.arrayContaining([expect.stringMatching(/^PORT /)]));
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
    expect(
      requireConfig({ SMTP_URL: 'smtps://user:pass@smtp.example.com:465', CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'site@example.com' }).smtp,
    ).toEqual({
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
    expect(requireConfig({ ALLOWED_ORIGINS: 'https://a.example, https://b.example/path/' }).allowedOrigins).toEqual(['https://a.example', 'https://b.example']);
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
