import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import type { AlertDetail, Endpoint } from '../webhooks/endpoints.ts';
import { EVENT_TYPES, type EventType } from '../webhooks/events.ts';
import { fromProjectRoot } from '../project-root.ts';
import { isWebhookSecret } from '../webhooks/signature.ts';
import { mask } from './secrets.ts';
import { type ConfigConcern, hasScheme, optionalText, optionalUrl, readVariables } from './variables.ts';

/** Where the site tells of its events besides the owner's mail: a signed webhook and chat alerts. */
export type WebhooksConfig = {
  webhooks: {
    endpoints: Endpoint[];
    /** `WEBHOOK_ALLOW_PRIVATE`: deliveries may go to loopback and private networks (a receiver on the same host). */
    allowPrivate: boolean;
  };
};

const BOOLEAN = v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.picklist(['true', 'false'], 'must be true or false')), 'false');
const DETAILS = ['name-and-first-line', 'full', 'none'] as const;

const VARIABLES = {
  WEBHOOK_URL: optionalUrl,
  WEBHOOK_SECRET: optionalText,
  WEBHOOK_SECRET_PREVIOUS: optionalText,
  WEBHOOK_EVENTS: optionalText,
  WEBHOOK_ALLOW_PRIVATE: BOOLEAN,
  SLACK_WEBHOOK_URL: optionalUrl,
  DISCORD_WEBHOOK_URL: optionalUrl,
  TELEGRAM_BOT_TOKEN: optionalText,
  TELEGRAM_CHAT_ID: optionalText,
  TELEGRAM_API_URL: optionalUrl,
  NTFY_URL: optionalUrl,
  ALERT_EVENTS: optionalText,
  WEBHOOKS_FILE: optionalText,
  ALERT_DETAIL: v.optional(v.pipe(v.string(), v.trim(), v.picklist(DETAILS, `must be one of: ${DETAILS.join(', ')}`)), 'name-and-first-line'),
};

/** WEBHOOK_*, WEBHOOKS_FILE, SLACK_WEBHOOK_URL, DISCORD_WEBHOOK_URL, TELEGRAM_*, NTFY_URL, ALERT_EVENTS, ALERT_DETAIL. */
export const webhooks: ConfigConcern<WebhooksConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    const eventsOf = (variable: string, value: string | undefined, fallback: readonly EventType[]): EventType[] => {
      if (value === undefined) return [...fallback];
      const listed = value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
      const unknown = listed.filter((item) => !(EVENT_TYPES as readonly string[]).includes(item));
      if (unknown.length > 0 || listed.length === 0) problems.push(`${variable} must be a comma-separated list of: ${EVENT_TYPES.join(', ')}`);
      return listed.filter((item): item is EventType => (EVENT_TYPES as readonly string[]).includes(item));
    };
    const endpoints: Endpoint[] = [];
    if (e.WEBHOOK_URL) {
      const secrets = [e.WEBHOOK_SECRET, e.WEBHOOK_SECRET_PREVIOUS].filter((secret): secret is string => secret !== undefined);
      if (!e.WEBHOOK_SECRET) problems.push('WEBHOOK_SECRET is required when WEBHOOK_URL is set (make one with: echo whsec_$(openssl rand -base64 32))');
      for (const [name, secret] of [
        ['WEBHOOK_SECRET', e.WEBHOOK_SECRET],
        ['WEBHOOK_SECRET_PREVIOUS', e.WEBHOOK_SECRET_PREVIOUS],
      ] as const) {
        if (secret !== undefined && !isWebhookSecret(secret)) problems.push(`${name} must be whsec_ followed by the base64 of 24 to 64 random bytes`);
      }
      endpoints.push({ name: 'webhook', kind: 'standard', url: e.WEBHOOK_URL, secrets, events: eventsOf('WEBHOOK_EVENTS', e.WEBHOOK_EVENTS, EVENT_TYPES) });
    } else if (e.WEBHOOK_SECRET && !env.WEBHOOK_URL?.trim()) {
      problems.push('WEBHOOK_URL is required when WEBHOOK_SECRET is set');
    }
    // Chat alerts: a new message by default; held spam would make them noise.
    const alertEvents = eventsOf('ALERT_EVENTS', e.ALERT_EVENTS, ['contact.received']);
    const detail = e.ALERT_DETAIL as AlertDetail;
    if (e.SLACK_WEBHOOK_URL) endpoints.push({ name: 'slack', kind: 'slack', url: e.SLACK_WEBHOOK_URL, events: alertEvents, detail });
    if (e.DISCORD_WEBHOOK_URL) endpoints.push({ name: 'discord', kind: 'discord', url: e.DISCORD_WEBHOOK_URL, events: alertEvents, detail });
    if (e.TELEGRAM_BOT_TOKEN || e.TELEGRAM_CHAT_ID) {
      if (!e.TELEGRAM_BOT_TOKEN || !e.TELEGRAM_CHAT_ID) problems.push('TELEGRAM_BOT_TOKEN and TELEGRAM_CHAT_ID go together');
      else if (!/^\d+:[\w-]+$/.test(e.TELEGRAM_BOT_TOKEN)) problems.push('TELEGRAM_BOT_TOKEN must be the token BotFather gave, such as 123456:ABC-def');
      else {
        const base = e.TELEGRAM_API_URL || 'https://api.telegram.org';
        endpoints.push({
          name: 'telegram',
          kind: 'telegram',
          url: `${base}/bot${e.TELEGRAM_BOT_TOKEN}/sendMessage`,
          chatId: e.TELEGRAM_CHAT_ID,
          events: alertEvents,
          detail,
        });
      }
    }
    if (e.NTFY_URL) endpoints.push({ name: 'ntfy', kind: 'ntfy', url: e.NTFY_URL, events: alertEvents, detail });
    if (e.WEBHOOKS_FILE) {
      const more = readWebhooksFile(fromProjectRoot(e.WEBHOOKS_FILE));
      if (more.ok) endpoints.push(...more.endpoints);
      else problems.push(`WEBHOOKS_FILE ${more.problem}`);
    }
    const names = endpoints.map((endpoint) => endpoint.name);
    const twice = names.find((name, index) => names.indexOf(name) !== index);
    if (twice) problems.push(`WEBHOOKS_FILE names the endpoint "${twice}" twice (webhook, slack, discord, telegram and ntfy are taken by the variables)`);
    return { config: { webhooks: { endpoints, allowPrivate: e.WEBHOOK_ALLOW_PRIVATE === 'true' } }, problems };
  },
  describe: ({ webhooks: w }) => ({
    webhooks:
      w.endpoints.length === 0
        ? 'off'
        : w.endpoints.map((endpoint) => ({
            name: endpoint.name,
            // Telegram's address holds the bot's token: only the service is named.
            url: endpoint.kind === 'telegram' ? 'Telegram Bot API' : withoutSecrets(endpoint.url),
            events: endpoint.events,
            ...(endpoint.secrets && { secrets: endpoint.secrets.map(mask) }),
          })),
    ...(w.allowPrivate && { webhookAllowPrivate: true }),
  }),
};

