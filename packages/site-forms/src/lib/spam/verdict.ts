import { catalogueFor } from '../i18n/catalogues.ts';
import type { Logger } from '../log.ts';
import type { AkismetClient } from './akismet.ts';
import { type ContentReason, contentReasons, tooFast } from './content.ts';
import type { OutsideCheck } from './outside.ts';
import { checkProof, type ProofCheck, type ProofNonce } from './proof.ts';
import type { TurnstileClient } from './turnstile.ts';
import { DEFAULT_WEIGHING, scoreOf, type WeighedReason, type Weighing } from './weights.ts';

/** One reason a message was judged spam, as stored with it and shown to the owner. */
export type SpamReason = WeighedReason | 'marked-by-owner';

/**
 * The verdict on one message: spam (held) or not, every reason found (a message with only weak
 * ones is not held), and the proof's nonce, which the store consumes with the message (a replay
 * found then holds it as `proof-replayed`).
 */
export type Verdict = {
  spam: boolean;
  reasons: SpamReason[];
  /**
   * The proof is missing and nothing else would hold the message: a person posting from a
   * browser without JavaScript is asked to confirm it with one click instead.
   */
  confirmable?: boolean;
  proof?: ProofNonce | undefined;
  /**
   * The post showed a person's browser: it carried a solved proof of work (the page's script ran)
   * or Turnstile passed it. Only such a sender gets the automatic reply (decision 0149).
   */
  shownPerson?: true;
};

/**
 * What each reason means, in the owner's English words (the admin and `npm run inbox -- show`).
 * Hint: the texts are the English catalogue's, where the digest reads them in the site's language.
 */
export const REASON_TEXT: Record<SpamReason, string> = catalogueFor('en').spamDigest.reasons;

/** What every layer found about one message; an outside check is absent when not configured. */
export type Layers = {
  proof: ProofCheck;
  submittedAt: number;
  /** Whether the post carried the fetch metadata (`Sec-Fetch-*`) every current browser sends. */
  browser: boolean;
  content: readonly ContentReason[];
  turnstile?: OutsideCheck | undefined;
  akismet?: OutsideCheck | undefined;
};

/**
 * Combines the layers into one verdict: every reason found, weighed; the message is held when
 * their weights reach the threshold.
 * Hint: an outside check without an answer gives no reason either way (decision 0092).
 */
export function combineVerdict({ proof, submittedAt, browser, content, turnstile, akismet }: Layers, weighing: Weighing = DEFAULT_WEIGHING): Verdict {
  const reasons: WeighedReason[] = [];
  if (!proof.ok) reasons.push(`proof-${proof.reason}`);
  else if (tooFast(proof.issuedAt, submittedAt)) reasons.push('too-fast');
  if (!browser) reasons.push('no-browser');
  reasons.push(...content);
  if (turnstile?.ok && turnstile.spam) reasons.push('turnstile-failed');
  if (akismet?.ok && akismet.spam) reasons.push('akismet-spam');
  const spam = scoreOf(reasons, weighing) >= weighing.threshold;
  const others = reasons.filter((reason) => reason !== 'proof-missing');
  const confirmable = others.length < reasons.length && scoreOf(others, weighing) < weighing.threshold;
  return confirmable ? { spam, reasons, confirmable } : { spam, reasons };
}

/** The spam filter of a deployment: its switch, its settings and the services it asks. */
export type SpamFilter = {
  /** `SPAM_FILTER`; when off, only the spec's honeypot stands. */
  enabled: boolean;
  maxLinks: number;
  /** `SPAM_WEIGHTS` and `SPAM_THRESHOLD`. */
  weighing?: Weighing | undefined;
  /** The secret that signs proof-of-work challenges. */
  secret: string;
  turnstile?: TurnstileClient | undefined;
  akismet?: AkismetClient | undefined;
  logger: Logger;
  now?: () => number;
};

/** What a post carries besides its fields: the proof, the widget's token and where it came from. */
export type Submission = {
  name: string;
  email: string;
  message: string;
  proof: unknown;
  turnstileToken?: unknown;
  ip: string;
  userAgent?: string | undefined;
  referrer?: string | undefined;
  /** Whether the post carried the fetch metadata every current browser sends (`Sec-Fetch-*`). */
  browser: boolean;
};

/** A verdict that finds nothing, for a filter that is off. */
export const CLEAN: Verdict = { spam: false, reasons: [] };

/** Judges one contact message by every layer that is on, asking the outside checks at once. */
export async function judgeContact(submission: Submission, filter: SpamFilter): Promise<Verdict> {
  if (!filter.enabled) return CLEAN;
  const { now = Date.now } = filter;
  const submittedAt = now();
  const [proof, turnstile, akismet] = await Promise.all([
    // Not consumed here: the store consumes the nonce in the transaction that keeps the message.
    checkProof(submission.proof, undefined, { secret: filter.secret, now }),
    filter.turnstile?.verify(typeof submission.turnstileToken === 'string' ? submission.turnstileToken : '', submission.ip),
    filter.akismet?.check(submission),
  ]);
  noteOutside(filter.logger, 'turnstile', turnstile);
  noteOutside(filter.logger, 'akismet', akismet);
  const verdict = combineVerdict(
    { proof, submittedAt, browser: submission.browser, content: contentReasons(submission, filter.maxLinks), turnstile, akismet },
    filter.weighing,
  );
  const judged = proof.ok ? { ...verdict, proof: proof.nonce } : verdict;
  // The no-JavaScript confirmation is no such sign: a script reads its token from the page.
  return proof.ok || (turnstile?.ok && !turnstile.spam) ? { ...judged, shownPerson: true } : judged;
}

/** Which outside services are failing right now: each outage is logged once, and its end once. */
const failing = new WeakMap<Logger, Set<string>>();

function noteOutside(logger: Logger, service: string, check: OutsideCheck | undefined): void {
  if (!check) return;
  const down = failing.get(logger) ?? new Set<string>();
  failing.set(logger, down);
  if (check.ok) {
    if (down.delete(service)) logger.info('spam.outside_check_back', { service });
    return;
  }
  if (down.has(service)) return;
  down.add(service);
  logger.warn('spam.outside_check_failed', {
    service,
    detail: check.detail,
    ...(check.check ? { check: check.check } : {}),
    note: 'the message is judged without it',
  });
}
