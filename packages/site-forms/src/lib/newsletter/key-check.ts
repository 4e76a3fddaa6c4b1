import { readBoundedText } from '../bounded-text.ts';
import type { KitConfig, MailchimpConfig, NewsletterConfig, ResendConfig } from './provider-settings.ts';
import { describeNetworkError, isRedirect } from './provider.ts';

/** How long the read-only check at start may wait for a provider. */
export const KEY_CHECK_TIMEOUT_MS = 5_000;

/**
 * What one read-only call to the provider said of its settings: fine; refused, naming the
 * variable to fix (the start stops); or no answer, which is only a warning.
 */
export type KeyCheck =
  | { result: 'ok'; detail: string }
  | { result: 'refused'; variable: string; detail: string }
  | { result: 'unreachable'; detail: string }
  | { result: 'not needed'; detail: string };

/** One read-only request: where, with which headers, and what its answer must hold. */
type Probe = { url: string; headers: Record<string, string>; found?: (body: unknown) => boolean };

/** What a status means for each provider: which variable a 401, a 404 or a missing item names. */
type Names = { key: string; target: string; baseUrl: string };

/**
 * Checks the chosen provider's key and list, form or segment with one read-only call (two for
 * Kit v4: the key, then the form), so that a wrong key is found at start, not by the first visitor.
 * Hint: nothing is written; the local list needs no check.
 */
export async function checkProviderKeys(config: NewsletterConfig, timeoutMs = KEY_CHECK_TIMEOUT_MS): Promise<KeyCheck> {
  switch (config.provider) {
    case 'local':
      return { result: 'not needed', detail: 'subscribers are kept in the database' };
    case 'mailchimp':
      return probe(mailchimpProbe(config.mailchimp), { key: 'MAILCHIMP_API_KEY', target: 'MAILCHIMP_LIST_ID', baseUrl: 'MAILCHIMP_API_BASE_URL' }, timeoutMs);
    case 'kit':
      return probe(kitProbe(config.kit), { key: 'KIT_API_KEY', target: 'KIT_FORM_ID', baseUrl: 'KIT_API_BASE_URL' }, timeoutMs);
    case 'resend': {
      const target = config.resend.target.kind === 'segment' ? 'RESEND_SEGMENT_ID' : 'RESEND_AUDIENCE_ID';
      return probe(resendProbe(config.resend), { key: 'RESEND_API_KEY', target, baseUrl: 'RESEND_BASE_URL' }, timeoutMs);
    }
  }
}

/** Mailchimp: the list itself (`GET /lists/{id}`), which needs a valid key and an existing list. */
function mailchimpProbe(c: MailchimpConfig): Probe {
  return { url: `${c.baseUrl}/lists/${encodeURIComponent(c.listId)}?fields=id`, headers: { authorization: `apikey ${c.apiKey}` } };
}

/**
 * Kit: the account's forms, where the form must be (v3 takes the key in the query, v4 in `X-Kit-Api-Key`).
 * Hint: v4 lists forms a page at a time; the largest page (1,000) holds every form of nearly every account.
 */
function kitProbe(c: KitConfig): Probe {
  const found = (body: unknown) => {
    const forms = (body as { forms?: unknown } | undefined)?.forms;
    return Array.isArray(forms) && forms.some((form) => String((form as { id?: unknown })?.id) === c.formId);
  };
  return c.version === 'v4'
    ? { url: `${c.baseUrl}/forms?per_page=1000`, headers: { 'x-kit-api-key': c.apiKey }, found }
    : { url: `${c.baseUrl}/forms?api_key=${encodeURIComponent(c.apiKey)}`, headers: {}, found };
}

/** Resend: the segment or the audience by its id. */
function resendProbe(c: ResendConfig): Probe {
  const path = c.target.kind === 'segment' ? 'segments' : 'audiences';
  return { url: `${c.baseUrl}/${path}/${encodeURIComponent(c.target.id)}`, headers: { authorization: `Bearer ${c.apiKey}` } };
}

async function probe({ url, headers, found }: Probe, names: Names, timeoutMs: number): Promise<KeyCheck> {
  let status: number;
  let text: string;
  try {
    const response = await fetch(url, { headers: { ...headers, accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    status = response.status;
    text = await readBoundedText(response);
  } catch (error) {
    return { result: 'unreachable', detail: `no answer (${describeNetworkError(error)})` };
  }
  return classifyKeyCheck(status, parseJson(text), names, found);
}

/** Maps the answer of a read-only check to what the start does with it. */
export function classifyKeyCheck(status: number, body: unknown, names: Names, found?: (body: unknown) => boolean): KeyCheck {
  if (status === 401 || status === 403) return { result: 'refused', variable: names.key, detail: `HTTP ${status}: the key was refused` };
  if (status === 404) return { result: 'refused', variable: names.target, detail: 'HTTP 404: not found' };
  if (isRedirect(status)) return { result: 'refused', variable: names.baseUrl, detail: `HTTP ${status} redirect, not followed` };
  if (status < 200 || status > 299 || body === undefined)
    return { result: 'unreachable', detail: `HTTP ${status}${body === undefined ? ' that is not JSON' : ''}` };
  if (found && !found(body)) return { result: 'refused', variable: names.target, detail: 'the key works, but the form is not among its forms' };
  return { result: 'ok', detail: `HTTP ${status}` };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
