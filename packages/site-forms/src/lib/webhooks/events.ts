import { createHash, randomUUID } from 'node:crypto';
import type { SqlSession } from '../sql/sql.ts';

/** Every event the site tells webhooks and chat alerts about. */
export const EVENT_TYPES = ['contact.received', 'contact.held', 'newsletter.subscribed', 'newsletter.confirmed'] as const;

/** One of the events. */
export type EventType = (typeof EVENT_TYPES)[number];

/** An event as it is recorded and delivered: its id (the `webhook-id`), type, time and data. */
export type SiteEvent = { id: string; type: EventType; createdAt: string; data: Record<string, unknown> };

/**
 * Records an event for delivery, in the caller's transaction: the message and the news of it
 * are stored together or not at all (a crash between the two loses nothing).
 * Hint: the webhook worker fans each event out to the endpoints that take its type
 * (webhooks/deliveries.ts); an event no endpoint takes within a day is dropped.
 */
export async function recordEvent(tx: SqlSession, type: EventType, data: Record<string, unknown>, now: Date, id = eventId(now)): Promise<string> {
  // An id already recorded is news already told (a message released a second time): kept once.
  await tx.run('INSERT INTO events (id, type, data, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING', [
    id,
    type,
    JSON.stringify(data),
    now.toISOString(),
  ]);
  return id;
}

/**
 * The id of an event about one message: the same for every time the message makes that news
 * (accepted, released, marked spam and released again), so it is recorded once and, recorded
 * again after it was pruned or scrubbed, reaches a receiver with the id it may have seen.
 * Hint: the form of `eventId`, from the message's arrival and a hash of the type and the
 * message's id, so it still sorts near the message's other events.
 */
export function messageEventId(type: EventType, message: { id: number; createdAt: string }): string {
  const at = new Date(message.createdAt).getTime();
  const hash = createHash('sha256').update(`${type}\n${message.id}\n${message.createdAt}`).digest('hex');
  return `msg_${at.toString(16).padStart(12, '0')}${hash.slice(0, 16)}`;
}

/**
 * An event's id (the `webhook-id`): `msg_`, the time in milliseconds as 12 hex digits, then 64
 * random bits. Ids in time order keep the events' primary key growing at its end: a batch of
 * messages committed together writes one page of it, not one page each (random ids did, and
 * cost a fifth of a message's save). The random part comes from randomUUID's pooled bytes,
 * not a system call per id as randomBytes made.
 */
export function eventId(now: Date): string {
  const random = randomUUID();
  return `msg_${now.getTime().toString(16).padStart(12, '0')}${random.slice(0, 8)}${random.slice(28)}`;
}

/** The body of a Standard Webhooks delivery: `{"type", "timestamp", "data"}`. */
export function eventBody(event: SiteEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.createdAt, data: event.data });
}
