import type { DatabaseSync } from 'node:sqlite';
import type { NewsletterConfig } from '../config.ts';
import { createLocalProvider } from './local.ts';
import { createMailchimpProvider } from './mailchimp.ts';
import type { NewsletterProvider } from './provider.ts';

/**
 * Builds the one provider the configuration chose.
 * Hint: a provider is built only when chosen, so an unused SDK never runs.
 */
export function createNewsletterProvider(config: NewsletterConfig, db: DatabaseSync): NewsletterProvider {
  switch (config.provider) {
    case 'mailchimp':
      return createMailchimpProvider(config.mailchimp);
    case 'local':
      return createLocalProvider(db);
    case 'kit':
    case 'resend':
      throw new Error(`The ${config.provider} newsletter provider is not available yet`);
  }
}
