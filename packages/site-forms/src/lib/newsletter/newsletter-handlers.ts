import type { IncomingRequest } from '../http/form.ts';
import * as v from 'valibot';
import { INVALID_EMAIL } from '../forms/email.ts';
import { NewsletterSchema } from '../forms/newsletter.ts';
import { TOKEN_FIELD } from '../forms/reserved.ts';
import { readForm } from '../http/form.ts';
import { texts } from '../i18n/texts.ts';
import { describeError, type Logger } from '../log.ts';
import { site } from '../site/site.ts';
import type { EventRecorder } from '../webhooks/webhooks.ts';
import type { Consents } from './consents.ts';
import { CONFIRM_THANKS, evidenceOf, type OptIn } from './opt-in.ts';
import { accepted, type FormValues, failure, type Outcome, tooManyRequests } from '../http/outcome.ts';
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
  /** Double opt-in run by the site (the local list, Resend), when NEWSLETTER_DOUBLE_OPT_IN is on. */
  optIn?: OptIn | undefined;
  /** Consent records of signups a provider confirms itself (Mailchimp, Kit), when NEWSLETTER_DOUBLE_OPT_IN is on. */
  consents?: Pick<Consents, 'record'> | undefined;
  /** Consent records of signups that join at once, when NEWSLETTER_DOUBLE_OPT_IN is off: what they agreed to, when and where (decision 0206). */
  consentOnJoin?: Pick<Consents, 'record'> | undefined;
  /** Keeps a signup the provider could not take at once, to try it again: a confirmed one always, a new one with `queueOnOutage`. */
  signups?: { enqueue(email: string, provider: string, now?: Date): Promise<number>; poke(): void } | undefined;
  /**
   * NEWSLETTER_QUEUE_ON_OUTAGE: a signup during an outage is queued and answered 200, the owner's
   * departure from the contract; without it the visitor gets the spec's failure, 503 (decision 0140).
   */
  queueOnOutage?: boolean | undefined;
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
    error: texts.refusals.notResubscribable,
  },
  forgotten: {
    status: 400,
    error: texts.refusals.forgotten,
  },
  unavailable: {
    status: 503,
    error: texts.refusals.providerBusy,
    headers: { 'retry-after': String(NEWSLETTER_RETRY_AFTER_SECONDS) },
  },
  misconfigured: { status: 502, error: texts.refusals.providerMisconfigured },
};

