import { createScheduler } from '../scheduler.ts';
import { describeError, type Logger } from '../log.ts';
import type { EventRecorder } from '../webhooks/webhooks.ts';
import type { NewsletterProvider } from './provider.ts';
import type { Signup, Signups } from './signups.ts';
import { drain, type Lease } from '../queue/queue.ts';
import { queueSettings } from '../queue/settings.ts';
import type { SubscribeOutcome } from './provider.ts';

/** The background sender of signups the provider could not take at once. */
export type SignupWorker = { start(): void; poke(): void; runPass(): Promise<void>; stop(): Promise<void> };

/**
 * Tries each waiting signup again when it is due, under a lease, until the provider takes it
 * (a day at most); one the provider refuses for good is given up and shown to the owner.
 */
export function createSignupWorker({
  signups,
  provider,
  events,
  logger,
  now: queueClock,
}: {
  signups: Signups;
  provider: NewsletterProvider;
  events?: EventRecorder | undefined;
  logger: Logger;
  now?: () => Date;
}): SignupWorker {
  // How often it looks for signups stored by any instance, and how long one it is sending is kept: the queues' table.
  const { pollMs, leaseMs } = queueSettings('signups');
  async function finish({ signup, lease }: { signup: Signup; lease: Lease }, outcome: SubscribeOutcome): Promise<void> {
    const status = await signups.finish(signup.id, lease, outcome, queueClock?.());
    if (status === 'added') {
      logger.info('newsletter.signup_added', { id: signup.id, attempts: signup.attempts });
      await events?.record('newsletter.subscribed', { email: signup.email, provider: provider.name });
    } else if (status === 'failed') {
      logger.warn('newsletter.signup_failed', {
        id: signup.id,
        reason: outcome.ok ? '' : outcome.reason,
        note: 'the owner can retry it (admin: Subscribers)',
      });
    }
  }
  const pass = (signal: AbortSignal) =>
    drain(
      signal,
      { claim: (start, until) => signups.claim(start, until), send: ({ signup }) => provider.subscribe(signup.email), finish },
      { leaseMs, clock: queueClock },
    );
  const scheduler = createScheduler({
    pass,
    nextDueAt: () => signups.nextDueAt(),
    pollIntervalMs: pollMs,
    onError: (error) => logger.warn('newsletter.signup_worker_failed', { error: describeError(error), note: 'tried again soon' }),
  });
  return { start: () => void scheduler.start(), poke: () => scheduler.poke(), runPass: () => scheduler.runPass(), stop: () => scheduler.stop() };
}
