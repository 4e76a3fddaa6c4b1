import type { Logger } from '../log.ts';
import type { Sql } from '../sql/sql.ts';
import { createDeliveries, type Deliveries } from './deliveries.ts';
import type { Endpoint } from './endpoints.ts';
import { type EventType, recordEvent } from './events.ts';
import { createWebhookWorker, type WebhookWorker, type WebhookWorkerDeps } from './worker.ts';

/** The automatic reply as an endpoint: accepted messages only. */
const AUTO_REPLY_ENDPOINT: Endpoint = { name: 'auto-reply', kind: 'auto-reply', url: '', events: ['contact.received'] };

/** Records an event outside a message's transaction (a subscription), and wakes the worker. */
export type EventRecorder = { record(type: EventType, data: Record<string, unknown>): Promise<void> };

/** Webhooks and chat alerts as the server runs them: the deliveries, the worker (none without endpoints) and the recorder. */
export type Webhooks = { deliveries: Deliveries; worker: WebhookWorker | undefined; events: EventRecorder };

/**
 * Whether anything reads the news of a message: an endpoint, or the automatic reply (an endpoint
 * of its own). Without a reader no event is recorded, for messages (the store's `events`) as for
 * subscriptions (below): an unread event would cost every post a write and be dropped a day later.
 */
export function eventsRead(endpoints: readonly Endpoint[], autoReply: boolean): boolean {
  return endpoints.length > 0 || autoReply;
}

/** Builds the webhooks of a deployment from its endpoints (config/webhooks.ts). */
export function createWebhooks(
  sql: Sql,
  { endpoints, allowPrivate }: { endpoints: readonly Endpoint[]; allowPrivate: boolean },
  {
    siteName,
    logger,
    autoReply,
    leaseMs,
    maxAttempts,
    withFiles,
  }: {
    siteName: string;
    logger: Logger;
    autoReply?: WebhookWorkerDeps['autoReply'];
    leaseMs?: number;
    maxAttempts?: number;
    withFiles?: WebhookWorkerDeps['withFiles'];
  },
): Webhooks {
  const deliveries = createDeliveries(sql, { maxAttempts });
  // The automatic reply is one more endpoint: a mail to the sender of each accepted message.
  const all = autoReply ? [...endpoints, AUTO_REPLY_ENDPOINT] : endpoints;
  const worker = eventsRead(endpoints, Boolean(autoReply))
    ? createWebhookWorker({ deliveries, endpoints: all, siteName, allowPrivate, logger, autoReply, leaseMs, withFiles })
    : undefined;
  return {
    deliveries,
    worker,
    events: {
      async record(type, data) {
        // Without an endpoint nobody would read it: nothing is kept.
        if (!worker) return;
        await recordEvent(sql, type, data, new Date());
        worker.poke();
      },
    },
  };
}
