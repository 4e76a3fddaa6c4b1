import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { describe, expect, test } from 'vitest';
import { ConfigError, describeConfig, readConfig, requireConfig } from '../../packages/site-forms/src/lib/config/config.ts';

/** Where the project's relative data folders are, whatever the working directory. */
const PROJECT = {
  data: fileURLToPath(new URL('../../data', import.meta.url)),
  varForms: fileURLToPath(new URL('../../var/forms', import.meta.url)),
};

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
      // Beside package.json, whatever the working directory.
      dataDir: PROJECT.data,
      newsletter: { provider: 'local' },
      newsletterChoice: 'default',
      smtp: undefined,
      delivery: { retryBaseMs: 30_000 },
      rateLimit: { max: 5, windowSeconds: 600 },
    });
  });

  test.each([
    ['owner@localhost', 'site@localhost'],
    ["o'brien@example.com", 'forms@xn--mnchen-3ya.de'],
  ])('accepts CONTACT_TO %s and CONTACT_FROM %s', (to, from) => {
    expect(requireConfig({ SMTP_URL: 'smtp://localhost:25', CONTACT_TO: to, CONTACT_FROM: from }).smtp).toEqual({
      url: 'smtp://localhost:25',
      to,
      from,
      tls: { rejectUnauthorized: true },
    });
  });

  test.each([
    ['a second recipient', 'owner@example.com, other@example.com'],
    ['a line break and a header', 'owner@example.com\nBcc: x@evil.test'],
    ['a display name', 'Owner <owner@example.com>'],
    ['a space', 'owner @example.com'],
  ])('refuses a CONTACT_TO with %s', (_, to) => {
    expect(problemsOf({ SMTP_URL: 'smtp://localhost:25', CONTACT_TO: to, CONTACT_FROM: 'site@example.com' })).toEqual(['CONTACT_TO must be an email address']);
  });

  test('.env.example copied as it is starts the site with the local provider', () => {
    const example = parseEnv(readFileSync(new URL('../../.env.example', import.meta.url), 'utf8'));
    expect(requireConfig(example)).toMatchObject({ newsletter: { provider: 'local' }, newsletterChoice: 'default' });
  });

  test.each([
    [{}, { ok: true, queue: false }],
    [{ NEWSLETTER_QUEUE_ON_OUTAGE: 'false' }, { ok: true, queue: false }],
    [{ NEWSLETTER_QUEUE_ON_OUTAGE: ' TRUE ' }, { ok: true, queue: true }],
    [{ NEWSLETTER_QUEUE_ON_OUTAGE: 'yes' }, { ok: false, problems: ['NEWSLETTER_QUEUE_ON_OUTAGE must be true or false'] }],
  ])("NEWSLETTER_QUEUE_ON_OUTAGE %j: off unless set to true, as the spec's 503 is the default", (env, expected) => {
    const result = readConfig(env);
    expect(result.ok ? { ok: true, queue: result.config.newsletterQueueOnOutage } : result).toEqual(expected);
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
    expect(config.newsletter).toEqual({ provider: 'kit', kit: { apiKey: 'kk', formId: '1234567', baseUrl: 'https://api.convertkit.com/v3', version: 'v3' } });
    expect(config.newsletterChoice).toBe('inferred');
    expect(requireConfig({ KIT_API_KEY: 'kk', KIT_FORM_ID: '1', KIT_API_BASE_URL: 'http://127.0.0.1:9/v3/' }).newsletter).toMatchObject({
      kit: { baseUrl: 'http://127.0.0.1:9/v3' },
    });
  });

  test("chooses Resend when only its key is set, at Resend's address unless RESEND_BASE_URL says otherwise", () => {
    const config = requireConfig({ RESEND_API_KEY: 're_1', RESEND_AUDIENCE_ID: 'aud' });
    expect(config.newsletter).toEqual({
      provider: 'resend',
      resend: { apiKey: 're_1', target: { kind: 'audience', id: 'aud' }, baseUrl: 'https://api.resend.com' },
    });
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
    [
      'a chosen provider without its key',
      { NEWSLETTER_PROVIDER: 'mailchimp', MAILCHIMP_LIST_ID: 'l' },
      'MAILCHIMP_API_KEY is required when NEWSLETTER_PROVIDER is mailchimp',
    ],
    ['Mailchimp without a list', { MAILCHIMP_API_KEY: 'abc-us21' }, 'MAILCHIMP_LIST_ID is required when NEWSLETTER_PROVIDER is mailchimp'],
    [
      'a Mailchimp key without a data centre',
      { MAILCHIMP_API_KEY: 'abc', MAILCHIMP_LIST_ID: 'l' },
      'MAILCHIMP_SERVER_PREFIX is required when MAILCHIMP_API_KEY does not end in -<data centre>, such as -us21',
    ],
    [
      'a Mailchimp key ending in a dash',
      { MAILCHIMP_API_KEY: 'abc-', MAILCHIMP_LIST_ID: 'l' },
      'MAILCHIMP_SERVER_PREFIX is required when MAILCHIMP_API_KEY does not end in -<data centre>, such as -us21',
    ],
    [
      'a Mailchimp key starting with its only dash',
      { MAILCHIMP_API_KEY: '-us21', MAILCHIMP_LIST_ID: 'l' },
      'MAILCHIMP_SERVER_PREFIX is required when MAILCHIMP_API_KEY does not end in -<data centre>, such as -us21',
    ],
    ['a Mailchimp data centre without letters', { MAILCHIMP_API_KEY: 'abc-21', MAILCHIMP_LIST_ID: 'l' }, 'MAILCHIMP_SERVER_PREFIX must look like us21'],
    [
      'a Mailchimp data centre with more after it',
      { MAILCHIMP_API_KEY: 'abc', MAILCHIMP_LIST_ID: 'l', MAILCHIMP_SERVER_PREFIX: 'us21.evil' },
      'MAILCHIMP_SERVER_PREFIX must look like us21',
    ],
    [
      'a Mailchimp data centre with more before it',
      { MAILCHIMP_API_KEY: 'abc', MAILCHIMP_LIST_ID: 'l', MAILCHIMP_SERVER_PREFIX: 'x.us21' },
      'MAILCHIMP_SERVER_PREFIX must look like us21',
    ],
    ['an unknown provider', { NEWSLETTER_PROVIDER: 'sendgrid' }, 'NEWSLETTER_PROVIDER must be one of mailchimp, kit, resend, local'],
    [
      'three keys and no choice',
      { MAILCHIMP_API_KEY: 'a-us1', KIT_API_KEY: 'k', RESEND_API_KEY: 'r' },
      'NEWSLETTER_PROVIDER is required when keys of several providers are set (MAILCHIMP_API_KEY, KIT_API_KEY, RESEND_API_KEY): choose one of mailchimp, kit, resend, local',
    ],
    ['Kit without a form', { KIT_API_KEY: 'k' }, 'KIT_FORM_ID is required when NEWSLETTER_PROVIDER is kit'],
    ['Kit chosen without its key', { NEWSLETTER_PROVIDER: 'kit', KIT_FORM_ID: '1234567' }, 'KIT_API_KEY is required when NEWSLETTER_PROVIDER is kit'],
    [
      "a Kit form id that is the embed code's uid",
      { KIT_API_KEY: 'k', KIT_FORM_ID: 'a1b2c3d4e5' },
      "KIT_FORM_ID must be the form's number, such as 1234567 (from the form's address in Kit, not the data-uid of its embed code)",
    ],
    [
      'a Kit address that is not a URL',
      { KIT_API_KEY: 'k', KIT_FORM_ID: '1', KIT_API_BASE_URL: 'api.convertkit.com' },
      'KIT_API_BASE_URL must be an absolute http(s) URL',
    ],
    [
      'Resend without a segment',
      { RESEND_API_KEY: 're_1' },
      'RESEND_SEGMENT_ID (or the deprecated RESEND_AUDIENCE_ID) is required when NEWSLETTER_PROVIDER is resend',
    ],
    [
      'Resend chosen without its key',
      { NEWSLETTER_PROVIDER: 'resend', RESEND_AUDIENCE_ID: 'a' },
      'RESEND_API_KEY is required when NEWSLETTER_PROVIDER is resend',
    ],
    [
      'a Resend address of another scheme',
      { RESEND_API_KEY: 're_1', RESEND_AUDIENCE_ID: 'a', RESEND_BASE_URL: 'ftp://x' },
      'RESEND_BASE_URL must be an absolute http(s) URL',
    ],
    [
      'a Mailchimp list without its key and no choice',
      { MAILCHIMP_LIST_ID: 'l' },
      'MAILCHIMP_API_KEY is required when MAILCHIMP_LIST_ID is set (or set NEWSLETTER_PROVIDER=local to keep subscribers in the database)',
    ],
    [
      'a Kit form without its key and no choice',
      { KIT_FORM_ID: '1234567' },
      'KIT_API_KEY is required when KIT_FORM_ID is set (or set NEWSLETTER_PROVIDER=local to keep subscribers in the database)',
    ],
    [
      'a Resend audience without its key and no choice',
      { RESEND_AUDIENCE_ID: 'a' },
      'RESEND_API_KEY is required when RESEND_AUDIENCE_ID is set (or set NEWSLETTER_PROVIDER=local to keep subscribers in the database)',
    ],
    ['a port that is not a number', { PORT: 'eighty' }, 'PORT must be a whole number'],
    ['a negative port', { PORT: '-1' }, 'PORT must be a whole number'],
    ['a port out of range', { PORT: '65536' }, 'PORT must be at most 65535'],
    [
      'a base URL that is not a URL',
      { MAILCHIMP_API_KEY: 'a-us1', MAILCHIMP_LIST_ID: 'l', MAILCHIMP_API_BASE_URL: 'nope' },
      'MAILCHIMP_API_BASE_URL must be an absolute http(s) URL',
    ],
    [
      'an allowed origin that is not a URL',
      { ALLOWED_ORIGINS: 'example.com' },
      'ALLOWED_ORIGINS must be a comma-separated list of origins such as https://example.com',
    ],
    [
      'an allowed origin of another scheme',
      { ALLOWED_ORIGINS: 'https://a.example,ftp://b.example' },
      'ALLOWED_ORIGINS must be a comma-separated list of origins such as https://example.com',
    ],
    // An opaque origin is every sandboxed frame's and file's: never one to allow (decision 0143).
    [
      'the opaque origin null as an allowed origin',
      { ALLOWED_ORIGINS: 'https://a.example,null' },
      'ALLOWED_ORIGINS must be a comma-separated list of origins such as https://example.com',
    ],
    ['a proxy count out of range', { TRUST_PROXY: '21' }, 'TRUST_PROXY must be at most 20'],
    ['SMTP without a recipient', { SMTP_URL: 'smtp://localhost:25', CONTACT_FROM: 'site@example.com' }, 'CONTACT_TO is required when SMTP_URL is set'],
    ['SMTP without a sender', { SMTP_URL: 'smtp://localhost:25', CONTACT_TO: 'owner@example.com' }, 'CONTACT_FROM is required when SMTP_URL is set'],
    [
      'SMTP with a blank sender',
      { SMTP_URL: 'smtp://localhost:25', CONTACT_TO: 'owner@example.com', CONTACT_FROM: ' ' },
      'CONTACT_FROM is required when SMTP_URL is set',
    ],
    ['an SMTP URL of another scheme', { SMTP_URL: 'http://localhost' }, 'SMTP_URL must start with smtp:// or smtps://'],
    ['an SMTP URL that is not a URL', { SMTP_URL: 'mail.example.com' }, 'SMTP_URL must be a URL such as smtp://user:pass@smtp.example.com:587'],
    [
      'a recipient that is not an address',
      { SMTP_URL: 'smtp://localhost:25', CONTACT_TO: 'owner', CONTACT_FROM: 'site@example.com' },
      'CONTACT_TO must be an email address',
    ],
    [
      'a sender that is not an address',
      { SMTP_URL: 'smtp://localhost:25', CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'Site <site@example.com>' },
      'CONTACT_FROM must be an email address',
    ],
    ['a retry delay that is not a number', { DELIVERY_RETRY_BASE_MS: '30s' }, 'DELIVERY_RETRY_BASE_MS must be a whole number'],
    ['a retry delay of zero', { DELIVERY_RETRY_BASE_MS: '0' }, 'DELIVERY_RETRY_BASE_MS must be at least 1'],
    ['a retry delay over an hour', { DELIVERY_RETRY_BASE_MS: '3600001' }, 'DELIVERY_RETRY_BASE_MS must be at most 3600000'],
    ['a negative limit', { RATE_LIMIT_MAX: '-1' }, 'RATE_LIMIT_MAX must be a whole number'],
    ['a limit over a million', { RATE_LIMIT_MAX: '1000001' }, 'RATE_LIMIT_MAX must be at most 1000000'],
    ['a window of zero', { RATE_LIMIT_WINDOW_SECONDS: '0' }, 'RATE_LIMIT_WINDOW_SECONDS must be at least 1'],
    ['a window over 31 days', { RATE_LIMIT_WINDOW_SECONDS: '2678401' }, 'RATE_LIMIT_WINDOW_SECONDS must be at most 2678400'],
    ['a Redis URL of another scheme', { REDIS_URL: 'http://cache:6379' }, 'REDIS_URL must start with redis:// or rediss://'],
    ['a Redis URL that is not a URL', { REDIS_URL: 'cache 6379' }, 'REDIS_URL must be a URL such as redis://127.0.0.1:6379'],
    ['an unknown log level', { LOG_LEVEL: 'verbose' }, 'LOG_LEVEL must be debug, info, warn, error or silent'],
    [
      'a Kit form id with letters after the number',
      { KIT_API_KEY: 'k', KIT_FORM_ID: '1234567abc' },
      "KIT_FORM_ID must be the form's number, such as 1234567 (from the form's address in Kit, not the data-uid of its embed code)",
    ],
    [
      'a Kit form id with letters before the number',
      { KIT_API_KEY: 'k', KIT_FORM_ID: 'abc1234567' },
      "KIT_FORM_ID must be the form's number, such as 1234567 (from the form's address in Kit, not the data-uid of its embed code)",
    ],
    ['Kit with an empty form id', { KIT_API_KEY: 'k', KIT_FORM_ID: '' }, 'KIT_FORM_ID is required when NEWSLETTER_PROVIDER is kit'],
    [
      'a provider address that only mentions http further on',
      { KIT_API_KEY: 'k', KIT_FORM_ID: '1', KIT_API_BASE_URL: 'ftp://kit.example.com/?next=https://kit.example.com' },
      'KIT_API_BASE_URL must be an absolute http(s) URL',
    ],
  ])('refuses %s with one problem naming the variable', (_, env, problem) => {
    expect(problemsOf(env)).toEqual([problem]);
  });

  test.each([
    ['PORT', '0', { port: 0 }],
    ['PORT', '65535', { port: 65535 }],
    ['PORT', ' 8080 ', { port: 8080 }],
    ['HOST', ' 0.0.0.0 ', { host: '0.0.0.0' }],
    ['RATE_LIMIT_MAX', '0', { rateLimit: { max: 0, windowSeconds: 600 } }],
    ['RATE_LIMIT_MAX', '1000000', { rateLimit: { max: 1_000_000, windowSeconds: 600 } }],
    ['RATE_LIMIT_WINDOW_SECONDS', '1', { rateLimit: { max: 5, windowSeconds: 1 } }],
    ['RATE_LIMIT_WINDOW_SECONDS', '2678400', { rateLimit: { max: 5, windowSeconds: 2_678_400 } }],
    ['TRUST_PROXY', '20', { trustProxy: 20 }],
    ['DELIVERY_RETRY_BASE_MS', '1', { delivery: { retryBaseMs: 1 } }],
    ['DELIVERY_RETRY_BASE_MS', '3600000', { delivery: { retryBaseMs: 3_600_000 } }],
    ['REDIS_URL', 'rediss://cache.example.com:6380', { redisUrl: 'rediss://cache.example.com:6380' }],
    ['REDIS_URL', 'REDIS://cache:6379', { redisUrl: 'REDIS://cache:6379' }],
    ['REDIS_URL', '', { redisUrl: undefined }],
    ['LOG_LEVEL', 'silent', { logLevel: 'silent' }],
    ['LOG_LEVEL', 'debug', { logLevel: 'debug' }],
    ['LOG_LEVEL', 'info', { logLevel: 'info' }],
    ['LOG_LEVEL', 'warn', { logLevel: 'warn' }],
    ['LOG_LEVEL', 'error', { logLevel: 'error' }],
    ['SMTP_URL', '', { smtp: undefined }],
    ['ALLOWED_ORIGINS', 'http://a.example, ,https://b.example:8443', { allowedOrigins: ['http://a.example', 'https://b.example:8443'] }],
    ['DATA_DIR', '/var/lib/site-forms', { dataDir: '/var/lib/site-forms' }],
    ['DATA_DIR', 'var/forms', { dataDir: PROJECT.varForms }],
    ['ALLOWED_ORIGINS', ' , ', { allowedOrigins: [] }],
  ])('accepts %s=%j', (name, value, expected) => {
    expect(requireConfig({ [name]: value })).toMatchObject(expected);
  });

  test.each([
    ['an upper-case scheme', { SMTP_URL: 'SMTPS://mail.example.com:465' }, 'SMTPS://mail.example.com:465'],
    ['smtp://', { SMTP_URL: 'smtp://mail.example.com' }, 'smtp://mail.example.com'],
    ['surrounding spaces', { SMTP_URL: ' smtp://mail.example.com ' }, 'smtp://mail.example.com'],
  ])('SMTP_URL with %s is accepted', (_, env, url) => {
    const config = requireConfig({ ...env, CONTACT_TO: 'owner@example.com', CONTACT_FROM: ' site@example.com ' });
    expect(config.smtp).toMatchObject({ url, to: 'owner@example.com', from: 'site@example.com' });
  });

  test.each([
    ['several trailing slashes', 'http://127.0.0.1:9/v3//', 'http://127.0.0.1:9/v3'],
    ['an empty value, which means the default', '', 'https://api.convertkit.com/v3'],
    ['https', 'https://kit.example.com/v3', 'https://kit.example.com/v3'],
  ])('a provider address with %s', (_, value, baseUrl) => {
    expect(requireConfig({ KIT_API_KEY: 'k', KIT_FORM_ID: '1', KIT_API_BASE_URL: value }).newsletter).toEqual({
      provider: 'kit',
      kit: { apiKey: 'k', formId: '1', baseUrl, version: 'v3' },
    });
  });

  test.each([
    ["unset: the spec's v3 call", {}, { version: 'v3', baseUrl: 'https://api.convertkit.com/v3' }],
    ["v4: Kit's current API at its own address", { KIT_API_VERSION: 'v4' }, { version: 'v4', baseUrl: 'https://api.kit.com/v4' }],
    ['V4 in capitals', { KIT_API_VERSION: 'V4' }, { version: 'v4', baseUrl: 'https://api.kit.com/v4' }],
    ['v4 at another address', { KIT_API_VERSION: 'v4', KIT_API_BASE_URL: 'http://127.0.0.1:9/v4' }, { version: 'v4', baseUrl: 'http://127.0.0.1:9/v4' }],
  ])('KIT_API_VERSION %s', (_, env, kit) => {
    expect(requireConfig({ KIT_API_KEY: 'k', KIT_FORM_ID: '1', ...env }).newsletter).toEqual({ provider: 'kit', kit: { apiKey: 'k', formId: '1', ...kit } });
  });

  test('KIT_API_VERSION other than v3 or v4 stops the start, naming the variable', () => {
    expect(problemsOf({ KIT_API_KEY: 'k', KIT_FORM_ID: '1', KIT_API_VERSION: 'v5' })).toEqual(['KIT_API_VERSION must be v3 or v4']);
  });

  test.each([
    ['a segment', { RESEND_SEGMENT_ID: 'seg-1' }, { kind: 'segment', id: 'seg-1' }],
    ['an audience (deprecated by Resend)', { RESEND_AUDIENCE_ID: 'aud-1' }, { kind: 'audience', id: 'aud-1' }],
  ])('Resend adds contacts to %s', (_, env, target) => {
    expect(requireConfig({ RESEND_API_KEY: 're_1', ...env }).newsletter).toEqual({
      provider: 'resend',
      resend: { apiKey: 're_1', target, baseUrl: 'https://api.resend.com' },
    });
  });

  test.each([
    ['neither a segment nor an audience', {}, 'RESEND_SEGMENT_ID (or the deprecated RESEND_AUDIENCE_ID) is required when NEWSLETTER_PROVIDER is resend'],
    [
      'both a segment and an audience',
      { RESEND_SEGMENT_ID: 's', RESEND_AUDIENCE_ID: 'a' },
      'RESEND_SEGMENT_ID and RESEND_AUDIENCE_ID are both set: keep RESEND_SEGMENT_ID (audiences are deprecated)',
    ],
  ])('Resend with %s stops the start', (_, env, problem) => {
    expect(problemsOf({ RESEND_API_KEY: 're_1', ...env })).toEqual([problem]);
  });

  test.each([
    ['RESEND_SEGMENT_ID', { RESEND_SEGMENT_ID: 's' }],
    ['RESEND_AUDIENCE_ID', { RESEND_AUDIENCE_ID: 'a' }],
  ])('%s without RESEND_API_KEY is a provider half set up', (name, env) => {
    expect(problemsOf(env)).toEqual([`RESEND_API_KEY is required when ${name} is set (or set NEWSLETTER_PROVIDER=local to keep subscribers in the database)`]);
  });

  test('lists every problem of every concern at once, one line each', () => {
    expect(problemsOf({ PORT: 'x', NEWSLETTER_PROVIDER: 'kit', SMTP_URL: 'smtp://localhost', LOG_LEVEL: 'loud' })).toEqual([
      'PORT must be a whole number',
      'KIT_API_KEY is required when NEWSLETTER_PROVIDER is kit',
      'KIT_FORM_ID is required when NEWSLETTER_PROVIDER is kit',
      'CONTACT_TO is required when SMTP_URL is set',
      'CONTACT_FROM is required when SMTP_URL is set',
      'LOG_LEVEL must be debug, info, warn, error or silent',
    ]);
  });

  test('a malformed variable is one problem, not also a missing one', () => {
    expect(problemsOf({ SMTP_URL: 'smtp://localhost:25', CONTACT_TO: 'owner', CONTACT_FROM: 'site' })).toEqual([
      'CONTACT_TO must be an email address',
      'CONTACT_FROM must be an email address',
    ]);
  });

  test('SMTP_URL with CONTACT_TO and CONTACT_FROM turns email delivery on, smtps:// included', () => {
    expect(
      requireConfig({ SMTP_URL: 'smtps://user:pass@smtp.example.com:465', CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'site@example.com' }).smtp,
    ).toEqual({
      url: 'smtps://user:pass@smtp.example.com:465',
      to: 'owner@example.com',
      from: 'site@example.com',
      tls: { rejectUnauthorized: true },
    });
    expect(requireConfig({ CONTACT_TO: 'owner@example.com' }).smtp).toBeUndefined();
  });

  test('DELIVERY_RETRY_BASE_MS shortens the first retry delay (a knob for tests and impatient owners)', () => {
    expect(requireConfig({ DELIVERY_RETRY_BASE_MS: '250' }).delivery).toEqual({ retryBaseMs: 250, leaseMs: 120_000, maxAttempts: 40 });
  });

  test('parses ALLOWED_ORIGINS into origins', () => {
    expect(requireConfig({ ALLOWED_ORIGINS: 'https://a.example, https://b.example/path/' }).allowedOrigins).toEqual(['https://a.example', 'https://b.example']);
  });
});

