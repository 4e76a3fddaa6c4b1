// The newsletter providers' settings, as src/lib/config/newsletter.ts reads them: the
// newsletter's own types, so that the providers do not depend on the configuration module.

/** The newsletter providers a deployment can choose from (docs/api/openapi.yaml, plus the embedded default). */
export const PROVIDER_NAMES = ['mailchimp', 'kit', 'resend', 'local'] as const;

/** One of the newsletter providers. */
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** The Mailchimp settings, complete (docs/api/openapi.yaml). */
export type MailchimpConfig = { apiKey: string; listId: string; baseUrl: string };
/** Kit's API versions: v3 is the spec's form-subscribe call, v4 the current API that Kit makes new keys for. */
export const KIT_API_VERSIONS = ['v3', 'v4'] as const;

/** The Kit settings, complete (docs/api/openapi.yaml, or Kit's current v4 API). */
export type KitConfig = { apiKey: string; formId: string; baseUrl: string; version: (typeof KIT_API_VERSIONS)[number] };

/**
 * Where Resend puts a new contact: a segment (Resend's current API), or an audience (the
 * spec's call, which Resend deprecated in November 2025).
 */
export type ResendTarget = { kind: 'segment'; id: string } | { kind: 'audience'; id: string };

/** The Resend settings, complete (docs/api/openapi.yaml, or a segment). */
export type ResendConfig = { apiKey: string; target: ResendTarget; baseUrl: string };

/** The chosen newsletter provider with exactly the settings it needs. */
export type NewsletterConfig =
  | { provider: 'mailchimp'; mailchimp: MailchimpConfig }
  | { provider: 'kit'; kit: KitConfig }
  | { provider: 'resend'; resend: ResendConfig }
  | { provider: 'local' };
