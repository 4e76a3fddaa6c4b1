import { createScheduler } from '../scheduler.ts';
import { describeError, type Logger } from '../log.ts';
import type { EventRecorder } from '../webhooks/webhooks.ts';
import type { NewsletterProvider } from './provider.ts';
import type { Signups } from './signups.ts';

/** How often the worker looks for signups stored by any instance, when none is known to be due. */
const POLL_MS = 30_000;
/** How long an instance keeps a signup it is sending: longer than the provider's 10 seconds. */
const LEASE_MS = 60_000;

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
  now = () => new Date(),
}: {
  signups: Signups;
  provider: NewsletterProvider;
  events?: EventRecorder | undefined;
  logger: Logger;
  now?: () => Date;
}): SignupWorker {
  async function pass(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const start = now();
      const claimed = await signups.claim(start, new Date(start.getTime() + LEASE_MS));
      if (!claimed) return;
      const { signup, lease } = claimed;
      const outcome = await provider.subscribe(signup.email);
      const status = await signups.finish(signup.id, lease, outcome, now());
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
  }
  const scheduler = createScheduler({
    pass,
    nextDueAt: () => signups.nextDueAt(),
    pollIntervalMs: POLL_MS,
    onError: (error) => logger.warn('newsletter.signup_worker_failed', { error: describeError(error), note: 'tried again soon' }),
  });
  return { start: () => void scheduler.start(), poke: () => scheduler.poke(), runPass: () => scheduler.runPass(), stop: () => scheduler.stop() };
}
