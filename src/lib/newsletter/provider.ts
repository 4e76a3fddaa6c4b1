import type { ProviderName } from '../config.ts';

/** Why a provider did not add an address; each maps to one answer in `handle.ts`. */
export type SubscribeFailure =
  /** The provider says the address is invalid or fake. */
  | 'invalid-address'
  /** The address unsubscribed or was forgotten; only the visitor can opt in again. */
  | 'not-resubscribable'
  /** The provider is busy or down; trying again later may work. */
  | 'unavailable'
  /** Our key, list or form is wrong; only the site owner can fix it. */
  | 'misconfigured';

/**
 * What a subscription came to. Expected failures are values; only bugs throw.
 * Hint: "already a member" is `ok: true`, so the form never reveals who is subscribed.
 */
export type SubscribeOutcome = { ok: true } | { ok: false; reason: SubscribeFailure; detail: string };

/** A newsletter provider of SPEC.md 2.4, behind one method. */
export interface NewsletterProvider {
  readonly name: ProviderName;
  /** Adds a validated address as a subscriber. */
  subscribe(email: string): Promise<SubscribeOutcome>;
}
