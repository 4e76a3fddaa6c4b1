import { formatSize } from '../files/size.ts';
import type { EventType, SiteEvent } from './events.ts';
import { eventBody } from './events.ts';

/** How much of a message a chat alert shows (`ALERT_DETAIL`). */
export type AlertDetail = 'name-and-first-line' | 'full' | 'none';

/** Where deliveries go: a signed webhook, or a chat service's own format. */
export type Endpoint = {
  /** Its name in the deliveries table and the admin: `webhook`, `slack`, `discord`, `telegram`, `ntfy`. */
  name: string;
  kind: 'standard' | 'slack' | 'discord' | 'telegram' | 'ntfy' | 'auto-reply';
  /** The address posted to; for Telegram it holds the bot's token, so it is never logged or shown. */
  url: string;
  /** The events it takes. */
  events: readonly EventType[];
  /** The signing secrets, newest first (standard webhooks only). */
  secrets?: readonly string[];
  /** How much of a message a chat alert shows. */
  detail?: AlertDetail;
  /** Telegram's chat. */
  chatId?: string;
};

/** One request to an endpoint: its body and the headers that say what it is (signatures come at send time). */
export type Formatted = { body: string; headers: Record<string, string> };

/**
 * The request an endpoint expects for an event: the Standard Webhooks body, or a chat
 * message in the service's format.
 * Hint: a visitor's text is data, never markup: Slack's `<`, `>` and `&` are escaped and mrkdwn
 * is off, Discord's markdown is escaped and it mentions nobody, Telegram and ntfy get plain text.
 */
export function formatFor(endpoint: Endpoint, event: SiteEvent, site: string): Formatted {
  const json = { 'content-type': 'application/json' };
  if (endpoint.kind === 'standard') return { body: eventBody(event), headers: json };
  const text = alertText(event, site, endpoint.detail ?? 'name-and-first-line');
  switch (endpoint.kind) {
    case 'slack':
      // Slack has no escape for `*`, `_` or `~`: the text is sent with its mrkdwn turned off.
      return {
        body: JSON.stringify({ text: text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'), mrkdwn: false }),
        headers: json,
      };
    case 'discord':
      return { body: JSON.stringify({ content: cut(discordEscaped(text), 2000), allowed_mentions: { parse: [] } }), headers: json };
    case 'telegram':
      return { body: JSON.stringify({ chat_id: endpoint.chatId, text: cut(text, 4096), disable_web_page_preview: true }), headers: json };
    case 'auto-reply':
      // Sent as mail by contact/auto-reply.ts, never posted.
      return { body: '', headers: {} };
    case 'ntfy':
      return {
        body: cut(text, 4096),
        headers: { 'content-type': 'text/plain; charset=utf-8', title: asciiHeader(`${site}: ${TITLES[event.type]}`), tags: 'envelope' },
      };
  }
}

const TITLES: Record<EventType, string> = {
  'contact.received': 'new message',
  'contact.held': 'message held as spam',
  'newsletter.subscribed': 'new subscriber',
  'newsletter.confirmed': 'subscriber confirmed',
};

/** The text of a chat alert: what happened on which site, and as much of the message as the owner chose. */
export function alertText(event: SiteEvent, site: string, detail: AlertDetail): string {
  const data = event.data as {
    id?: number;
    name?: string;
    email?: string;
    message?: string;
    form?: string;
    fields?: Record<string, unknown>;
    files?: Array<{ name: string; size: number; url: string }>;
  };
  // An owner's form (decision 0131) is named, and its fields are its text.
  const head = `${site}: ${TITLES[event.type]}${data.form ? ` (${data.form})` : ''}`;
  if (detail === 'none') return data.id === undefined ? head : `${head} (#${data.id})`;
  if (event.type.startsWith('newsletter.')) return `${head}: ${data.email ?? ''}`;
  const from = `${head} from ${oneLine(data.name ?? '')} <${oneLine(data.email ?? '')}>`;
  const fields = Object.entries(data.fields ?? {}).map(([name, value]) => `${name}: ${String(value ?? '')}`);
  const message = [data.message ?? '', ...fields].filter(Boolean).join('\n');
  // Each file by name and size with its signed link (webhooks/files.ts): the alert opens it, never carries it.
  const files = (data.files ?? []).map((file) => `\n${oneLine(file.name)} (${formatSize(file.size, 'en')}): ${file.url}`).join('');
  if (detail === 'full') return `${from}\n\n${message}${files}`;
  const first = oneLine(message.trim().split(/\r?\n/, 1)[0] ?? '');
  return `${from}\n${cut(first, 200)}${files}`;
}

/**
 * Text Discord shows as typed: its inline markup (bold, italic, strike, code, spoilers, masked
 * links, `<…>` mentions and timestamps) and the line starts that make headings, quotes and lists
 * are escaped with a backslash, which Discord drops when it shows them.
 */
function discordEscaped(text: string): string {
  return text
    .replace(/[\\*_~`|[\]<]/g, '\\$&')
    .replace(/^([ \t]*)([#>+-])/gm, '$1\\$2')
    .replace(/^([ \t]*\d+)\./gm, '$1\\.');
}

function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/gu, ' ').trim();
}

function cut(text: string, max: number): string {
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

/** A header value of printable ASCII (ntfy's Title): other characters become `?`. */
function asciiHeader(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?');
}
