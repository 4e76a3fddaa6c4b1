import { Agent as HttpAgent } from 'node:http';
import { OUTSIDE_ANSWER_MAX_BYTES } from '../bounded-text.ts';
import { Agent as HttpsAgent } from 'node:https';
import type { MailchimpConfig } from './provider-settings.ts';
import { requireWhenNeeded } from '../lazy.ts';
import { describeNetworkError, isRedirect, misconfigured, type NewsletterProvider, type SubscribeOutcome, unavailable } from './provider.ts';

/** How long one call to Mailchimp may take when the caller gives no time; the client's own default is two minutes. */
export const MAILCHIMP_TIMEOUT_MS = 10_000;

/** The parts of superagent's answer we read. */
type Answer = { status: number; headers: Record<string, string | undefined>; body: unknown };

/** The parts of superagent's request we set. */
type SuperagentRequest = {
  redirects(count: number): SuperagentRequest;
  maxResponseSize(bytes: number): SuperagentRequest;
  buffer(on: boolean): SuperagentRequest;
  agent(agent: HttpAgent): SuperagentRequest;
  /** Set once the request has answered its caller. */
  called?: boolean;
  callback(error: unknown, response: unknown): void;
};

type ApiClient = {
  basePath: string;
  defaultHeaders: Record<string, string>;
  timeout: number;
  enableCookies: boolean;
  agent: { attachCookies(request: SuperagentRequest): void; saveCookies(response: unknown): void };
  setConfig(config: Record<string, string>): void;
  lists: {
    addListMemberWithHttpInfo(listId: string, body: { email_address: string; status: 'subscribed' | 'pending' }): Promise<{ response: Answer }>;
  };
};

/**
 * Mailchimp through its official client (docs/api/openapi.yaml): POST to the list-members
 * resource with `Authorization: apikey <key>`.
 * Hint: the header is set as a default header because the client's own auth sends Basic.
 */
export function createMailchimpProvider(config: MailchimpConfig, { doubleOptIn = false }: { doubleOptIn?: boolean } = {}): NewsletterProvider {
  // With double opt-in Mailchimp sends its own confirmation email to a `pending` member.
  const status = doubleOptIn ? 'pending' : 'subscribed';
  // The package exports one shared client; its constructor gives this provider its own.
  const ApiClientConstructor = requireWhenNeeded('@mailchimp/mailchimp_marketing/src/ApiClient.js') as new () => ApiClient;
  const client = new ApiClientConstructor();
  client.basePath = config.baseUrl;
  // No `server`: the client would otherwise replace the word "server" anywhere in the URL.
  client.setConfig({});
  client.defaultHeaders = { Authorization: `apikey ${config.apiKey}` };
  // Redirects are never followed: superagent's own following throws inside a socket
  // handler on Node 24 (the process exits) and re-sends the key to wherever it points.
  // The client builds each request inside its callApi and shows it to nobody but the
  // cookie jar, so the jar's hook is where following is switched off; no cookie is kept.
  client.enableCookies = true;
  // The same hook buffers every answer, whatever its type (an unbuffered one, say
  // application/octet-stream, is left as a stream whose later reset is an 'error' nobody
  // listens to: the process exits), caps it at 1 MiB (superagent buffers up to 200 MB, and
  // every call in flight could), and hands every request one keep-alive agent: superagent (3.8 as the SDK pins it; 10 through our overrides, decision 0121) otherwise asks
  // Node for a new agent per request (`agent: false`), so each call opened its own
  // connection (and TLS handshake) and left it all as garbage: 46 KB per call and 260 MB of
  // peak RSS over 8,000 calls (docs/performance.md).
  const agent = createAgent(config.baseUrl);
  client.agent = {
    attachCookies: (request) => answerOnce(request).redirects(0).buffer(true).maxResponseSize(OUTSIDE_ANSWER_MAX_BYTES).agent(agent),
    saveCookies: () => {},
  };
  return {
    name: 'mailchimp',
    async subscribe(email, { timeoutMs = MAILCHIMP_TIMEOUT_MS } = {}) {
      // The client takes a timeout, not a signal, and reads it while it builds the request,
      // which happens synchronously inside this call: setting it here is per call.
      client.timeout = Math.max(1, Math.ceil(timeoutMs));
      try {
        const { response } = await client.lists.addListMemberWithHttpInfo(config.listId, { email_address: email, status });
        return classifyMailchimpAnswer(response);
      } catch (error) {
        return classifyMailchimpError(error);
      }
    },
  };
}

