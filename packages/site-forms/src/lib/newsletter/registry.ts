import type { NewsletterConfig } from './provider-settings.ts';
import { createKitProvider } from './kit.ts';
import { createLocalProvider, type SubscriberList } from './local.ts';
import { createMailchimpProvider } from './mailchimp.ts';
import type { NewsletterProvider } from './provider.ts';
import { createResendProvider } from './resend.ts';
import { type ResilienceOptions, withRetries } from './resilient.ts';

/**
 * Builds the one provider the configuration chose; a remote one is wrapped in the
 * retries, time budget and in-flight limit of `resilient.ts`.
 * Hint: a provider is built only when chosen, so an unused SDK never runs (Resend's
 * constructor throws without a key).
 */
export function createNewsletterProvider(
  config: NewsletterConfig,
  subscribers: SubscriberList,
  resilience: Partial<ResilienceOptions> = {},
  { doubleOptIn = false }: { doubleOptIn?: boolean } = {},
): NewsletterProvider {
  switch (config.provider) {
    case 'mailchimp':
      return withRetries(createMailchimpProvider(config.mailchimp, { doubleOptIn }), resilience);
    case 'kit':
      return withRetries(createKitProvider(config.kit), resilience);
    case 'resend':
      return withRetries(createResendProvider(config.resend), resilience);
    case 'local':
      return createLocalProvider(subscribers);
  }
}
