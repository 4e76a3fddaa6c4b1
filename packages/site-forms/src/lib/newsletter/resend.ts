import type { ResendConfig } from './provider-settings.ts';
import { readBoundedText } from '../bounded-text.ts';
import { requireWhenNeeded } from '../lazy.ts';
import { isRedirect, misconfigured, type NewsletterProvider, type SubscribeOutcome, unavailable } from './provider.ts';

/** How long one call to Resend may take when the caller gives no time. */
export const RESEND_TIMEOUT_MS = 10_000;

/** An error value of the Resend SDK: `{ name, message, statusCode }`. */
export type ResendError = { name?: string; message?: string; statusCode?: number | null };

/**
 * Resend's contacts API through its SDK: with a segment (RESEND_SEGMENT_ID), the current
 * `POST /contacts` with `segments: [{ id }]`; with an audience (RESEND_AUDIENCE_ID), the
 * spec's call (docs/api/openapi.yaml), a contact with `email` and `audienceId`.
 * Hint: the SDK answers `{ data, error }` and never throws, even when the network fails;
 * its constructor does throw without a key, so this is built only when Resend is chosen.
 */
export function createResendProvider(config: ResendConfig): NewsletterProvider {
  // Key and address are passed, not left to the SDK's own reading of the environment,
  // so that config.ts stays the one place that reads it.
  const { Resend } = requireWhenNeeded('resend') as typeof import('resend');
  const resend = new Resend(config.apiKey, { baseUrl: config.baseUrl });
  // The SDK builds the path, headers and body; the call itself is ours (see `sendToResend`).
  resend.fetchRequest = (path, options) => sendToResend(`${resend.baseUrl}${path}`, options as RequestInit) as never;
  const { target } = config;
  // The SDK puts an audience id into the path as it is: encoded here, an id can never become a path.
  const contact = (email: string) =>
    target.kind === 'segment' ? { email, segments: [{ id: target.id }] } : { email, audienceId: encodeURIComponent(target.id) };
  const targetVariable = target.kind === 'segment' ? 'RESEND_SEGMENT_ID' : 'RESEND_AUDIENCE_ID';
  return {
    name: 'resend',
    async subscribe(email, { signal = AbortSignal.timeout(RESEND_TIMEOUT_MS) } = {}) {
      const { data, error } = await resend.contacts.create(contact(email), { signal });
      if (error) return classifyResendError(error, targetVariable);
      return data && typeof data.id === 'string' ? { ok: true } : unavailable('HTTP 2xx without a contact');
    },
  };
}

/**
 * One call to Resend's API, answering as the SDK's own transport does (`{ data, error }`)
 * but following no redirect and keeping the status on every error.
 * Hint: the SDK follows redirects (a 307 re-sends the key's header to wherever it points)
 * and drops the status of an error body it cannot read, so a JSON 503 from a proxy would
 * have looked like a wrong audience.
 */
export async function sendToResend(url: string, init: RequestInit): Promise<{ data: unknown; error: ResendError | null }> {
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, { ...init, redirect: 'manual' });
    // Read inside the try: a connection reset half-way through is "no answer" too.
    text = await readBoundedText(response);
  } catch {
    return { data: null, error: { name: 'application_error', statusCode: null } };
  }
  const body = parseObject(text);
  if (response.ok) return body ? { data: body, error: null } : { data: null, error: { name: 'application_error', statusCode: response.status } };
  // Not JSON at all is what the SDK calls `application_error`; JSON of another shape is not Resend's.
  if (!body) return { data: null, error: { name: 'application_error', statusCode: response.status } };
  const said = body as ResendError;
  return {
    data: null,
    error: {
      name: typeof said.name === 'string' ? said.name : 'unrecognised_error',
      message: typeof said.message === 'string' ? said.message : '',
      statusCode: response.status,
    },
  };
}

function parseObject(text: string): object | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

const KEY_ERRORS = new Set(['missing_api_key', 'invalid_api_key', 'restricted_api_key', 'invalid_access', 'security_error']);
const BUSY_ERRORS = new Set(['rate_limit_exceeded', 'application_error', 'internal_server_error', 'concurrent_idempotent_requests']);
const INPUT_ERRORS = new Set(['validation_error', 'invalid_parameter', 'missing_required_field']);
const QUOTA_ERRORS = new Set(['daily_quota_exceeded', 'monthly_quota_exceeded']);

/**
 * Maps an error value of the SDK to an outcome.
 * Hint: the SDK reports an answer that is not JSON, a reset and a timeout all as
 * `application_error`, so its status code, when there is one, decides first.
 */
export function classifyResendError(error: ResendError, targetVariable: 'RESEND_SEGMENT_ID' | 'RESEND_AUDIENCE_ID'): SubscribeOutcome {
  const name = error.name ?? 'unknown';
  const status = typeof error.statusCode === 'number' ? error.statusCode : undefined;
  const message = typeof error.message === 'string' ? error.message : '';
  const detail = `${status === undefined ? 'no status' : `HTTP ${status}`} ${name}`;

  if (/already exists/i.test(message)) return { ok: true };
  if (status !== undefined && isRedirect(status)) return misconfigured(`HTTP ${status} redirect, not followed`, 'RESEND_BASE_URL');
  if (KEY_ERRORS.has(name) || status === 401 || status === 403) {
    return misconfigured(detail, name === 'restricted_api_key' ? 'RESEND_API_KEY (it needs full access, not sending only)' : 'RESEND_API_KEY');
  }
  if (name === 'not_found' || status === 404) return misconfigured(detail, targetVariable);
  if (QUOTA_ERRORS.has(name)) return misconfigured(detail, 'the quota of the Resend account of RESEND_API_KEY');
  if (BUSY_ERRORS.has(name) || status === 429 || (status !== undefined && status >= 500)) {
    return unavailable(status === undefined ? `no answer or not JSON (${name})` : detail);
  }
  if (INPUT_ERRORS.has(name) && /e-?mail/i.test(message)) return { ok: false, reason: 'invalid-address', detail };
  return misconfigured(detail, targetVariable);
}