/** POST /api/newsletter (docs/api/openapi.yaml): read the form, validate the email, subscribe, answer. */
export async function handleNewsletter(
  request: IncomingRequest,
  { provider, logger, limits, spam, events, signups, queueOnOutage, optIn, consents, consentOnJoin }: NewsletterDeps,
  { ip }: { ip: string } = { ip: '' },
): Promise<Outcome> {
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

  const evidence = evidenceOf(request, ip, site.newsletterConsent);
  if (optIn) {
    // Double opt-in: nobody is on the list until the link in the confirmation email is followed.
    const asked = await optIn.ask(parsed.output.email, evidence, new Date());
    if (asked === 'failed') return failure(503, CONFIRMATION_NOT_SENT, { headers: { 'retry-after': String(NEWSLETTER_RETRY_AFTER_SECONDS) }, values });
    logger.info('newsletter.confirmation_asked', { sent: asked === 'sent' });
    return { kind: 'accepted', thanks: CONFIRM_THANKS, awaitingConfirmation: true };
  }
  const outcome = await provider.subscribe(parsed.output.email);
  // Mailchimp (pending) and Kit confirm by themselves: the site keeps what the visitor agreed to.
  if (outcome.ok && consents) await consents.record(parsed.output.email, evidence, 'pending', new Date());
  // Without double opt-in the site still keeps what the visitor agreed to: the exports carry it (issue 39, item 7).
  // The provider has the address: a record that fails to be written is logged, never a refusal of a done signup.
  else if (outcome.ok && consentOnJoin) {
    await consentOnJoin.record(parsed.output.email, evidence, 'subscribed', new Date()).catch((error: unknown) => {
      logger.warn('newsletter.consent_not_recorded', { provider: provider.name, error: describeError(error) });
    });
  }
  if (outcome.ok) {
    // The subscription is done whatever becomes of its news: a failure to record it is logged, not answered.
    await events?.record('newsletter.subscribed', { email: parsed.output.email, provider: provider.name }).catch((error: unknown) => {
      logger.warn('webhook.event_not_recorded', { type: 'newsletter.subscribed', error: describeError(error) });
    });
    // Mailchimp and Kit send their own confirmation mail when the site keeps consents (double opt-in).
    return consents ? { kind: 'accepted', awaitingConfirmation: true } : accepted();
  }

  // Busy or down: the spec's 503, unless the owner chose to keep the signup and try it again
  // in the background (decision 0140).
  if (outcome.reason === 'unavailable' && queueOnOutage && signups) {
    try {
      const id = await signups.enqueue(parsed.output.email, provider.name);
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

/** What a person reads when the confirmation email could not be sent. */
export const CONFIRMATION_NOT_SENT = texts.refusals.confirmationNotSent;

/** What a person reads when a confirmation link is too old, was used, or was never ours. */
export const CONFIRMATION_LINK_EXPIRED = texts.refusals.confirmationLinkExpired;

/** What a person reads when an unsubscribe link is not (or no longer) valid. */
export const UNSUBSCRIBE_LINK_INVALID = texts.refusals.unsubscribeLinkInvalid;

/**
 * POST /api/newsletter/confirm: the button of the page a confirmation link opens. The address
 * joins the list (or, the provider being busy, the queue of signups) once.
 * Hint: confirming is a POST from a page, never the link itself, so a mail scanner that follows
 * links cannot confirm for the person.
 */
export async function handleNewsletterConfirmation(request: IncomingRequest, { provider, logger, events, signups, optIn }: NewsletterDeps): Promise<Outcome> {
  const form = await readForm(request);
  if (!form.ok) return form.failure;
  const token = form.fields[TOKEN_FIELD];
  const email = optIn && typeof token === 'string' ? await optIn.consents.confirm(token, new Date()) : undefined;
  if (!email) return failure(400, CONFIRMATION_LINK_EXPIRED);
  const outcome = await provider.subscribe(email);
  // The link is spent and the consent recorded: a provider that is busy, or refuses the owner's
  // own key, gets the address again from the queue (whose worker retries both) rather than
  // asking the person to try a link that no longer works.
  if (!outcome.ok && (outcome.reason === 'unavailable' || outcome.reason === 'misconfigured') && signups) {
    if (outcome.reason === 'misconfigured')
      logger.error('newsletter.confirmed_queued', { provider: provider.name, reason: outcome.reason, detail: outcome.detail, check: outcome.check });
    await signups.enqueue(email, provider.name);
    signups.poke();
  } else if (!outcome.ok) {
    logger.warn('newsletter.confirmed_not_added', { provider: provider.name, reason: outcome.reason, detail: outcome.detail });
    const answer = NEWSLETTER_FAILURES[outcome.reason];
    return failure(answer.status, answer.error, { headers: answer.headers });
  }
  logger.info('newsletter.confirmed', { provider: provider.name });
  // As a subscription's: done whatever becomes of its news, and a failure to record it is logged, not answered.
  await events?.record('newsletter.confirmed', { email, provider: provider.name }).catch((error: unknown) => {
    logger.warn('webhook.event_not_recorded', { type: 'newsletter.confirmed', error: describeError(error) });
  });
  return accepted();
}

/**
 * POST /api/newsletter/unsubscribe?token=…: one-click unsubscribe (RFC 8058: a mail program posts
 * `List-Unsubscribe=One-Click` to the address in `List-Unsubscribe`), or the button of the
 * unsubscribe page. The local list forgets the address; a remote provider's list is the owner's to
 * update (logged).
 */
export async function handleUnsubscribe(
  request: IncomingRequest,
  { provider, logger, optIn, unsubscribeLocal }: NewsletterDeps & { unsubscribeLocal?: (email: string) => Promise<boolean> },
): Promise<Outcome> {
  const form = await readForm(request);
  const fromForm = form.ok ? form.fields[TOKEN_FIELD] : undefined;
  const token = new URL(request.url).searchParams.get('token') ?? (typeof fromForm === 'string' ? fromForm : undefined);
  const email = optIn && token ? await optIn.consents.unsubscribe(token, new Date()) : undefined;
  if (!email) return failure(400, UNSUBSCRIBE_LINK_INVALID);
  if (provider.name === 'local') await unsubscribeLocal?.(email);
  else logger.warn('newsletter.unsubscribed', { provider: provider.name, note: `remove the address from the ${provider.name} list too` });
  return { kind: 'accepted', thanks: '/thank-you/unsubscribed/' };
}
