/** Sets and clears one-shot timers; Node's by default, a fake one in tests. */
export type Timer = {
  set(wake: () => void, ms: number): unknown;
  clear(handle: unknown): void;
};

/** Node's timers, unreferenced: the HTTP server keeps the process alive, a pending wake alone should not. */
export const NODE_TIMER: Timer = {
  // Looked up at each call, not captured at import, so that tests which fake the globals reach them.
  set: (wake, ms) => setTimeout(wake, ms).unref(),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * The shortest wait before a pass for something already due: a pass that has just ended and
 * left a message due (held elsewhere, or a clock that stepped) is not chased in a loop.
 */
export const MIN_WAIT_MS = 1_000;

/**
 * How long to wait after a pass: until the next due time when it comes before the next poll,
 * never less than `MIN_WAIT_MS` for one already due, and never longer than the poll.
 */
export function nextWait(now: Date, nextDueAt: Date | undefined, pollIntervalMs: number): number {
  if (!nextDueAt) return pollIntervalMs;
  const untilDue = nextDueAt.getTime() - now.getTime();
  return Math.min(pollIntervalMs, untilDue > 0 ? untilDue : MIN_WAIT_MS);
}

/** What the scheduler runs and asks; `clock` and `timer` are there for tests. */
export type SchedulerOptions = {
  /** One pass of work; never two at once. It should return soon after `signal` is aborted. */
  pass: (signal: AbortSignal) => Promise<void>;
  /** The earliest time something will be due, if any: the pass after this one is not later. */
  nextDueAt: () => Date | undefined | Promise<Date | undefined>;
  /** How often a pass runs when nothing is known to be due. */
  pollIntervalMs: number;
  /** Hears a pass or `nextDueAt` that threw; after it the scheduler waits a whole poll. */
  onError: (error: unknown) => void;
  clock?: () => Date;
  timer?: Timer;
};

/** Runs passes one at a time: at start, when poked, when something falls due, and on every poll. */
export interface Scheduler {
  /** Runs a pass now, then keeps running them; answers false when it had already been started or stopped. */
  start(): boolean;
  /** Asks for a pass soon: right away when idle, once more after the current pass when one runs. */
  poke(): void;
  /** Runs one pass now, or joins the one under way; answers when it has ended. */
  runPass(): Promise<void>;
  /** Runs no further pass and waits for the one under way, if any, to end. */
  stop(): Promise<void>;
}

/**
 * A scheduler for a background job such as delivering the outbox.
 * Hint: a poke during a pass is remembered, not acted on, so any number of pokes during one pass
 * cost exactly one more pass, and two passes never overlap.
 */
export function createScheduler(options: SchedulerOptions): Scheduler {
  const { pass, pollIntervalMs, onError } = options;
  const clock = options.clock ?? (() => new Date());
  const timer = options.timer ?? NODE_TIMER;
  const stopping = new AbortController();

  let started = false;
  /** The pass under way, whoever asked for it; it answers whether it ended without an error. */
  let current: Promise<boolean> | undefined;
  /** Passes and the wait computed after them, while the background loop is busy. */
  let looping: Promise<void> | undefined;
  /** Set by a poke while the loop is busy: one more pass is wanted before the next wait. */
  let pokedMeanwhile = false;
  let wake: unknown;

  const running = () => started && !stopping.signal.aborted;

  function runOnce(): Promise<boolean> {
    current ??= pass(stopping.signal)
      .then(
        () => true,
        (error: unknown) => {
          onError(error);
          return false;
        },
      )
      .finally(() => {
        current = undefined;
      });
    return current;
  }

  async function waitAfter(passed: boolean): Promise<number> {
    // A pass that threw would likely throw again: a whole poll, not a loop of errors.
    if (!passed) return pollIntervalMs;
    try {
      return nextWait(clock(), await options.nextDueAt(), pollIntervalMs);
    } catch (error) {
      onError(error);
      return pollIntervalMs;
    }
  }

  async function loop(): Promise<void> {
    let wait: number;
    do {
      pokedMeanwhile = false;
      wait = await waitAfter(await runOnce());
    } while (pokedMeanwhile && running());
    if (running()) wake = timer.set(kick, wait);
  }

  function kick(): void {
    looping = loop().finally(() => {
      looping = undefined;
    });
  }

  return {
    start() {
      if (started || stopping.signal.aborted) return false;
      started = true;
      kick();
      return true;
    },
    poke() {
      if (!running()) return;
      if (looping) {
        pokedMeanwhile = true;
        return;
      }
      // After the caller's own work (the answer to the visitor), not inside it.
      timer.clear(wake);
      wake = timer.set(kick, 0);
    },
    async runPass() {
      await runOnce();
    },
    async stop() {
      stopping.abort();
      timer.clear(wake);
      await looping;
      await current;
    },
  };
}
