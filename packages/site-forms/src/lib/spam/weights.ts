import type { ContentReason } from './content.ts';
import type { ProofFailure } from './proof.ts';

/** A reason the filter finds by itself (not the owner's own mark), which has a weight. */
export type WeighedReason = `proof-${ProofFailure}` | 'too-fast' | 'no-browser' | ContentReason | 'turnstile-failed' | 'akismet-spam';

/**
 * How much each reason weighs; a message is held when its reasons add up to the threshold
 * (`SPAM_WEIGHTS`, `SPAM_THRESHOLD`; docs/decisions/0125-weighed-spam-signs.md).
 * Hint: a weak sign (1) is something a person can do (no JavaScript, a form filled by the
 * browser and sent at once, a page left open for a day); a strong one (2, the threshold)
 * is something a person's browser does not do, and holds a message alone.
 */
export const DEFAULT_WEIGHTS: Readonly<Record<WeighedReason, number>> = {
  'proof-missing': 1,
  'proof-expired': 1,
  'too-fast': 1,
  'no-browser': 1,
  'proof-malformed': 2,
  'proof-forged': 2,
  'proof-wrong': 2,
  'proof-replayed': 2,
  'too-many-links': 2,
  'link-in-name': 2,
  'link-markup': 2,
  'turnstile-failed': 2,
  'akismet-spam': 2,
};

/** The score at which a message is held, by default: one strong sign, or two weak ones. */
export const DEFAULT_THRESHOLD = 2;

/** The weights and threshold a filter judges by. */
export type Weighing = { weights: Readonly<Record<WeighedReason, number>>; threshold: number };

/** The default weighing: DEFAULT_WEIGHTS and DEFAULT_THRESHOLD. */
export const DEFAULT_WEIGHING: Weighing = { weights: DEFAULT_WEIGHTS, threshold: DEFAULT_THRESHOLD };

/** The sum of the reasons' weights. */
export function scoreOf(reasons: readonly WeighedReason[], { weights }: Weighing): number {
  return reasons.reduce((sum, reason) => sum + weights[reason], 0);
}