const FILE_ENTRY = v.strictObject({
  name: v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'must be lower-case letters, digits and dashes')),
  url: v.pipe(
    v.string(),
    v.check((url) => hasScheme(url, ['http', 'https']), 'must be an absolute http(s) URL'),
  ),
  secret: v.optional(v.pipe(v.string(), v.check(isWebhookSecret, 'must be whsec_ followed by the base64 of 24 to 64 random bytes'))),
  previousSecret: v.optional(v.pipe(v.string(), v.check(isWebhookSecret, 'must be whsec_ followed by the base64 of 24 to 64 random bytes'))),
  kind: v.optional(v.picklist(['standard', 'slack', 'discord', 'ntfy'], 'must be standard, slack, discord or ntfy'), 'standard'),
  events: v.optional(v.array(v.picklist(EVENT_TYPES, `must be among: ${EVENT_TYPES.join(', ')}`))),
  detail: v.optional(v.picklist(DETAILS, `must be one of: ${DETAILS.join(', ')}`)),
});

/**
 * More endpoints from a JSON file (`WEBHOOKS_FILE`): a list of `{name, url, secret, previousSecret,
 * kind, events, detail}`, each with its own events and secret. Read once at start.
 */
export function readWebhooksFile(path: string): { ok: true; endpoints: Endpoint[] } | { ok: false; problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    return { ok: false, problem: (error as NodeJS.ErrnoException).code ? 'cannot be read' : 'is not JSON' };
  }
  const result = v.safeParse(v.array(FILE_ENTRY), parsed);
  if (!result.success) {
    const issue = result.issues[0];
    return { ok: false, problem: `${v.getDotPath(issue) ?? 'the list'} ${issue.message}` };
  }
  const endpoints: Endpoint[] = [];
  for (const [index, entry] of result.output.entries()) {
    if (entry.kind === 'standard' && !entry.secret) return { ok: false, problem: `${index}.secret is required for a standard webhook` };
    const secrets = [entry.secret, entry.previousSecret].filter((secret): secret is string => secret !== undefined);
    endpoints.push({
      name: entry.name,
      kind: entry.kind,
      url: entry.url.replace(/\/+$/, '') || entry.url,
      events: entry.events ?? (entry.kind === 'standard' ? [...EVENT_TYPES] : ['contact.received']),
      ...(entry.kind === 'standard' ? { secrets } : { detail: entry.detail ?? 'name-and-first-line' }),
    });
  }
  return { ok: true, endpoints };
}

/** An address as the log may show it: the origin and path, never a query or user (Slack's and Discord's paths are their secret: cut). */
function withoutSecrets(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname.split('/').slice(0, 3).join('/')}/…`;
}
