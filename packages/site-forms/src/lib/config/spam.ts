import * as v from 'valibot';
import type { SpamConfig, TurnstileConfig } from '../spam/filter-settings.ts';
import { DEFAULT_THRESHOLD, DEFAULT_WEIGHTS, type WeighedReason } from '../spam/weights.ts';
import { mask } from './secrets.ts';
import { type ConfigConcern, integer, optionalText, optionalUrl, readVariables } from './variables.ts';

export type { SpamConfig, TurnstileConfig };

const VARIABLES = {
  SPAM_FILTER: v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.picklist(['on', 'off'], 'must be on or off')), 'on'),
  SPAM_MAX_LINKS: v.optional(integer(0, 1000), '2'),
  SPAM_RETENTION_DAYS: v.optional(integer(1, 3650), '30'),
  TURNSTILE_SITE_KEY: optionalText,
  TURNSTILE_SECRET_KEY: optionalText,
  TURNSTILE_BASE_URL: optionalUrl,
  AKISMET_API_KEY: optionalText,
  AKISMET_BASE_URL: optionalUrl,
  DIGEST_TIME: v.optional(v.pipe(v.string(), v.trim()), ''),
  SPAM_THRESHOLD: v.optional(integer(1, 100), String(DEFAULT_THRESHOLD)),
  SPAM_WEIGHTS: v.optional(v.pipe(v.string(), v.trim()), ''),
  NEWSLETTER_REQUIRE_PROOF: v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.picklist(['true', 'false'], 'must be true or false')), 'false'),
};

/**
 * `SPAM_WEIGHTS`: the default weights with the owner's changes (`too-fast=0,link-markup=1`);
 * `undefined` when a reason is unknown or a weight is not a whole number from 0 to 100.
 */
export function parseWeights(text: string): Record<WeighedReason, number> | undefined {
  const weights = { ...DEFAULT_WEIGHTS };
  for (const item of text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const match = /^([a-z-]+)\s*[=:]\s*(\d{1,3})$/.exec(item);
    if (!match || !(match[1]! in DEFAULT_WEIGHTS) || Number(match[2]) > 100) return undefined;
    weights[match[1] as WeighedReason] = Number(match[2]);
  }
  return weights;
}

/** SPAM_FILTER, SPAM_MAX_LINKS, SPAM_RETENTION_DAYS, SPAM_THRESHOLD, SPAM_WEIGHTS, TURNSTILE_*, AKISMET_* and NEWSLETTER_REQUIRE_PROOF. */
export const spam: ConfigConcern<SpamConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    // One Turnstile key without the other is a set-up half done: the widget without a check
    // proves nothing, and a check without the widget would hold every message.
    if (e.TURNSTILE_SITE_KEY && !e.TURNSTILE_SECRET_KEY) problems.push('TURNSTILE_SECRET_KEY is required when TURNSTILE_SITE_KEY is set');
    if (e.TURNSTILE_SECRET_KEY && !e.TURNSTILE_SITE_KEY) problems.push('TURNSTILE_SITE_KEY is required when TURNSTILE_SECRET_KEY is set');
    const turnstile =
      e.TURNSTILE_SITE_KEY && e.TURNSTILE_SECRET_KEY
        ? { siteKey: e.TURNSTILE_SITE_KEY, secretKey: e.TURNSTILE_SECRET_KEY, baseUrl: e.TURNSTILE_BASE_URL || 'https://challenges.cloudflare.com' }
        : undefined;
    const weights = parseWeights(e.SPAM_WEIGHTS);
    if (!weights)
      problems.push(`SPAM_WEIGHTS must be a comma-separated list of reason=weight (0 to 100), reasons among: ${Object.keys(DEFAULT_WEIGHTS).join(', ')}`);
    const time = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(e.DIGEST_TIME);
    if (e.DIGEST_TIME && !time) problems.push('DIGEST_TIME must be a time of day in UTC as HH:MM, such as 07:30');
    const akismet = e.AKISMET_API_KEY ? { apiKey: e.AKISMET_API_KEY, baseUrl: e.AKISMET_BASE_URL || 'https://rest.akismet.com' } : undefined;
    return {
      config: {
        spam: {
          enabled: e.SPAM_FILTER === 'on',
          maxLinks: e.SPAM_MAX_LINKS,
          retentionDays: e.SPAM_RETENTION_DAYS,
          turnstile,
          akismet,
          newsletterRequiresProof: e.NEWSLETTER_REQUIRE_PROOF === 'true',
          weighing: { weights: weights ?? DEFAULT_WEIGHTS, threshold: e.SPAM_THRESHOLD },
          digestTime: time ? { hour: Number(time[1]), minute: Number(time[2]) } : undefined,
        },
      },
      problems,
    };
  },
  describe: ({ spam: s }) => ({
    spamFilter: s.enabled
      ? {
          maxLinks: s.maxLinks,
          retentionDays: s.retentionDays,
          ...(s.digestTime && { digestTime: `${String(s.digestTime.hour).padStart(2, '0')}:${String(s.digestTime.minute).padStart(2, '0')} UTC` }),
          newsletterRequiresProof: s.newsletterRequiresProof,
          threshold: s.weighing.threshold,
          // Only what the owner changed: the defaults are in docs/guide.md (Spam).
          weights: Object.fromEntries(Object.entries(s.weighing.weights).filter(([reason, weight]) => DEFAULT_WEIGHTS[reason as WeighedReason] !== weight)),
        }
      : 'off',
    ...(s.turnstile && { turnstile: { siteKey: s.turnstile.siteKey, secretKey: mask(s.turnstile.secretKey) } }),
    ...(s.akismet && { akismet: { apiKey: mask(s.akismet.apiKey) } }),
  }),
};
