import type { KitConfig } from './provider-settings.ts';
import { readBoundedText } from '../bounded-text.ts';
import { describeNetworkError, isRedirect, misconfigured, type NewsletterProvider, type SubscribeOutcome, unavailable } from './provider.ts';

/** How long one call to Kit may take when the caller gives no time. */
export const KIT_TIMEOUT_MS = 10_000;

/**
 * Kit (formerly ConvertKit): with KIT_API_VERSION=v3 the spec's call (docs/api/openapi.yaml), one
 * POST to the form's subscribe resource with the key in the JSON body; with v4, Kit's current
 * API, two calls with the key in `X-Kit-Api-Key`: create the subscriber, then add them to the form.
 * Hint: Kit answers an address already on the form with 200 too, so both read as success.
 */
export function createKitProvider(config: KitConfig): NewsletterProvider {
  const subscribe = config.version === 'v4' ? subscribeV4(config) : subscribeV3(config);
  return { name: 'kit', subscribe: (email, { signal = AbortSignal.timeout(KIT_TIMEOUT_MS) } = {}) => subscribe(email, signal) };
}

type Subscribe = (email: string, signal: AbortSignal) => Promise<SubscribeOutcome>;

function subscribeV3(config: KitConfig): Subscribe {
  const url = `${config.baseUrl}/forms/${encodeURIComponent(config.formId)}/subscribe`;
  return async (email, signal) => {
    const answer = await post(url, { 'content-type': 'application/json' }, { api_key: config.apiKey, email }, signal);
    return 'outcome' in answer ? answer.outcome : classifyKitAnswer(answer.status, answer.text, config.apiKey);
  };
}

/**
 * Kit v4's form subscription: `POST /subscribers` (an upsert, so a retry after a failed second
 * call is safe), then `POST /forms/{id}/subscribers` by address.
 * Hint: a failure of the second call says so in its detail: the subscriber then exists in
 * Kit without the form, and the retry adds them.
 */
function subscribeV4(config: KitConfig): Subscribe {
  const headers = { 'content-type': 'application/json', 'x-kit-api-key': config.apiKey };
  const formUrl = `${config.baseUrl}/forms/${encodeURIComponent(config.formId)}/subscribers`;
  return async (email, signal) => {
    const created = await post(`${config.baseUrl}/subscribers`, headers, { email_address: email }, signal);
    const first = 'outcome' in created ? created.outcome : classifyKitAnswer(created.status, created.text, config.apiKey, V4_SUBSCRIBER);
    if (!first.ok) return first;
    const added = await post(formUrl, headers, { email_address: email }, signal);
    const second = 'outcome' in added ? added.outcome : classifyKitAnswer(added.status, added.text, config.apiKey, V4_FORM);
    return second.ok ? second : { ...second, detail: `subscriber saved, adding to the form failed: ${second.detail}` };
  };
}

/** One POST to Kit: its status and text, or the outcome of getting no answer. */
async function post(
  url: string,
  headers: Record<string, string>,
  body: object,
  signal: AbortSignal,
): Promise<{ status: number; text: string } | { outcome: SubscribeOutcome }> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, accept: 'application/json' },
      body: JSON.stringify(body),
      // Following a 307 or 308 would post the key to wherever it points.
      redirect: 'manual',
      signal,
    });
    // The body is read inside the try: a connection reset half-way through is "no answer" too.
    return { status: response.status, text: await readBoundedText(response) };
  } catch (error) {
    return { outcome: unavailable(`no answer (${describeNetworkError(error)})`) };
  }
}

/** Which of Kit's answers is read: the object a success carries, and what a 404 means. */
type KitCall = { success: 'subscription' | 'subscriber'; notFound: 'KIT_FORM_ID' | 'KIT_API_BASE_URL' };
const V3_FORM: KitCall = { success: 'subscription', notFound: 'KIT_FORM_ID' };
const V4_SUBSCRIBER: KitCall = { success: 'subscriber', notFound: 'KIT_API_BASE_URL' };
const V4_FORM: KitCall = { success: 'subscriber', notFound: 'KIT_FORM_ID' };

/** Kit's answer, as far as we read it: v3 says `error` and `message`, v4 a list of `errors`. */
type KitBody = { subscription?: unknown; subscriber?: unknown; error?: unknown; message?: unknown; errors?: unknown };

/** Maps one answer of a Kit call (v3's form subscribe by default) to an outcome. */
export function classifyKitAnswer(status: number, text: string, apiKey = '', call: KitCall = V3_FORM): SubscribeOutcome {
  const body = parseObject(text) as KitBody | undefined;
  const errors = Array.isArray(body?.errors) ? body.errors : [];
  const words = [body?.error, body?.message, ...errors].filter((w): w is string => typeof w === 'string').join(': ');
  // Kit's messages are short phrases, but the key must never reach a log whatever they say.
  const said = words ? ` ${redact(words, apiKey).slice(0, 200)}` : '';
  const detail = `HTTP ${status}${said}`;

  if (status === 200 || status === 201) {
    const success = body?.[call.success];
    return typeof success === 'object' && success !== null ? { ok: true } : unavailable(`HTTP ${status} without a ${call.success}${body ? '' : ' (not JSON)'}`);
  }
  if (isRedirect(status)) return misconfigured(`HTTP ${status} redirect, not followed`, 'KIT_API_BASE_URL');
  if (status === 401 || status === 403) return misconfigured(detail, 'KIT_API_KEY');
  if (status === 404) return misconfigured(detail, call.notFound);
  if (status === 429 || status >= 500) return unavailable(detail);
  if (body === undefined) return unavailable(`HTTP ${status} that is not JSON`);
  if ((status === 400 || status === 422) && /e-?mail/i.test(words)) return { ok: false, reason: 'invalid-address', detail };
  return misconfigured(detail, 'KIT_API_KEY and KIT_FORM_ID');
}

function parseObject(text: string): object | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

function redact(text: string, secret: string): string {
  return secret ? text.replaceAll(secret, '***') : text;
}
