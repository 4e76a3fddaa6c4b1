import type { KitConfig } from '../config.ts';
import { readBoundedText } from '../bounded-text.ts';
import { describeNetworkError, isRedirect, misconfigured, type NewsletterProvider, type SubscribeOutcome, unavailable } from './provider.ts';

/** How long one call to Kit may take when the caller gives no time. */
export const KIT_TIMEOUT_MS = 10_000;

/**
 * Kit (formerly ConvertKit) API v3 with `fetch` (SPEC.md 2.4 row 2): POST to the form's
 * subscribe resource with the key in the JSON body.
 * Hint: Kit answers an address already on the form with 200 too, so both read as success.
 */
export function createKitProvider(config: KitConfig): NewsletterProvider {
  const url = `${config.baseUrl}/forms/${encodeURIComponent(config.formId)}/subscribe`;
  return {
    name: 'kit',
    async subscribe(email, { signal = AbortSignal.timeout(KIT_TIMEOUT_MS) } = {}) {
      let status: number;
      let text: string;
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ api_key: config.apiKey, email }),
          // Following a 307 or 308 would post the key in this body to wherever it points.
          redirect: 'manual',
          signal,
        });
        status = response.status;
        // The body is read inside the try: a connection reset half-way through is "no answer" too.
        text = await readBoundedText(response);
      } catch (error) {
        return unavailable(`no answer (${describeNetworkError(error)})`);
      }
      return classifyKitAnswer(status, text, config.apiKey);
    },
  };
}

/** Kit's answer, as far as we read it. */
type KitBody = { subscription?: unknown; error?: unknown; message?: unknown };

/** Maps one answer of Kit's subscribe resource to an outcome. */
export function classifyKitAnswer(status: number, text: string, apiKey = ''): SubscribeOutcome {
  const body = parseObject(text) as KitBody | undefined;
  const words = [body?.error, body?.message].filter((w): w is string => typeof w === 'string').join(': ');
  // Kit's messages are short phrases, but the key must never reach a log whatever they say.
  const said = words ? ` ${redact(words, apiKey).slice(0, 200)}` : '';
  const detail = `HTTP ${status}${said}`;

  if (status === 200 || status === 201) {
    return typeof body?.subscription === 'object' && body.subscription !== null
      ? { ok: true }
      : unavailable(`HTTP ${status} without a subscription${body ? '' : ' (not JSON)'}`);
  }
  if (isRedirect(status)) return misconfigured(`HTTP ${status} redirect, not followed`, 'KIT_API_BASE_URL');
  if (status === 401 || status === 403) return misconfigured(detail, 'KIT_API_KEY');
  if (status === 404) return misconfigured(detail, 'KIT_FORM_ID');
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
