import { toolCommand } from '../commands.ts';
import { describeError, type Logger } from '../log.ts';
import type { Mailer, SendResult } from '../mail/mailer.ts';
import type { ContactEmail } from '../mail/email.ts';
import type { Claimed, Outbox, Submission } from './outbox.ts';
import { backoff, DEFAULT_MAX_ATTEMPTS } from '../queue/queue.ts';
import { createScheduler, type Timer } from '../scheduler.ts';

/** What the owner does about a message given up on: the retry command that works where the site runs (decision 0205). */
const RETRY_HINT = `fix the cause, then ${toolCommand('inbox', 'retry <id>')}`;

/** When the worker looks for due messages and how long it keeps retrying, in milliseconds. */
export type DeliveryPolicy = {
  /** How often the outbox is read even when nothing is known to be due: the inbox command may have requeued a message. */
  pollIntervalMs: number;
  /** The wait after the first failed attempt; it doubles after each further one. */
  retryBaseMs: number;
  /** The longest wait between two attempts. */
  retryMaxMs: number;
  /** How long after the first attempt of a round a transient failure still leads to another attempt. */
  retryForMs: number;
  /**
   * How long a message being sent is kept from the other instances: longer than any send
   * takes, since a lease that ends mid-send lets another instance send the message too.
   */
  leaseMs: number;
  /** The most attempts of a round (DELIVERY_MAX_ATTEMPTS), each counted as it starts: a send that kills the process counts too. */
  maxAttempts: number;
};

/** About 30 s doubling to 1 h, for 24 h: an hour-long outage of the mail server costs no message. */
export const DELIVERY_POLICY: DeliveryPolicy = {
  pollIntervalMs: 5_000,
  retryBaseMs: 30_000,
  retryMaxMs: 60 * 60_000,
  retryForMs: 24 * 60 * 60_000,
  leaseMs: 2 * 60_000,
  maxAttempts: DEFAULT_MAX_ATTEMPTS,
};

/** What the worker needs; `clock`, `timer`, `random` (the jitter's dice) and the policy are there for tests. */
export type DeliveryWorkerOptions = {
  outbox: Outbox;
  mailer: Mailer;
  /** The mail of a message; a promise when its files are read from the storage. */
  compose: (submission: Submission) => ContactEmail | Promise<ContactEmail>;
  logger: Logger;
  clock?: () => Date;
  timer?: Timer;
  random?: () => number;
} & Partial<DeliveryPolicy>;

/** Delivers the outbox in the background of the server process. */
export interface DeliveryWorker {
  /** Starts delivering: at once (messages left pending by an earlier process go first), then on every poll. */
  start(): void;
  /** Says a message was just stored, so it goes out now rather than at the next poll. */
  poke(): void;
  /** Delivers every message due now, one after another; answers when none is left due. */
  deliverDue(): Promise<void>;
  /** Stops polling and waits for the message being sent, if any, to be settled. */
  stop(): Promise<void>;
}

/**
 * The longest wait before the next attempt after `attempts` failed ones: base × 2^(attempts-1),
 * capped; the worker takes up to a tenth off at random (queue/queue.ts, `backoff`), so that
 * messages that failed together in an outage are not all tried again at once.
 */
export function retryDelay(
  attempts: number,
  policy: Pick<DeliveryPolicy, 'retryBaseMs' | 'retryMaxMs'> = DELIVERY_POLICY,
  random: () => number = () => 0,
): number {
  return backoff(attempts, { baseMs: policy.retryBaseMs, maxMs: policy.retryMaxMs }, random)!;
}

/**
 * A worker that sends pending messages one at a time and records each outcome: sent,
 * retrying later (transient failure), or failed (permanent failure, or 24 h of retries).
 * Hint: a message is marked `sent` only after the SMTP server accepted it, so a crash at any
 * point leaves it `pending` and it is sent again (when its lease ends, or at once on the next
 * start with SQLite), with the same Message-ID.
 */
