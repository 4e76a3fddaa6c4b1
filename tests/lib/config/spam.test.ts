import { describe, expect, test } from 'vitest';
import { spam } from '../../../packages/site-forms/src/lib/config/spam.ts';
import { DEFAULT_WEIGHTS } from '../../../packages/site-forms/src/lib/spam/weights.ts';

const read = (env: Record<string, string>) => spam.read(env);
const WEIGHTS_PROBLEM =
  'SPAM_WEIGHTS must be a comma-separated list of reason=weight (0 to 100), reasons among: proof-missing, proof-expired, too-fast, no-browser, proof-malformed, proof-forged, proof-wrong, proof-replayed, too-many-links, link-in-name, link-markup, turnstile-failed, akismet-spam';

describe('the spam filter’s configuration', () => {
  test('with nothing set the filter is on, with the documented defaults and no outside check', () => {
    expect(read({})).toEqual({
      config: {
        spam: {
          enabled: true,
          maxLinks: 2,
          retentionDays: 30,
          turnstile: undefined,
          akismet: undefined,
          newsletterRequiresProof: false,
          weighing: { weights: DEFAULT_WEIGHTS, threshold: 2 },
        },
      },
      problems: [],
    });
  });

  test('every variable set', () => {
    expect(
      read({
        SPAM_FILTER: 'OFF',
        SPAM_MAX_LINKS: '0',
        SPAM_RETENTION_DAYS: '7',
        TURNSTILE_SITE_KEY: '1x00000000000000000000AA',
        TURNSTILE_SECRET_KEY: '1x0000000000000000000000000000000AA',
        AKISMET_API_KEY: 'abcdef123456',
        AKISMET_BASE_URL: 'http://127.0.0.1:9999/',
        NEWSLETTER_REQUIRE_PROOF: 'true',
        SPAM_THRESHOLD: '3',
        SPAM_WEIGHTS: 'too-fast=0, no-browser:2',
        DIGEST_TIME: '07:05',
      }).config.spam,
    ).toEqual({
      enabled: false,
      maxLinks: 0,
      retentionDays: 7,
      turnstile: { siteKey: '1x00000000000000000000AA', secretKey: '1x0000000000000000000000000000000AA', baseUrl: 'https://challenges.cloudflare.com' },
      akismet: { apiKey: 'abcdef123456', baseUrl: 'http://127.0.0.1:9999' },
      newsletterRequiresProof: true,
      weighing: { weights: { ...DEFAULT_WEIGHTS, 'too-fast': 0, 'no-browser': 2 }, threshold: 3 },
      digestTime: { hour: 7, minute: 5 },
    });
  });

  test.each([
    [{ SPAM_FILTER: 'maybe' }, 'SPAM_FILTER must be on or off'],
    [{ SPAM_MAX_LINKS: 'two' }, 'SPAM_MAX_LINKS must be a whole number'],
    [{ SPAM_MAX_LINKS: '1001' }, 'SPAM_MAX_LINKS must be at most 1000'],
    [{ SPAM_RETENTION_DAYS: '0' }, 'SPAM_RETENTION_DAYS must be at least 1'],
    [{ SPAM_RETENTION_DAYS: '3651' }, 'SPAM_RETENTION_DAYS must be at most 3650'],
    [{ NEWSLETTER_REQUIRE_PROOF: 'yes' }, 'NEWSLETTER_REQUIRE_PROOF must be true or false'],
    [{ TURNSTILE_SITE_KEY: 'site' }, 'TURNSTILE_SECRET_KEY is required when TURNSTILE_SITE_KEY is set'],
    [{ TURNSTILE_SECRET_KEY: 'secret' }, 'TURNSTILE_SITE_KEY is required when TURNSTILE_SECRET_KEY is set'],
    [{ AKISMET_BASE_URL: 'ftp://x' }, 'AKISMET_BASE_URL must be an absolute http(s) URL'],
    [{ SPAM_THRESHOLD: '0' }, 'SPAM_THRESHOLD must be at least 1'],
    [{ DIGEST_TIME: '7:30' }, 'DIGEST_TIME must be a time of day in UTC as HH:MM, such as 07:30'],
    [{ DIGEST_TIME: '24:00' }, 'DIGEST_TIME must be a time of day in UTC as HH:MM, such as 07:30'],
    [{ SPAM_WEIGHTS: 'too-slow=1' }, WEIGHTS_PROBLEM],
    [{ SPAM_WEIGHTS: 'too-fast=101' }, WEIGHTS_PROBLEM],
    [{ SPAM_WEIGHTS: 'too-fast=-1' }, WEIGHTS_PROBLEM],
    [{ SPAM_WEIGHTS: 'too-fast' }, WEIGHTS_PROBLEM],
  ])('%j is refused: %s', (env, problem) => {
    expect(read(env).problems).toEqual([problem]);
  });

  test('half a Turnstile set-up turns Turnstile off', () => {
    expect(read({ TURNSTILE_SITE_KEY: 'site' }).config.spam.turnstile).toBeUndefined();
  });

  test.each([
    ['the defaults', {}, { spamFilter: { maxLinks: 2, retentionDays: 30, newsletterRequiresProof: false, threshold: 2, weights: {} } }],
    ['the filter off', { SPAM_FILTER: 'off' }, { spamFilter: 'off' }],
    [
      'the weights the owner changed',
      { SPAM_WEIGHTS: 'too-fast=0', SPAM_THRESHOLD: '3', DIGEST_TIME: '18:00' },
      { spamFilter: { maxLinks: 2, retentionDays: 30, digestTime: '18:00 UTC', newsletterRequiresProof: false, threshold: 3, weights: { 'too-fast': 0 } } },
    ],
    [
      'the outside checks, keys masked',
      { TURNSTILE_SITE_KEY: 'site-key-public', TURNSTILE_SECRET_KEY: 'secret-key-0123456789', AKISMET_API_KEY: 'akismet-key-abcd' },
      {
        spamFilter: { maxLinks: 2, retentionDays: 30, newsletterRequiresProof: false, threshold: 2, weights: {} },
        turnstile: { siteKey: 'site-key-public', secretKey: '…6789' },
        akismet: { apiKey: '…abcd' },
      },
    ],
  ])('the start-up log describes %s', (_, env, expected) => {
    expect(spam.describe(read(env).config)).toStrictEqual(expected);
  });
});
