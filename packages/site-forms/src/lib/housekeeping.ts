import { describeError, type Logger } from './log.ts';
import { createScheduler, type Scheduler, type Timer } from './scheduler.ts';

/** An hour and a day, the intervals the jobs run at. */
export const HOUR_MS = 60 * 60 * 1000;
export const DAY_MS = 24 * HOUR_MS;

/** One job of the housekeeping: its name, how often it runs, and the work. */
export type HousekeepingJob = {
  /** What the log calls it when it fails (`housekeeping.failed`). */
  name: string;
  /** How often it runs; the first run is at start. */
  everyMs: number;
  /** A time it is due before its interval ends (the digest at the owner's time of day). */
  dueAt?: ((now: Date) => Date | undefined) | undefined;
  run(now: Date): Promise<void>;
};

/**
 * The one housekeeping of a process: each job runs at start and then at its own interval,
 * one job at a time, and the whole stops as one (waiting for the job under way).
 * Hint: a job that fails is logged with its name and tried again at its next turn; the
 * others run as if nothing happened.
 */
export function createHousekeeping(
  jobs: readonly HousekeepingJob[],
  { logger, clock = () => new Date(), timer }: { logger: Logger; clock?: () => Date; timer?: Timer },
): Scheduler {
  /** When each job is next due, in ms since the epoch; 0 is at once. */
  const due = new Map<HousekeepingJob, number>(jobs.map((job) => [job, 0]));
  const nextTurn = (job: HousekeepingJob, now: Date) => Math.min(now.getTime() + job.everyMs, job.dueAt?.(now)?.getTime() ?? Number.POSITIVE_INFINITY);
  return createScheduler({
    pass: async (signal) => {
      for (const job of jobs) {
        if (signal.aborted) return;
        const now = clock();
        if (due.get(job)! > now.getTime()) continue;
        try {
          await job.run(now);
        } catch (error) {
          logger.error('housekeeping.failed', { job: job.name, error: describeError(error) });
        }
        due.set(job, nextTurn(job, now));
      }
    },
    nextDueAt: () => (jobs.length ? new Date(Math.min(...due.values())) : undefined),
    pollIntervalMs: DAY_MS,
    onError: (error) => logger.error('housekeeping.failed', { error: describeError(error) }),
    clock,
    ...(timer && { timer }),
  });
}