export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { outbox, mailer, compose, logger } = options;
  const clock = options.clock ?? (() => new Date());
  const policy: DeliveryPolicy = {
    pollIntervalMs: options.pollIntervalMs ?? DELIVERY_POLICY.pollIntervalMs,
    retryBaseMs: options.retryBaseMs ?? DELIVERY_POLICY.retryBaseMs,
    retryMaxMs: options.retryMaxMs ?? DELIVERY_POLICY.retryMaxMs,
    retryForMs: options.retryForMs ?? DELIVERY_POLICY.retryForMs,
    leaseMs: options.leaseMs ?? DELIVERY_POLICY.leaseMs,
    maxAttempts: options.maxAttempts ?? DELIVERY_POLICY.maxAttempts,
  };
  const random = options.random ?? Math.random;

  async function deliverOne(submission: Claimed): Promise<void> {
    let result: SendResult;
    let email: ContactEmail | undefined;
    try {
      email = await compose(submission);
      result = await mailer.send(email);
    } catch (error) {
      // A mailer answers refusals; a throw is a bug or a broken message, and worth a retry
      // once the code is fixed rather than the loss of the message.
      result = { ok: false, permanent: false, reason: `unexpected error: ${describeError(error)}` };
    } finally {
      // An attachment a failed send never read would hold its file (or its S3 socket) open.
      for (const attachment of email?.attachments ?? []) attachment.content.destroy();
    }
    const at = clock();
    // Counted when it was claimed, this one included.
    const { attempts } = submission;
    const { lease } = submission;
    if (result.ok) {
      const now = await outbox.markSent(submission.id, at, lease);
      // The owner's "spam" or "delete" during the send is applied now, after the send is on record.
      logger.info('contact.delivered', {
        id: submission.id,
        attempts,
        ...(now !== 'sent' && { afterwards: now === 'deleted' ? 'deleted by the owner' : 'held by the owner' }),
      });
      return;
    }
    if (result.permanent) {
      await outbox.markFailed(submission.id, at, result.reason, lease);
      logger.error('contact.delivery_failed', {
        id: submission.id,
        attempts,
        reason: withoutAddresses(result.reason),
        next: RETRY_HINT,
      });
      return;
    }
    // Measured from the first attempt, not from storing: messages stored while no mail
    // server was configured, or while the site was down, still get their full 24 h.
    const roundStart = (await outbox.roundStartedAt(submission.id)) ?? at;
    const outOfTime = at.getTime() - roundStart.getTime() >= policy.retryForMs;
    if (outOfTime || attempts >= policy.maxAttempts) {
      const over = outOfTime ? ` over ${Math.round(policy.retryForMs / 3_600_000)} h` : '';
      const reason = `gave up after ${attempts} attempts${over}; last: ${result.reason}`;
      await outbox.markFailed(submission.id, at, reason, lease);
      logger.error('contact.delivery_failed', {
        id: submission.id,
        attempts,
        reason: withoutAddresses(reason),
        next: RETRY_HINT,
      });
      return;
    }
    const next = new Date(at.getTime() + retryDelay(attempts, policy, random));
    await outbox.markRetry(submission.id, at, next, result.reason, lease);
    logger.warn('contact.delivery_retry', { id: submission.id, attempts, nextAttemptAt: next.toISOString(), reason: withoutAddresses(result.reason) });
  }

  async function deliverAllDue(signal: AbortSignal): Promise<void> {
    // One message at a time, each claimed with a lease (decision 0051): messages stored
    // meanwhile, retries that fell due and messages whose sender died go too, and no other
    // instance takes this one. Checked before each: stop() lets the send under way finish, no more.
    while (!signal.aborted) {
      const now = clock();
      const submission = await outbox.claim(now, new Date(now.getTime() + policy.leaseMs), {
        maxAttempts: policy.maxAttempts,
        onGiveUp: (id, reason) => logger.error('contact.delivery_failed', { id, attempts: policy.maxAttempts, reason, next: RETRY_HINT }),
      });
      if (!submission) return;
      await deliverOne(submission);
    }
  }

  const scheduler = createScheduler({
    pass: deliverAllDue,
    // Wake for the next retry when it falls due before the next poll.
    nextDueAt: () => outbox.nextDueAt(),
    pollIntervalMs: policy.pollIntervalMs,
    // The store has logged the cause already, once per outage (sql/state.ts); a line per
    // poll would repeat it every few seconds.
    onError: (error) => logger.debug('contact.outbox_error', { error: describeError(error) }),
    clock,
    timer: options.timer,
  });

  return {
    start() {
      if (!scheduler.start()) return;
      void outbox.pendingCount().then(
        (pending) => logger.info('contact.delivery_started', { pending }),
        () => logger.info('contact.delivery_started', { pending: null }),
      );
    },
    poke: () => scheduler.poke(),
    deliverDue: () => scheduler.runPass(),
    stop: () => scheduler.stop(),
  };
}

/** Keeps the domain of addresses in a reason and drops the rest, since logs never hold an address. */
function withoutAddresses(text: string): string {
  return text.replace(/[^\s<>"'(),;:@]+@(?=[^\s<>"'@]+)/g, '…@');
}
