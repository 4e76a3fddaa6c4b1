import { describe, expect, test } from 'vitest';
import type { NewsletterConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import type { SubscriberList } from '../../../packages/site-forms/src/lib/newsletter/local.ts';
import { createNewsletterProvider } from '../../../packages/site-forms/src/lib/newsletter/registry.ts';

const list: SubscriberList = { add: async () => {}, remove: async () => false, list: async () => [] };

describe('the provider the configuration chose', () => {
  test.each<[NewsletterConfig, string]>([
    [{ provider: 'mailchimp', mailchimp: { apiKey: 'key-us21', listId: 'l', baseUrl: 'http://127.0.0.1:9/3.0' } }, 'mailchimp'],
    [{ provider: 'kit', kit: { apiKey: 'k', formId: '1', baseUrl: 'http://127.0.0.1:9/v3', version: 'v3' } }, 'kit'],
    [{ provider: 'resend', resend: { apiKey: 're_1', target: { kind: 'audience', id: 'a' }, baseUrl: 'http://127.0.0.1:9' } }, 'resend'],
    [{ provider: 'local' }, 'local'],
  ])('%j builds the %s provider', (config, name) => {
    expect(createNewsletterProvider(config, list).name).toBe(name);
  });
});