/**
 * Makes a request ignore a second answer quietly: after a timeout or a cut answer superagent
 * 3.8 answers a second time and, having ignored it, prints "double callback bug" with
 * console.warn, a line of its own among the server's JSON log lines.
 */
function answerOnce(request: SuperagentRequest): SuperagentRequest {
  const callback = request.callback;
  request.callback = function (this: SuperagentRequest, error, response) {
    if (this.called) return;
    callback.call(this, error, response);
  };
  return request;
}

/**
 * One keep-alive agent for all calls to Mailchimp, as Node's global agent is configured.
 * Hint: it holds at most as many sockets as calls in flight (`RESILIENCE_DEFAULTS.maxInFlight`
 * bounds them); an idle one is closed after 5 s, before a server is likely to close it under us.
 */
function createAgent(baseUrl: string): HttpAgent {
  const options = { keepAlive: true, timeout: 5_000, scheduling: 'lifo' as const };
  return baseUrl.startsWith('https:') ? new HttpsAgent(options) : new HttpAgent(options);
}

/** Maps a 2xx answer: only a JSON member counts, as a proxy's or portal's HTML page is not Mailchimp. */
export function classifyMailchimpAnswer(response: Answer): SubscribeOutcome {
  if (isJson(response) && typeof response.body === 'object' && response.body !== null) return { ok: true };
  return unavailable(`HTTP ${response.status} that is not JSON`);
}

/** Maps a failed Mailchimp call (superagent's error) to an outcome. */
export function classifyMailchimpError(error: unknown): SubscribeOutcome {
  const e = error as { status?: number; response?: Answer; statusCode?: number; rawResponse?: unknown };
  // superagent's JSON parser fails with `statusCode` and the raw text, and no `status`.
  const unparsed = e.rawResponse !== undefined;
  const status = e.status ?? (unparsed ? e.statusCode : undefined);
  if (status === undefined) return unavailable(`no answer (${describeNetworkError(error)})`);

  const body = (!unparsed && e.response && isJson(e.response) ? e.response.body : undefined) as MailchimpProblem | undefined;
  const title = typeof body?.title === 'string' ? body.title : '';
  const detail = `HTTP ${status}${title ? ` ${title}` : ''}`;
  if (isRedirect(status))
    return misconfigured(`HTTP ${status} redirect, not followed`, 'MAILCHIMP_API_BASE_URL, or the data centre at the end of MAILCHIMP_API_KEY');
  if (status === 401 || status === 403) return misconfigured(detail, 'MAILCHIMP_API_KEY');
  if (status === 404) return misconfigured(detail, 'MAILCHIMP_LIST_ID');
  if (status === 429 || status >= 500) return unavailable(detail);
  if (body === undefined) return unavailable(`HTTP ${status} that is not JSON`);

  if (status === 400 && title === 'Member Exists') return { ok: true };
  if (status === 400 && title === 'Invalid Resource') {
    return isAboutMergeFields(body)
      ? misconfigured(`${detail}: merge fields`, 'the required merge fields of the audience MAILCHIMP_LIST_ID')
      : { ok: false, reason: 'invalid-address', detail };
  }
  if (status === 400 && /forgotten email/i.test(title)) return { ok: false, reason: 'forgotten', detail };
  if (status === 400 && /compliance state/i.test(title)) return { ok: false, reason: 'not-resubscribable', detail };
  return misconfigured(detail, 'MAILCHIMP_API_KEY and MAILCHIMP_LIST_ID');
}

/** Mailchimp's problem document (RFC 7807), as far as we read it. */
type MailchimpProblem = { title?: unknown; detail?: unknown; errors?: unknown };

/**
 * "Invalid Resource" also means a merge field the audience requires (a name, say) is
 * missing: that is the owner's audience settings, not the visitor's address.
 */
function isAboutMergeFields(body: MailchimpProblem): boolean {
  if (typeof body.detail === 'string' && /merge field/i.test(body.detail)) return true;
  const fields = Array.isArray(body.errors) ? body.errors.map((item) => (item as { field?: unknown })?.field) : [];
  return fields.some((field) => typeof field === 'string' && field !== '' && field !== 'email_address');
}

function isJson(response: Answer): boolean {
  return /[/+]json\b/i.test(response.headers?.['content-type'] ?? '');
}
