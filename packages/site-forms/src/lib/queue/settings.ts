/**
 * The one table of the queues' settings (decision 0240): each queue's poll interval, its lease
 * and how often its upkeep runs. The workers, the housekeeping and the docs read it here, and
 * every list of the queues is built from its keys.
 * Hint: `DELIVERY_LEASE_MS` sets the lease of the queues marked `leaseFromConfig` (the mail and
 * the webhooks, whose tries the same instances make); the signups keep theirs.
 */
export const QUEUES = {
  /** The contact messages to the owner (contact/worker.ts): a send takes up to 45 s (mail/mailer.ts). */
  outbox: { pollMs: 5_000, leaseMs: 120_000, leaseFromConfig: true },
  /** The webhooks, chat alerts and automatic replies (webhooks/worker.ts): a try takes up to 15 s. */
  webhooks: { pollMs: 5_000, leaseMs: 60_000, leaseFromConfig: true },
  /** The newsletter signups a provider could not take at once (newsletter/signup-worker.ts): 10 s a try. */
  signups: { pollMs: 30_000, leaseMs: 60_000, leaseFromConfig: false },
} as const satisfies Record<string, QueueSetting>;

/** One queue's settings: how often it is read when nothing is known to be due, and how long a try keeps its row. */
export type QueueSetting = { pollMs: number; leaseMs: number; leaseFromConfig: boolean };

/** A queue's name. */
export type QueueName = keyof typeof QUEUES;

/** Every queue, in the table's order. */
export const QUEUE_NAMES = Object.keys(QUEUES) as QueueName[];

/**
 * The settings of the queue `name`, with `DELIVERY_LEASE_MS` where it applies. The upkeep that
 * gives up rows whose every try died runs once a lease: such a row is seen only once its lease ran out.
 */
export function queueSettings(name: QueueName, delivery: { leaseMs?: number | undefined } = {}): { pollMs: number; leaseMs: number; upkeepMs: number } {
  const setting: QueueSetting = QUEUES[name];
  const leaseMs = setting.leaseFromConfig && delivery.leaseMs !== undefined ? delivery.leaseMs : setting.leaseMs;
  return { pollMs: setting.pollMs, leaseMs, upkeepMs: leaseMs };
}
