import type { ProviderName } from './provider-settings.ts';

/** Why a provider did not add an address; each maps to one answer in `newsletter-handlers.ts`. */
export type SubscribeFailure =
  /** The provider says the address is invalid or fake. */
  | 'invalid-address'
  /** The address unsubscribed (a compliance state); only the visitor can opt in again, through the provider. */
  | 'not-resubscribable'
  /** The address was erased at its owner's request ("Forgotten Email Not Subscribed"); it cannot be added by an API at all. */
  | 'forgotten'
  /** The provider is busy, down or silent; trying again may work, so only this one is retried. */
  | 'unavailable'
  /** Our key, list or form is wrong; only the site owner can fix it. */
  | 'misconfigured';

/**
 * What a subscription came to. Expected failures are values; only bugs throw.
 * Hint: "already a member" is `ok: true`, so the form never reveals who is subscribed.
 */
export type SubscribeOutcome =
  | { ok: true }
  /** `check` names the variables the owner should look at; it is logged, never shown. */
  | { ok: false; reason: 'misconfigured'; detail: string; check: string }
  | { ok: false; reason: Exclude<SubscribeFailure, 'misconfigured'>; detail: string };

/** A failed subscription: the outcomes with `ok: false`. */
export type SubscribeFailureOutcome = Extract<SubscribeOutcome, { ok: false }>;

/** What a caller may pass with one subscription. */
export type SubscribeOptions = {
  /** Aborts the call: the provider stops waiting and answers `unavailable`. */
  signal?: AbortSignal;
  /** The time left for this attempt, for a client that takes a timeout rather than a signal. */
  timeoutMs?: number;
};

/** A newsletter provider of docs/api/openapi.yaml, behind one method. */
export interface NewsletterProvider {
  readonly name: ProviderName;
  /**
   * Makes one attempt to add a validated address as a subscriber.
   * Hint: a remote provider never retries by itself; `resilient.ts` does, for all of them.
   */
  subscribe(email: string, options?: SubscribeOptions): Promise<SubscribeOutcome>;
}

/** The outcome for a provider that did not answer, or answered something we cannot read. */
export function unavailable(detail: string): SubscribeFailureOutcome {
  return { ok: false, reason: 'unavailable', detail };
}

/** The outcome for a provider that refused our key, list or form; `check` names what to look at. */
export function misconfigured(detail: string, check: string): SubscribeFailureOutcome {
  return { ok: false, reason: 'misconfigured', detail, check };
}

/**
 * A short description of why a call got no answer, for the log: a timeout, a reset or
 * a refused connection, as fetch and superagent report them.
 */
export function describeNetworkError(error: unknown): string {
  const e = error as { name?: string; code?: string; cause?: { code?: string; name?: string }; timeout?: number } | undefined;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError' || e?.cause?.name === 'TimeoutError' || e?.timeout !== undefined) return 'timeout';
  const code = e?.cause?.code ?? e?.code;
  return code ? `network error ${code}` : 'network error';
}

/**
 * Whether a status sends the caller elsewhere: a provider's API never should, and
 * following would re-send the key to an address nobody configured, so it is the owner's to check.
 */
export function isRedirect(status: number): boolean {
  return status >= 300 && status <= 399;
}
