import { createScheduler } from '../scheduler.ts';
import { describeError, type Logger } from '../log.ts';
import type { Deliveries, TryEnd } from './deliveries.ts';
import { type Endpoint, formatFor } from './endpoints.ts';
import type { SiteEvent } from './events.ts';
import { postDelivery } from './sender.ts';
import { signedHeaders } from './signature.ts';
import { drain, type Lease } from '../queue/queue.ts';
import { QUEUES } from '../queue/settings.ts';
import type { Delivery } from './deliveries.ts';

/** What the worker needs: the deliveries, the endpoints, the site's name for chat alerts, and the log. */
export type WebhookWorkerDeps = {
  deliveries: Deliveries;
  endpoints: readonly Endpoint[];
  siteName: string;
  allowPrivate: boolean;
  logger: Logger;
  now?: () => Date;
  post?: typeof postDelivery;
  /** How long a delivery taken by this instance is kept from the others (a killed instance's is taken up after it). */
  leaseMs?: number;
  /** Sends the automatic reply of an event (the `auto-reply` endpoint), by mail. */
  autoReply?: ((event: SiteEvent, now: Date) => Promise<TryEnd>) | undefined;
  /** Adds a message's files to its event at each try, each with a signed link (webhooks/files.ts `eventFiles`). */
  withFiles?: ((event: SiteEvent) => Promise<SiteEvent>) | undefined;
};

/** A delivery taken under its lease, with its event. */
type Taken = { delivery: Delivery; event: SiteEvent; lease: Lease };

/** How a try ended, and the endpoint it was made to (none when it was not made). */
type Tried = { end: TryEnd; endpoint?: Endpoint };

/** The background sender of webhooks and chat alerts; `runPass` answers once the sends it started have ended. */
export type WebhookWorker = { start(): void; poke(): void; runPass(): Promise<void>; stop(): Promise<void> };

/**
 * Fans recorded events out to the endpoints, then sends every due delivery, each under a lease
 * so that several instances share the work and a killed one's deliveries are taken up again
 * when the lease runs out. A delivery goes until a 2xx, on the schedule.
 * Hint: each endpoint is sent to by a lane of its own, in order, and the lanes run side by
 * side and outlive the pass that started them: a receiver that hangs until the timeout holds
 * up only its own deliveries, never another endpoint's, the automatic reply or the next pass.
 * An endpoint whose receiver answered 410 is stopped (logged once) until its address changes.
 */
