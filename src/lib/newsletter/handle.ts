import * as v from 'valibot';
import { INVALID_EMAIL } from '../forms/email.ts';
import { NewsletterSchema } from '../forms/newsletter.ts';
import { readForm } from '../http.ts';
import { describeError, type Logger } from '../log.ts';
import type { EventRecorder } from '../webhooks/webhooks.ts';
import { accepted, type FormValues, failure, type Outcome, tooManyRequests } from '../pipeline/outcome.ts';
import type { AbuseLimits } from '../rate-limit.ts';
import type { SpamService } from '../spam/service.ts';
import type { NewsletterProvider, SubscribeFailure } from './provider.ts';

/** What the newsletter handler needs; `spam` refuses subscriptions without a proof when NEWSLETTER_REQUIRE_PROOF is set. */
export type NewsletterDeps = {
  provider: NewsletterProvider;
  logger: Logger;
  limits?: Pick<AbuseLimits, 'checkAddress'>;
  spam?: { service: Pick<SpamService, 'allowSubscription'> } | undefined;
  /** Records the news of a subscription for webhooks and chat alerts. */
  events?: EventRecorder | undefined;
  /** Keeps a signup the provider could not take at once, to try it again (no signup lost). */
  signups?: { enqueue(email: string, provider: string, now: Date): Promise<number>; poke(): void } | undefined;
};

/**
 * How long a visitor is asked to wait when the provider is unavailable: the same "few
 * minutes" the message says, and longer than the one-minute windows of the providers'
 * rate limits, so that the next try starts with a clean slate.
 */
export const NEWSLETTER_RETRY_AFTER_SECONDS = 120;

/**
 * The answer a visitor gets for each way a subscription can fail: one table, one place.
 * Hint: "already a member" is not here, because providers answer it as success.
 */
export const NEWSLETTER_FAILURES: Record<SubscribeFailure, { status: number; error: string; headers?: Record<string, string> }> = {
  'invalid-address': { status: 400, error: INVALID_EMAIL },
  'not-resubscribable': {
    status: 400,
    error: 'This address unsubscribed earlier, so we cannot add it again here. Use the subscribe link in one of our earlier emails, or contact us.',
  },
  forgotten: {
    status: 400,
    error: 'This address was removed from our list at its owner’s request, so it cannot be added again here. Please contact us to subscribe again.',
  },
  unavailable: {
    status: 503,
    error: 'The newsletter service is busy right now. Please try again in a few minutes.',
    headers: { 'retry-after': String(NEWSLETTER_RETRY_AFTER_SECONDS) },
  },
  misconfigured: { status: 502, error: 'We could not subscribe you right now. Please try again later.' },
};

/** POST /api/newsletter (docs/api/openapi.yaml): read the form, validate the email, subscribe, answer. */
export async function handleNewsletter(request: Request, { provider, logger, limits, spam, events, signups }: NewsletterDeps): Promise<Outcome> {
  const form = await readForm(request);
  if (!form.ok) return form.failure;

  const typed = form.fields.email;
  const values: FormValues = typeof typed === 'string' ? { email: typed } : {};
  const parsed = v.safeParse(NewsletterSchema, form.fields);
  if (!parsed.success) return failure(400, INVALID_EMAIL, { field: 'email', values });

  // Against list bombing (issue 13): checked before the address counts toward its daily limit.
  const proof = (await spam?.service.allowSubscription(form.fields)) ?? { ok: true };
  if (!proof.ok) return failure(400, proof.error, { values });

  const allowed = (await limits?.checkAddress(parsed.output.email)) ?? { ok: true };
  if (!allowed.ok) return tooManyRequests(allowed.retryAfterSeconds, values);

  const outcome = await provider.subscribe(parsed.output.email);
  if (outcome.ok) {
    // The subscription is done whatever becomes of its news: a failure to record it is logged, not answered.
    await events?.record('newsletter.subscribed', { email: parsed.output.email, provider: provider.name }).catch((error: unknown) => {
      logger.warn('webhook.event_not_recorded', { event: 'newsletter.subscribed', error: describeError(error) });
    });
    return accepted();
  }

  // Busy or down: kept and tried again in the background, so the visitor is done (decision 0128).
  if (outcome.reason === 'unavailable' && signups) {
    try {
      const id = await signups.enqueue(parsed.output.email, provider.name, new Date());
      logger.warn('newsletter.signup_queued', { provider: provider.name, id, detail: outcome.detail });
      signups.poke();
      return accepted();
    } catch {
      // The store has logged why; the visitor is asked to try later, as without a queue.
    }
  }
  const answer = NEWSLETTER_FAILURES[outcome.reason];
  if (outcome.reason === 'misconfigured') {
    // Only the owner can fix this: an error naming what to check, never the key itself.
    logger.error('newsletter.subscribe_failed', { provider: provider.name, reason: outcome.reason, detail: outcome.detail, check: outcome.check });
  } else {
    logger.warn('newsletter.subscribe_failed', { provider: provider.name, reason: outcome.reason, detail: outcome.detail });
  }
  // A 400 is about the address typed; a busy or broken provider is about the form.
  return failure(answer.status, answer.error, { headers: answer.headers, values, field: answer.status === 400 ? 'email' : undefined });
}
