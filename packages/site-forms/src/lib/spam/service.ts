import type { Challenge } from 'altcha-lib';
import { texts } from '../i18n/texts.ts';
import type { SpamConfig } from './filter-settings.ts';
import type { Logger } from '../log.ts';
import { createAkismetClient } from './akismet.ts';
import { readConfirmation, signConfirmation } from './confirmation.ts';
import { checkProof, issueChallenge, PROOF_FIELD } from './proof.ts';
import { createTurnstileClient } from './turnstile.ts';
import type { UsedChallenges } from './used-challenges.ts';
import { judgeContact, type SpamFilter, type Submission, type Verdict } from './verdict.ts';

/** The answer of GET /api/challenge: a fresh challenge, and Turnstile's site key when configured. */
export type ChallengeBody = { success: true; challenge: Challenge; turnstileSiteKey?: string };

/** What a newsletter subscription without a valid proof is told (`NEWSLETTER_REQUIRE_PROOF=true`). */
export const NEWSLETTER_PROOF_ERROR = texts.refusals.proofMissing;

/** The spam filter as the handlers use it. */
export interface SpamService {
  /** The settings it was built from. */
  readonly config: SpamConfig['spam'];
  readonly akismet: SpamFilter['akismet'];
  /** A new challenge for the page's script. */
  challenge(): Promise<ChallengeBody>;
  /** Loads the signing secret now (at start), so challenges are signed even while the database is down later. */
  prepare(): Promise<void>;
  /** The verdict on a contact message (clean when the filter is off). */
  judge(submission: Submission): Promise<Verdict>;
  /** The token of the page that asks a person without JavaScript to confirm their held message. */
  confirmationFor(id: number): Promise<string>;
  /** The held message a confirmation token stands for, or `undefined` when it is not a good one. */
  confirmed(token: unknown): Promise<number | undefined>;
  /** Whether a subscription may go on: always, unless NEWSLETTER_REQUIRE_PROOF and its proof fails. */
  allowSubscription(fields: Record<string, unknown>): Promise<{ ok: true } | { ok: false; error: string }>;
}

/**
 * What the service needs besides its settings: the signing secret (a string, or how to load
 * it from the database the first time it is needed), the used-challenge record, the site's address.
 */
export type SpamServiceDeps = { secret: string | (() => Promise<string>); used: UsedChallenges; logger: Logger; blog: string; now?: () => number };

/** Builds the spam filter of a deployment from its configuration. */
export function createSpamService(config: SpamConfig['spam'], { secret, used, logger, blog, now = Date.now }: SpamServiceDeps): SpamService {
  const akismet = config.akismet && createAkismetClient({ apiKey: config.akismet.apiKey, baseUrl: config.akismet.baseUrl, blog });
  let loaded: Promise<string> | undefined;
  // Loaded once; a failure (the database is down) is not remembered, so the next request tries again.
  const signingSecret = (): Promise<string> => {
    if (typeof secret === 'string') return Promise.resolve(secret);
    loaded ??= secret().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    });
    return loaded;
  };
  const filter: Omit<SpamFilter, 'secret'> = {
    enabled: config.enabled,
    maxLinks: config.maxLinks,
    weighing: config.weighing,
    turnstile: config.turnstile && createTurnstileClient({ secret: config.turnstile.secretKey, baseUrl: config.turnstile.baseUrl }),
    akismet,
    logger,
    now,
  };
  const siteKey = config.enabled ? config.turnstile?.siteKey : undefined;
  return {
    config,
    akismet,
    async challenge() {
      const challenge = await issueChallenge({ secret: await signingSecret(), now });
      return siteKey ? { success: true, challenge, turnstileSiteKey: siteKey } : { success: true, challenge };
    },
    async prepare() {
      if (config.enabled) await signingSecret();
    },
    confirmationFor: async (id) => signConfirmation(id, await signingSecret(), now()),
    confirmed: async (token) => readConfirmation(token, await signingSecret(), now()),
    judge: async (submission) => judgeContact(submission, { ...filter, secret: config.enabled ? await signingSecret() : '' }),
    async allowSubscription(fields) {
      if (!config.enabled || !config.newsletterRequiresProof) return { ok: true };
      const proof = await checkProof(fields[PROOF_FIELD], used, { secret: await signingSecret(), now });
      return proof.ok ? { ok: true } : { ok: false, error: NEWSLETTER_PROOF_ERROR };
    },
  };
}
