import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { describe, expect, test } from 'vitest';
import type { SpamConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createSpamService } from '../../../packages/site-forms/src/lib/spam/service.ts';
import { createMemoryUsedChallenges } from '../../../packages/site-forms/src/lib/spam/used-challenges.ts';
import { SPAM_ON } from '../../support/fake-spam-services.ts';

const DEFAULTS = SPAM_ON;
/** What a subscriber without a proof reads: what to do about it. */
const REFUSED = 'We could not confirm that this came from our signup form. Please turn on JavaScript for this site, reload the page and try again.';
const TURNSTILE = { siteKey: '1x00000000000000000000AA', secretKey: '1x0000000000000000000000000000000AA', baseUrl: 'http://127.0.0.1:9' };

const service = (config: Partial<SpamConfig['spam']> = {}) =>
  createSpamService(
    { ...DEFAULTS, ...config },
    { secret: 's3cret', used: createMemoryUsedChallenges(), logger: silentLogger, blog: 'https://www.example.com' },
  );

async function solved(spam: ReturnType<typeof service>): Promise<string> {
  const { challenge } = await spam.challenge();
  const solution = await solveChallenge({ challenge, deriveKey });
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
}

describe('the spam service', () => {
  test('a challenge answer is JSON with success and the challenge, without Turnstile when not configured', async () => {
    const body = await service().challenge();
    expect(Object.keys(body)).toEqual(['success', 'challenge']);
    expect(body.success).toBe(true);
    expect(body.challenge.parameters.algorithm).toBe('SHA-256');
  });

  test('with Turnstile configured the answer names the site key', async () => {
    await expect(service({ turnstile: TURNSTILE }).challenge()).resolves.toMatchObject({ success: true, turnstileSiteKey: '1x00000000000000000000AA' });
  });

  test('with the filter off the page is not asked to show Turnstile', async () => {
    expect(await service({ enabled: false, turnstile: TURNSTILE }).challenge()).not.toHaveProperty('turnstileSiteKey');
  });

  test('only the configured services exist', () => {
    expect(service().akismet).toBeUndefined();
    expect(service({ akismet: { apiKey: 'k', baseUrl: 'http://127.0.0.1:9' } }).akismet).toBeDefined();
  });

  test('a contact message without a proof is judged; with the filter off it is not', async () => {
    const message = { name: 'Ada', email: 'a@example.com', message: 'Hello there, friend.', proof: undefined, ip: '127.0.0.1', browser: false };
    await expect(service().judge(message)).resolves.toEqual({ spam: true, reasons: ['proof-missing', 'no-browser'], confirmable: true });
    await expect(service().judge({ ...message, browser: true })).resolves.toEqual({ spam: false, reasons: ['proof-missing'], confirmable: true });
    await expect(service({ enabled: false }).judge(message)).resolves.toEqual({ spam: false, reasons: [] });
  });

  test.each([
    ['by default, without a proof', {}, {}, { ok: true }],
    ['with NEWSLETTER_REQUIRE_PROOF, without a proof', { newsletterRequiresProof: true }, {}, { ok: false, error: REFUSED }],
    ['with NEWSLETTER_REQUIRE_PROOF, with a proof that is not one', { newsletterRequiresProof: true }, { altcha: 'bogus' }, { ok: false, error: REFUSED }],
    ['with NEWSLETTER_REQUIRE_PROOF but the filter off', { newsletterRequiresProof: true, enabled: false }, {}, { ok: true }],
  ])('a subscription %s may go on: %j', async (_, config, fields, expected) => {
    await expect(service(config).allowSubscription(fields)).resolves.toEqual(expected);
  });

  test('with NEWSLETTER_REQUIRE_PROOF a solved proof lets a subscription on once, at once (no time to submit)', async () => {
    const spam = service({ newsletterRequiresProof: true });
    const altcha = await solved(spam);
    await expect(spam.allowSubscription({ altcha })).resolves.toEqual({ ok: true });
    await expect(spam.allowSubscription({ altcha })).resolves.toEqual({ ok: false, error: REFUSED });
  });
});

describe('the signing secret', () => {
  test('is loaded once, when first needed, and a failed load is tried again', async () => {
    let loads = 0;
    const spam = createSpamService(DEFAULTS, {
      secret: async () => {
        loads += 1;
        if (loads === 1) throw new Error('database down');
        return 'from-the-database';
      },
      used: createMemoryUsedChallenges(),
      logger: silentLogger,
      blog: 'https://www.example.com',
    });
    expect(loads).toBe(0);
    await expect(spam.challenge()).rejects.toThrow('database down');
    await spam.challenge();
    await spam.challenge();
    expect(loads).toBe(2);
  });

  test('prepared at start, it signs challenges while the database is down afterwards', async () => {
    let databaseUp = true;
    let loads = 0;
    const spam = createSpamService(DEFAULTS, {
      secret: async () => {
        loads += 1;
        if (!databaseUp) throw new Error('database down');
        return 'from-the-database';
      },
      used: createMemoryUsedChallenges(),
      logger: silentLogger,
      blog: 'https://www.example.com',
    });
    await spam.prepare();
    databaseUp = false;
    await expect(spam.challenge()).resolves.toMatchObject({ success: true, challenge: { parameters: expect.any(Object) } });
    expect(loads).toBe(1);
  });

  test('is not loaded when the filter is off', async () => {
    let loads = 0;
    const spam = createSpamService(
      { ...DEFAULTS, enabled: false },
      { secret: async () => `${++loads}`, used: createMemoryUsedChallenges(), logger: silentLogger, blog: 'https://www.example.com' },
    );
    await spam.judge({ name: 'Ada', email: 'a@example.com', message: 'Hello there, friend.', proof: undefined, ip: '127.0.0.1', browser: true });
    await spam.allowSubscription({});
    await spam.prepare();
    expect(loads).toBe(0);
  });
});
