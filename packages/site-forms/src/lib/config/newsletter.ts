import * as v from 'valibot';
import {
  KIT_API_VERSIONS,
  type KitConfig,
  type MailchimpConfig,
  type NewsletterConfig,
  PROVIDER_NAMES,
  type ProviderName,
  type ResendConfig,
  type ResendTarget,
} from '../newsletter/provider-settings.ts';
import { mask, withoutCredentials } from './secrets.ts';
import { type ConfigConcern, optionalText, optionalUrl, readVariables, text } from './variables.ts';

export { KIT_API_VERSIONS, PROVIDER_NAMES };
export type { KitConfig, MailchimpConfig, NewsletterConfig, ProviderName, ResendConfig, ResendTarget };

/** The newsletter part of the configuration. */
export type NewsletterSettings = {
  newsletter: NewsletterConfig;
  /** Why the provider was chosen, for the start-up log. */
  newsletterChoice: 'configured' | 'inferred' | 'default';
  /**
   * NEWSLETTER_QUEUE_ON_OUTAGE: a signup the provider cannot take is kept and answered 200, a
   * departure from the API contract (whose 200 means "added"); off, it is the spec's 503.
   */
  newsletterQueueOnOutage: boolean;
};

const VARIABLES = {
  NEWSLETTER_PROVIDER: v.optional(
    v.pipe(text, v.toLowerCase(), v.union([v.literal(''), v.picklist(PROVIDER_NAMES)], `must be one of ${PROVIDER_NAMES.join(', ')}`)),
  ),
  MAILCHIMP_API_KEY: optionalText,
  MAILCHIMP_LIST_ID: optionalText,
  MAILCHIMP_SERVER_PREFIX: optionalText,
  MAILCHIMP_API_BASE_URL: optionalUrl,
  KIT_API_KEY: optionalText,
  // Kit's API wants the form's number; the embed code's data-uid looks similar but is not it.
  KIT_FORM_ID: v.optional(
    v.pipe(
      text,
      v.check((s) => /^\d*$/.test(s), "must be the form's number, such as 1234567 (from the form's address in Kit, not the data-uid of its embed code)"),
    ),
  ),
  KIT_API_BASE_URL: optionalUrl,
  KIT_API_VERSION: v.optional(v.pipe(text, v.toLowerCase(), v.union([v.literal(''), v.picklist(KIT_API_VERSIONS)], 'must be v3 or v4'))),
  RESEND_API_KEY: optionalText,
  RESEND_SEGMENT_ID: optionalText,
  RESEND_AUDIENCE_ID: optionalText,
  RESEND_BASE_URL: optionalUrl,
  NEWSLETTER_QUEUE_ON_OUTAGE: v.optional(v.pipe(text, v.toLowerCase(), v.picklist(['true', 'false'], 'must be true or false')), 'false'),
};

type Variables = ReturnType<typeof readVariables<typeof VARIABLES>>['config'];

/** Which variable holds the key of each paid provider: setting it is how a provider is inferred. */
const PROVIDER_KEYS = {
  mailchimp: 'MAILCHIMP_API_KEY',
  kit: 'KIT_API_KEY',
  resend: 'RESEND_API_KEY',
} as const;

/** Which variable names the list, form or audience of each paid provider. */
const PROVIDER_TARGETS = {
  mailchimp: 'MAILCHIMP_LIST_ID',
  kit: 'KIT_FORM_ID',
  resend: 'RESEND_SEGMENT_ID',
} as const;

type PaidProvider = keyof typeof PROVIDER_KEYS;
const PAID_PROVIDERS = Object.keys(PROVIDER_KEYS) as PaidProvider[];

/** NEWSLETTER_PROVIDER and the settings of the provider it chooses (or that a key implies). */
export const newsletter: ConfigConcern<NewsletterSettings> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    const { provider, newsletterChoice } = chooseProvider(e, problems);
    const newsletterQueueOnOutage = e.NEWSLETTER_QUEUE_ON_OUTAGE === 'true';
    return { config: { newsletter: settingsOf(provider, e, problems), newsletterChoice, newsletterQueueOnOutage }, problems };
  },
  describe: ({ newsletter: n, newsletterChoice, newsletterQueueOnOutage }) => ({
    newsletterProvider: n.provider,
    newsletterChoice,
    newsletterQueueOnOutage,
    ...(n.provider === 'mailchimp' && {
      mailchimp: { apiKey: mask(n.mailchimp.apiKey), listId: n.mailchimp.listId, baseUrl: withoutCredentials(n.mailchimp.baseUrl) },
    }),
    ...(n.provider === 'kit' && {
      kit: { apiKey: mask(n.kit.apiKey), formId: n.kit.formId, version: n.kit.version, baseUrl: withoutCredentials(n.kit.baseUrl) },
    }),
    ...(n.provider === 'resend' && {
      resend: { apiKey: mask(n.resend.apiKey), [`${n.resend.target.kind}Id`]: n.resend.target.id, baseUrl: withoutCredentials(n.resend.baseUrl) },
    }),
  }),
};

