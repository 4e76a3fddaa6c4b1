import { toolCommand } from '../commands.ts';
import { describeError, type Logger } from '../log.ts';
import type { Mailer, SendResult } from '../mail/mailer.ts';
import type { ContactEmail } from '../mail/email.ts';
import type { Claimed, Outbox, Submission } from './outbox.ts';
import { backoff, DEFAULT_MAX_ATTEMPTS, drain, type QueuePolicy } from '../queue/queue.ts';
import { QUEUES } from '../queue/settings.ts';
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
  pollIntervalMs: QUEUES.outbox.pollMs,
  retryBaseMs: 30_000,
  retryMaxMs: 60 * 60_000,
  retryForMs: 24 * 60 * 60_000,
  leaseMs: QUEUES.outbox.leaseMs,
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
  // The queue's times: the database's clock unless a test passes its own (decision 0270).
  const queueClock = options.clock;
  const policy: DeliveryPolicy = {
    pollIntervalMs: options.pollIntervalMs ?? DELIVERY_POLICY.pollIntervalMs,
    retryBaseMs: options.retryBaseMs ?? DELIVERY_POLICY.retryBaseMs,
    retryMaxMs: options.retryMaxMs ?? DELIVERY_POLICY.retryMaxMs,
    retryForMs: options.retryForMs ?? DELIVERY_POLICY.retryForMs,
    leaseMs: options.leaseMs ?? DELIVERY_POLICY.leaseMs,
    maxAttempts: options.maxAttempts ?? DELIVERY_POLICY.maxAttempts,
  };
  const random = options.random ?? Math.random;

  // The backoff and the give-up (the most attempts, the 24 h from the first) are the queue's, in its fenced finish.
  const queuePolicy: QueuePolicy = {
    backoff: { baseMs: policy.retryBaseMs, maxMs: policy.retryMaxMs },
    maxAttempts: policy.maxAttempts,
    random,
    round: { ms: policy.retryForMs, by: 'try' },
    gaveUp: (attempts, reason, overRound) =>
      `gave up after ${attempts} attempts${overRound ? ` over ${Math.round(policy.retryForMs / 3_600_000)} h` : ''}; last: ${reason}`,
  };

  /** The queue's own try: the mail, composed and sent; a throw is a transient failure. */
  async function send(submission: Claimed): Promise<SendResult> {
    let email: ContactEmail | undefined;
    try {
      email = await compose(submission);
      return await mailer.send(email);
    } catch (error) {
      // A mailer answers refusals; a throw is a bug or a broken message, and worth a retry
      // once the code is fixed rather than the loss of the message.
      return { ok: false, permanent: false, reason: `unexpected error: ${describeError(error)}` };
    } finally {
      // An attachment a failed send never read would hold its file (or its S3 socket) open.
      for (const attachment of email?.attachments ?? []) attachment.content.destroy();
    }
  }

  /** Records the send's end under its lease, and says so in the log. */
  async function finish(submission: Claimed, result: SendResult): Promise<void> {
    const at = queueClock?.();
    // Counted when it was claimed, this one included.
    const { id, attempts } = submission;
    if (result.ok) {
      const { state } = await outbox.settle(submission, { kind: 'sent', at }, queuePolicy);
      // The owner's "spam" or "delete" during the send is applied now, after the send is on record.
      logger.info('contact.delivered', {
        id,
        attempts,
        ...(state !== 'sent' && { afterwards: state === 'deleted' ? 'deleted by the owner' : 'held by the owner' }),
      });
      return;
    }
    if (result.permanent) {
      await outbox.settle(submission, { kind: 'failed', at, error: result.reason }, queuePolicy);
      logger.error('contact.delivery_failed', { id, attempts, reason: withoutAddresses(result.reason), next: RETRY_HINT });
      return;
    }
    const { finished } = await outbox.settle(submission, { kind: 'retry', at, error: result.reason }, queuePolicy);
    if (finished?.kind === 'failed') {
      logger.error('contact.delivery_failed', { id, attempts, reason: withoutAddresses(finished.error!), next: RETRY_HINT });
    } else if (finished?.kind === 'retry') {
      logger.warn('contact.delivery_retry', { id, attempts, nextAttemptAt: finished.next!.toISOString(), reason: withoutAddresses(result.reason) });
    }
  }

  async function deliverAllDue(signal: AbortSignal): Promise<void> {
    // One message at a time, each claimed with a lease (decision 0051): messages stored
    // meanwhile, retries that fell due and messages whose sender died go too, and no other
    // instance takes this one.
    await drain(
      signal,
      { claim: (now, until) => outbox.claim(now, until, { maxAttempts: policy.maxAttempts }), send, finish },
      { leaseMs: policy.leaseMs, clock: queueClock },
    );
  }

  const scheduler = createScheduler({
    pass: deliverAllDue,
    // Wake for the next retry when it falls due before the next poll.
    nextDueAt: () => outbox.nextDueAt(policy.maxAttempts),
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

/**
 * The outbox's upkeep, a housekeeping job (queue/upkeep.ts): the messages whose every send died
 * with its process are failed and logged as the worker logs a give-up; the owner's requests their
 * dead senders left are applied.
 */
export function outboxUpkeep({ outbox, logger, maxAttempts = DEFAULT_MAX_ATTEMPTS }: { outbox: Outbox; logger: Logger; maxAttempts?: number }) {
  return async (now?: Date): Promise<void> => {
    const { gaveUp } = await outbox.upkeep(now, { maxAttempts });
    for (const { id, error } of gaveUp) logger.error('contact.delivery_failed', { id, attempts: maxAttempts, reason: error, next: RETRY_HINT });
  };
}

/** Keeps the domain of addresses in a reason and drops the rest, since logs never hold an address. */
function withoutAddresses(text: string): string {
  return text.replace(/[^\s<>"'(),;:@]+@(?=[^\s<>"'@]+)/g, '…@');
}
