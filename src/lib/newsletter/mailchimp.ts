import { createRequire } from 'node:module';
import type { MailchimpConfig } from '../config.ts';
import type { NewsletterProvider, SubscribeOutcome } from './provider.ts';

/** How long one call to Mailchimp may take; the client's own default is two minutes. */
export const MAILCHIMP_TIMEOUT_MS = 10_000;

type ApiClient = {
  basePath: string;
  defaultHeaders: Record<string, string>;
  timeout: number;
  setConfig(config: Record<string, string>): void;
  lists: { addListMember(listId: string, body: { email_address: string; status: 'subscribed' }): Promise<unknown> };
};

// The package exports one shared client; its constructor gives this provider its own.
const ApiClientConstructor = createRequire(import.meta.url)('@mailchimp/mailchimp_marketing/src/ApiClient.js') as new () => ApiClient;

/**
 * Mailchimp through its official client (SPEC.md 2.4 row 1): POST to the list-members
 * resource with `Authorization: apikey <key>`.
 * Hint: the header is set as a default header because the client's own auth sends Basic.
 */
export function createMailchimpProvider(config: MailchimpConfig): NewsletterProvider {
  const client = new ApiClientConstructor();
  client.basePath = config.baseUrl;
  // No `server`: the client would otherwise replace the word "server" anywhere in the URL.
  client.setConfig({});
  client.defaultHeaders = { Authorization: `apikey ${config.apiKey}` };
  client.timeout = MAILCHIMP_TIMEOUT_MS;
  return {
    name: 'mailchimp',
    async subscribe(email) {
      try {
        await client.lists.addListMember(config.listId, { email_address: email, status: 'subscribed' });
        return { ok: true };
      } catch (error) {
        return classifyMailchimpError(error);
      }
    },
  };
}

/** Maps a failed Mailchimp call (superagent's error) to an outcome. */
export function classifyMailchimpError(error: unknown): SubscribeOutcome {
  const e = error as { status?: number; code?: string; timeout?: number; response?: { body?: { title?: string } } };
  const status = e.status;
  const title = typeof e.response?.body?.title === 'string' ? e.response.body.title : '';
  if (status === undefined) {
    return { ok: false, reason: 'unavailable', detail: `no answer (${e.code ?? (e.timeout ? 'timeout' : 'network error')})` };
  }
  const detail = `HTTP ${status}${title ? ` ${title}` : ''}`;
  if (status === 400 && title === 'Member Exists') return { ok: true };
  if (status === 400 && title === 'Invalid Resource') return { ok: false, reason: 'invalid-address', detail };
  if (status === 400 && /compliance state|forgotten email/i.test(title)) return { ok: false, reason: 'not-resubscribable', detail };
  if (status === 401 || status === 403 || status === 404) return { ok: false, reason: 'misconfigured', detail };
  if (status === 429 || status >= 500) return { ok: false, reason: 'unavailable', detail };
  return { ok: false, reason: 'misconfigured', detail };
}