export function createWebhookWorker({
  deliveries,
  endpoints,
  siteName,
  allowPrivate,
  logger,
  now: clock,
  post = postDelivery,
  autoReply,
  leaseMs = QUEUES.webhooks.leaseMs,
  withFiles,
}: WebhookWorkerDeps): WebhookWorker {
  // The queue's times: the database's clock unless a test passes its own (decision 0270).
  const queueClock = clock;
  const now = clock ?? (() => new Date());
  const byName = new Map(endpoints.map((endpoint) => [endpoint.name, endpoint]));
  /** The endpoints stopped by a 410, with the address that answered it; read again at each pass. */
  let gone = new Map<string, string>();
  /** The lanes under way, by endpoint; `again` makes one look once more before it ends (a pass found more). */
  const lanes = new Map<string, { again: boolean; done: Promise<void> }>();

  async function pass(signal: AbortSignal): Promise<void> {
    gone = await deliveries.goneEndpoints();
    const running = endpoints.filter((endpoint) => gone.get(endpoint.name) !== endpoint.url);
    await deliveries.fanOut(running, queueClock?.());
    for (const name of await deliveries.dueEndpoints(queueClock?.())) {
      const lane = lanes.get(name);
      if (lane) lane.again = true;
      else startLane(name, signal);
    }
  }

  function startLane(name: string, signal: AbortSignal): void {
    const lane = { again: false, done: Promise.resolve() };
    lane.done = sendAll(name, lane, signal)
      .catch((error: unknown) => logger.warn('webhook.worker_failed', { error: describeError(error), note: 'tried again in a few seconds' }))
      .finally(() => lanes.delete(name));
    lanes.set(name, lane);
  }

  /** Sends an endpoint's due deliveries one after another, until none is left (and once more when a pass found more meanwhile). */
  async function sendAll(name: string, lane: { again: boolean }, signal: AbortSignal): Promise<void> {
    const work = {
      claim: (start: Date | undefined, leaseMs: number) => deliveries.claim(start, leaseMs, name),
      send: (taken: Taken) => attempt(name, taken),
      finish: (taken: Taken, tried: Tried) => finish(name, taken, tried),
    };
    for (;;) {
      await drain(signal, work, { leaseMs, clock: queueClock });
      if (signal.aborted || !lane.again) return;
      lane.again = false;
    }
  }

  /** The try of one delivery: the automatic reply, or the POST; none to an endpoint taken off the configuration or stopped by a 410. */
  async function attempt(name: string, { event }: Taken): Promise<Tried> {
    const endpoint = byName.get(name);
    // Taken off the configuration, or stopped by a 410: it ends here, recorded.
    if (!endpoint || gone.get(endpoint.name) === endpoint.url) return { end: { kind: 'gone', status: 410 } };
    const end = endpoint.kind === 'auto-reply' && autoReply ? await autoReply(event, now()) : await send(endpoint, event);
    return { end, endpoint };
  }

  async function finish(name: string, { delivery, event, lease }: Taken, { end, endpoint }: Tried): Promise<void> {
    const status = await deliveries.finish(delivery.id, lease, end, queueClock?.());
    if (!endpoint) return;
    if (end.kind === 'gone') {
      gone.set(endpoint.name, endpoint.url);
      if (await deliveries.stopEndpoint(endpoint.name, endpoint.url)) {
        logger.warn('webhook.endpoint_stopped', { endpoint: name, note: 'its receiver answered 410 Gone; change its address to start it again' });
      }
    } else if (status === 'failed') {
      logger.warn('webhook.delivery_failed', {
        endpoint: endpoint.name,
        delivery: delivery.id,
        type: event.type,
        error: end.kind === 'retry' ? end.error : '',
      });
    } else if (end.kind === 'retry' && delivery.attempts === 1) {
      // The first failure of a delivery is worth a line; its retries are in the admin.
      logger.info('webhook.delivery_retrying', { endpoint: endpoint.name, delivery: delivery.id, error: end.error });
    }
  }

  /** Until every lane has ended, those that start meanwhile included. */
  async function lanesEnded(): Promise<void> {
    while (lanes.size > 0) await Promise.all([...lanes.values()].map((lane) => lane.done));
  }

  async function send(endpoint: Endpoint, recorded: SiteEvent): Promise<TryEnd> {
    let event = recorded;
    try {
      if (withFiles) event = await withFiles(recorded);
    } catch {
      // The store is down (it has logged why): a try without the files' links would be a payload missing them; later, whole.
      return { kind: 'retry', status: null, error: "the message's files could not be read" };
    }
    const { body, headers } = formatFor(endpoint, event, siteName);
    const signed =
      endpoint.kind === 'standard' ? { ...headers, ...signedHeaders(event.id, Math.floor(now().getTime() / 1000), body, endpoint.secrets ?? []) } : headers;
    return post({ url: endpoint.url, body, headers: signed, allowPrivate });
  }

  const scheduler = createScheduler({
    pass,
    nextDueAt: () => deliveries.nextDueAt(),
    pollIntervalMs: QUEUES.webhooks.pollMs,
    onError: (error) => logger.warn('webhook.worker_failed', { error: describeError(error), note: 'tried again in a few seconds' }),
  });
  return {
    start() {
      if (scheduler.start()) logger.info('webhook.worker_started', { endpoints: endpoints.map((endpoint) => endpoint.name) });
    },
    poke: () => scheduler.poke(),
    async runPass() {
      await scheduler.runPass();
      await lanesEnded();
    },
    async stop() {
      await scheduler.stop();
      await lanesEnded();
    },
  };
}
