import { randomBytes } from 'node:crypto';
import type { SqlSession } from '../store/sql.ts';

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
export async function recordEvent(tx: SqlSession, type: EventType, data: Record<string, unknown>, now: Date): Promise<string> {
  const id = `msg_${randomBytes(12).toString('hex')}`;
  await tx.run('INSERT INTO events (id, type, data, created_at) VALUES (?, ?, ?, ?)', [id, type, JSON.stringify(data), now.toISOString()]);
  return id;
}

/** The body of a Standard Webhooks delivery: `{"type", "timestamp", "data"}`. */
export function eventBody(event: SiteEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.createdAt, data: event.data });
}
