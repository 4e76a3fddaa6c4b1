import type { DigestTime } from './digest.ts';
import type { Weighing } from './weights.ts';

// The spam filter's settings, as src/lib/config/spam.ts reads them: the filter's own type.

/** Cloudflare Turnstile's two keys: the site key goes to the page, the secret stays here. */
export type TurnstileConfig = { siteKey: string; secretKey: string; baseUrl: string };

/** The spam filter's settings (issue 13, decision 0090). */
export type SpamConfig = {
  spam: {
    /** `SPAM_FILTER`; when off, only the spec's honeypot stands. */
    enabled: boolean;
    /** More links than this in a message is a reason (`SPAM_MAX_LINKS`). */
    maxLinks: number;
    /** Held spam is deleted this many days after it arrived (`SPAM_RETENTION_DAYS`). */
    retentionDays: number;
    turnstile: TurnstileConfig | undefined;
    akismet: { apiKey: string; baseUrl: string } | undefined;
    /** `NEWSLETTER_REQUIRE_PROOF`: a subscription without a valid proof is refused. */
    newsletterRequiresProof: boolean;
    /** How much each reason weighs and the score that holds a message (`SPAM_WEIGHTS`, `SPAM_THRESHOLD`). */
    weighing: Weighing;
    /** The time of day (UTC) the digest goes out (`DIGEST_TIME`); without it, a day after the last one. */
    digestTime: DigestTime | undefined;
  };
};