describe('secrets in what the configuration prints', () => {
  test('requireConfig throws a ConfigError listing each problem on its own line', () => {
    expect(() => requireConfig({ MAILCHIMP_API_KEY: 'super-secret-key-us21', PORT: 'x' })).toThrow(
      new ConfigError(['PORT must be a whole number', 'MAILCHIMP_LIST_ID is required when NEWSLETTER_PROVIDER is mailchimp']),
    );
    const error = new ConfigError(['PORT must be a whole number', 'LOG_LEVEL must be debug, info, warn, error or silent']);
    expect(error.message).toBe('Invalid configuration:\n  - PORT must be a whole number\n  - LOG_LEVEL must be debug, info, warn, error or silent');
    expect(error.name).toBe('ConfigError');
  });

  // Each value holds a password or token ("hunter2", "pm-token-9f8e"): none may reach the message.
  test.each([
    [
      'an SMTP URL that does not parse',
      { SMTP_URL: 'smtp://pm-token-9f8e:hunter2@[mail.example.com' },
      'SMTP_URL must be a URL such as smtp://user:pass@smtp.example.com:587',
    ],
    [
      'an SMTP URL with a space',
      { SMTP_URL: 'smtp://pm-token-9f8e:hunter2@mail example.com:587' },
      'SMTP_URL must be a URL such as smtp://user:pass@smtp.example.com:587',
    ],
    ['an SMTP URL of another scheme', { SMTP_URL: 'https://pm-token-9f8e:hunter2@mail.example.com' }, 'SMTP_URL must start with smtp:// or smtps://'],
    ['a Redis URL that does not parse', { REDIS_URL: 'redis://pm-token-9f8e:hunter2@[cache' }, 'REDIS_URL must be a URL such as redis://127.0.0.1:6379'],
    ['a Redis URL of another scheme', { REDIS_URL: 'tcp://pm-token-9f8e:hunter2@cache:6379' }, 'REDIS_URL must start with redis:// or rediss://'],
    [
      'a provider address that does not parse',
      { KIT_API_KEY: 'k', KIT_FORM_ID: '1', KIT_API_BASE_URL: 'https://pm-token-9f8e:hunter2@[kit' },
      'KIT_API_BASE_URL must be an absolute http(s) URL',
    ],
    [
      'a provider address of another scheme',
      { KIT_API_KEY: 'k', KIT_FORM_ID: '1', KIT_API_BASE_URL: 'ftp://pm-token-9f8e:hunter2@kit.example.com' },
      'KIT_API_BASE_URL must be an absolute http(s) URL',
    ],
    [
      'a form id that is a key',
      { KIT_API_KEY: 'k', KIT_FORM_ID: 'pm-token-9f8e-hunter2' },
      "KIT_FORM_ID must be the form's number, such as 1234567 (from the form's address in Kit, not the data-uid of its embed code)",
    ],
    ['a provider name that is a key', { NEWSLETTER_PROVIDER: 'pm-token-9f8e-hunter2' }, 'NEWSLETTER_PROVIDER must be one of mailchimp, kit, resend, local'],
    [
      'an origin holding a password',
      { ALLOWED_ORIGINS: 'ftp://pm-token-9f8e:hunter2@example.com' },
      'ALLOWED_ORIGINS must be a comma-separated list of origins such as https://example.com',
    ],
    ['a port that is a password', { PORT: 'pm-token-9f8e-hunter2' }, 'PORT must be a whole number'],
    ['a log level that is a password', { LOG_LEVEL: 'pm-token-9f8e-hunter2' }, 'LOG_LEVEL must be debug, info, warn, error or silent'],
    [
      'a recipient that is a password',
      { SMTP_URL: 'smtp://localhost', CONTACT_TO: 'pm-token-9f8e:hunter2', CONTACT_FROM: 'site@example.com' },
      'CONTACT_TO must be an email address',
    ],
  ])('%s: the problem names the variable and not its value', (_, env, problem) => {
    expect(() => requireConfig(env)).toThrow(`Invalid configuration:\n  - ${problem}`);
    expect(problemsOf(env)).toEqual([problem]);
  });

  test('the start-up description masks keys and the user name and password of every URL', () => {
    const config = requireConfig({
      HOST: '0.0.0.0',
      PORT: '8080',
      DATA_DIR: '/var/lib/site-forms',
      ALLOWED_ORIGINS: 'https://blog.example.com',
      TRUST_PROXY: '1',
      PUBLIC_URL: 'https://www.example.com',
      MAILCHIMP_API_KEY: '0123456789abcdef-us21',
      MAILCHIMP_LIST_ID: 'list1',
      MAILCHIMP_API_BASE_URL: 'https://proxy-user:proxy-pass@proxy.example.com/3.0',
      SMTP_URL: 'smtp://pm-token-9f8e:hunter2@smtp.postmarkapp.com:587',
      CONTACT_TO: 'owner@example.com',
      CONTACT_FROM: 'site@example.com',
      REDIS_URL: 'redis://default:redis-pass@cache.example.com:6379',
      RATE_LIMIT_MAX: '10',
      LOG_LEVEL: 'warn',
      S3_ENDPOINT: 'https://s3-user:s3-pass@objects.example.com',
      S3_BUCKET: 'site-files',
      S3_ACCESS_KEY_ID: 'AKIA-site-forms-key',
      S3_SECRET_ACCESS_KEY: 's3-secret-hunter2',
    });
    expect(describeConfig(config)).toEqual({
      host: '0.0.0.0',
      port: 8080,
      dataDir: '/var/lib/site-forms',
      requestTimeoutMs: 30_000,
      database: { sqlite: 'forms.db in DATA_DIR', lockTimeoutMs: 5_000 },
      allowedOrigins: ['https://blog.example.com'],
      trustProxy: 1,
      publicUrl: 'https://www.example.com',
      newsletterProvider: 'mailchimp',
      newsletterChoice: 'inferred',
      newsletterQueueOnOutage: false,
      mailchimp: { apiKey: '…us21', listId: 'list1', baseUrl: 'https://***:***@proxy.example.com/3.0' },
      smtp: { url: 'smtp://***:***@smtp.postmarkapp.com:587', to: 'owner@example.com', from: 'site@example.com', certificate: 'checked' },
      deliveryRetryBaseMs: 30_000,
      deliveryLeaseMs: 120_000,
      deliveryMaxAttempts: 40,
      rateLimit: { max: 10, windowSeconds: 600 },
      apiRateLimitPerMinute: 120,
      redisUrl: 'redis://***:***@cache.example.com:6379',
      logLevel: 'warn',
      logClientLines: 'limited',
      spamFilter: { maxLinks: 2, retentionDays: 30, newsletterRequiresProof: false, threshold: 2, weights: {} },
      admin: 'off (set ADMIN_PASSWORD_HASH to turn it on)',
      retentionDays: 'off (messages are kept until deleted)',
      passkeys: 'on for www.example.com',
      webhooks: 'off',
      autoReply: 'off',
      newsletterDoubleOptIn: false,
      uploads: {
        maxTotalBytes: 26_214_400,
        diskMinFreeBytes: 536_870_912,
        timeoutMs: 300_000,
        storage: { s3: 'https://objects.example.com', bucket: 'site-files', region: 'us-east-1' },
        virusScan: 'off',
      },
      mailAttachMaxBytes: 10_485_760,
      fileLinkLifetimeSeconds: 604_800,
    });
  });

  test.each([
    [
      'Kit',
      { KIT_API_KEY: 'kit-key-abcdef123456', KIT_FORM_ID: '1234567' },
      { kit: { apiKey: '…3456', formId: '1234567', version: 'v3', baseUrl: 'https://api.convertkit.com/v3' } },
    ],
    [
      'Resend',
      { RESEND_API_KEY: 're_short', RESEND_AUDIENCE_ID: 'aud-1' },
      { resend: { apiKey: '***', audienceId: 'aud-1', baseUrl: 'https://api.resend.com' } },
    ],
    ['no SMTP, no limits, no Redis', { RATE_LIMIT_MAX: '0' }, { smtp: 'off (messages are stored, not sent)', rateLimit: 'off', redisUrl: undefined }],
    [
      'an SMTP user name without a password',
      { SMTP_URL: 'smtp://pm-token-9f8e@mail.example.com', CONTACT_TO: 'o@example.com', CONTACT_FROM: 's@example.com' },
      { smtp: { url: 'smtp://***@mail.example.com', to: 'o@example.com', from: 's@example.com' } },
    ],
  ])('the start-up description of %s', (_, env, expected) => {
    expect(describeConfig(requireConfig(env))).toMatchObject(expected);
  });

  test('the description of a local-provider configuration names no provider settings', () => {
    const description = describeConfig(requireConfig({}));
    expect(Object.keys(description)).toEqual([
      'host',
      'port',
      'dataDir',
      'requestTimeoutMs',
      'database',
      'allowedOrigins',
      'trustProxy',
      'publicUrl',
      'contactEndpointOrigin',
      'newsletterProvider',
      'newsletterChoice',
      'newsletterQueueOnOutage',
      'smtp',
      'deliveryRetryBaseMs',
      'deliveryLeaseMs',
      'deliveryMaxAttempts',
      'rateLimit',
      'apiRateLimitPerMinute',
      'redisUrl',
      'logLevel',
      'logClientLines',
      'spamFilter',
      'admin',
      'retentionDays',
      'passkeys',
      'webhooks',
      'autoReply',
      'newsletterDoubleOptIn',
      'uploads',
      'mailAttachMaxBytes',
      'fileLinkLifetimeSeconds',
    ]);
  });
});