/** NEWSLETTER_PROVIDER when set; else the one provider whose key is set; else local. */
function chooseProvider(e: Variables, problems: string[]): { provider: ProviderName; newsletterChoice: NewsletterSettings['newsletterChoice'] } {
  if (e.NEWSLETTER_PROVIDER) return { provider: e.NEWSLETTER_PROVIDER, newsletterChoice: 'configured' };
  const keysSet = PAID_PROVIDERS.filter((p) => e[PROVIDER_KEYS[p]] !== undefined);
  if (keysSet.length === 1) return { provider: keysSet[0]!, newsletterChoice: 'inferred' };
  if (keysSet.length === 0) {
    // A list, form or audience without its key is a provider half set up: saying so beats
    // quietly keeping its subscribers in the local database.
    for (const p of PAID_PROVIDERS) {
      if (e[PROVIDER_TARGETS[p]] || (p === 'resend' && e.RESEND_AUDIENCE_ID)) {
        problems.push(
          `${PROVIDER_KEYS[p]} is required when ${e[PROVIDER_TARGETS[p]] ? PROVIDER_TARGETS[p] : 'RESEND_AUDIENCE_ID'} is set (or set NEWSLETTER_PROVIDER=local to keep subscribers in the database)`,
        );
      }
    }
  } else {
    problems.push(
      `NEWSLETTER_PROVIDER is required when keys of several providers are set (${keysSet.map((p) => PROVIDER_KEYS[p]).join(', ')}): choose one of ${PROVIDER_NAMES.join(', ')}`,
    );
  }
  return { provider: 'local', newsletterChoice: 'default' };
}

/** The settings the chosen provider needs, each missing one a problem. */
function settingsOf(provider: ProviderName, e: Variables, problems: string[]): NewsletterConfig {
  const required = (name: string, value: string | undefined): string => {
    if (value === undefined) problems.push(`${name} is required when NEWSLETTER_PROVIDER is ${provider}`);
    return value ?? '';
  };
  switch (provider) {
    case 'mailchimp': {
      const apiKey = required('MAILCHIMP_API_KEY', e.MAILCHIMP_API_KEY);
      const listId = required('MAILCHIMP_LIST_ID', e.MAILCHIMP_LIST_ID);
      return { provider, mailchimp: { apiKey, listId, baseUrl: e.MAILCHIMP_API_BASE_URL || mailchimpBaseUrl(apiKey, e.MAILCHIMP_SERVER_PREFIX, problems) } };
    }
    case 'kit': {
      const version = e.KIT_API_VERSION || 'v3';
      return {
        provider,
        kit: {
          apiKey: required('KIT_API_KEY', e.KIT_API_KEY),
          formId: required('KIT_FORM_ID', e.KIT_FORM_ID || undefined),
          baseUrl: e.KIT_API_BASE_URL || KIT_BASE_URLS[version],
          version,
        },
      };
    }
    case 'resend':
      return {
        provider,
        resend: {
          apiKey: required('RESEND_API_KEY', e.RESEND_API_KEY),
          target: resendTarget(e, problems),
          baseUrl: e.RESEND_BASE_URL || 'https://api.resend.com',
        },
      };
    case 'local':
      return { provider };
  }
}

/** Kit's address for each API version. */
const KIT_BASE_URLS = { v3: 'https://api.convertkit.com/v3', v4: 'https://api.kit.com/v4' } as const;

/**
 * RESEND_SEGMENT_ID (Resend's current API) or RESEND_AUDIENCE_ID (the spec's call), exactly one.
 * Hint: both set is refused rather than one quietly winning: an owner moving to segments
 * should see which one is used.
 */
function resendTarget(e: Variables, problems: string[]): ResendTarget {
  if (e.RESEND_SEGMENT_ID && e.RESEND_AUDIENCE_ID)
    problems.push('RESEND_SEGMENT_ID and RESEND_AUDIENCE_ID are both set: keep RESEND_SEGMENT_ID (audiences are deprecated)');
  if (e.RESEND_SEGMENT_ID) return { kind: 'segment', id: e.RESEND_SEGMENT_ID };
  if (e.RESEND_AUDIENCE_ID) return { kind: 'audience', id: e.RESEND_AUDIENCE_ID };
  problems.push('RESEND_SEGMENT_ID (or the deprecated RESEND_AUDIENCE_ID) is required when NEWSLETTER_PROVIDER is resend');
  return { kind: 'segment', id: '' };
}

/** Mailchimp's address for the data centre in MAILCHIMP_SERVER_PREFIX, or else at the end of the key. */
function mailchimpBaseUrl(apiKey: string, serverPrefix: string | undefined, problems: string[]): string {
  const prefix = serverPrefix ?? serverPrefixOf(apiKey);
  if (prefix === undefined) {
    if (apiKey) problems.push('MAILCHIMP_SERVER_PREFIX is required when MAILCHIMP_API_KEY does not end in -<data centre>, such as -us21');
  } else if (!/^[a-z]+\d+$/i.test(prefix)) {
    problems.push('MAILCHIMP_SERVER_PREFIX must look like us21');
  }
  return `https://${prefix}.api.mailchimp.com/3.0`;
}

/** Mailchimp keys end in `-<data centre>`, such as `-us21`; that suffix is the default server prefix. */
function serverPrefixOf(apiKey: string): string | undefined {
  const dash = apiKey.lastIndexOf('-');
  return dash > 0 && dash < apiKey.length - 1 ? apiKey.slice(dash + 1) : undefined;
}
