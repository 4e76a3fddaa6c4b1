import type { HousekeepingJob } from '../housekeeping.ts';
import { QUEUE_NAMES, type QueueName, queueSettings } from './settings.ts';

/**
 * The queues' upkeep as housekeeping jobs (decision 0241), one a queue of the settings table:
 * each gives up the rows whose every try died with its process (and the outbox applies the
 * owner's requests its dead senders left), at start and then once a lease, never inside a claim.
 */
export function upkeepJobs(upkeep: Record<QueueName, (now: Date) => Promise<unknown>>, delivery: { leaseMs?: number | undefined } = {}): HousekeepingJob[] {
  return QUEUE_NAMES.map((name) => ({
    name: `queue.${name}`,
    everyMs: queueSettings(name, delivery).upkeepMs,
    run: (now: Date) => upkeep[name](now).then(() => {}),
  }));
}
