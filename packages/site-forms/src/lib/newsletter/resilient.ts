import { type NewsletterProvider, type SubscribeOutcome, unavailable } from './provider.ts';

/** How a remote provider is called: retries, the time they share, and calls at once. */
export type ResilienceOptions = {
  /** The whole time one subscription may take: waiting for a turn, every attempt and every pause. */
  budgetMs: number;
  /** How many more attempts an `unavailable` answer earns; 2 means at most 3 calls. */
  retries: number;
  /** The pause before the first retry; each later one doubles, with jitter. */
  backoffMs: number;
  /** Calls in flight at once in this process; the rest wait their turn. */
  maxInFlight: number;
};

/**
 * The settings every remote provider runs with.
 * Hint: 10 in flight is Mailchimp's limit of simultaneous connections per key; Kit and
 * Resend get the same so that a burst never becomes a wall of 429s.
 */
export const RESILIENCE_DEFAULTS: ResilienceOptions = { budgetMs: 10_000, retries: 2, backoffMs: 500, maxInFlight: 10 };

/**
 * Wraps a provider so that each subscription retries `unavailable` answers with backoff,
 * all inside one time budget, with at most `maxInFlight` calls in flight at once.
 * Hint: retrying is safe because subscribing twice is "already a member", which is success.
 */
export function withRetries(provider: NewsletterProvider, options: Partial<ResilienceOptions> = {}): NewsletterProvider {
  const { budgetMs, retries, backoffMs, maxInFlight } = { ...RESILIENCE_DEFAULTS, ...options };
  const slots = createSlots(maxInFlight);
  // An attempt started with less than this left would only add a timeout to the visitor's wait.
  const minAttemptMs = budgetMs / 20;

  return {
    name: provider.name,
    async subscribe(email, { signal: outer } = {}) {
      const started = performance.now();
      // Our own deadline, cleared when the call ends: an AbortSignal.timeout() would keep
      // each call's listeners, and all they hold, alive for the whole budget (measured:
      // 330 MB instead of 150 MB under load, docs/performance.md).
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(new DOMException('The budget ran out', 'TimeoutError')), budgetMs);
      const signal = outer ? AbortSignal.any([outer, deadline.signal]) : deadline.signal;
      try {
        return await attempts(signal);
      } finally {
        clearTimeout(timer);
        // Fires and so removes the listeners still waiting on the signal.
        deadline.abort();
      }

      async function attempts(signal: AbortSignal): Promise<SubscribeOutcome> {
        const remaining = () => budgetMs - (performance.now() - started);
        let last: SubscribeOutcome | undefined;

        for (let attempt = 1; ; attempt++) {
          const release = await slots.acquire(signal);
          if (!release || remaining() < minAttemptMs) {
            release?.();
            return last
              ? giveUp(last, attempt - 1)
              : unavailable(`no turn in time: ${maxInFlight} calls to the provider were in flight for ${Math.round(performance.now() - started)} ms`);
          }
          // The turn is held until the call itself ends, not when we stop waiting for it,
          // so "in flight" counts real connections even for a call that overran.
          const call = provider.subscribe(email, { signal, timeoutMs: Math.max(1, remaining()) }).finally(release);
          last = await Promise.race([call, whenAborted(signal)]);
          if (last.ok || last.reason !== 'unavailable') return last;

          const pause = backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2);
          if (attempt > retries || signal.aborted || remaining() - pause < minAttemptMs) return giveUp(last, attempt);
          await sleep(pause, signal);
        }
      }

      function giveUp(outcome: SubscribeOutcome, attempts: number): SubscribeOutcome {
        if (outcome.ok) return outcome;
        const elapsed = Math.round(performance.now() - started);
        return { ...outcome, detail: `${outcome.detail} (${attempts} attempt${attempts === 1 ? '' : 's'} in ${elapsed} ms)` };
      }
    },
  };
}

/** A first-come, first-served limit of calls in flight. */
function createSlots(max: number) {
  let inFlight = 0;
  const waiting: Array<() => void> = [];

  function grant(): () => void {
    inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      inFlight--;
      waiting.shift()?.();
    };
  }

  return {
    /** Waits for a turn; answers the function that ends it, or `undefined` if the signal aborts first. */
    acquire(signal: AbortSignal): Promise<(() => void) | undefined> {
      if (signal.aborted) return Promise.resolve(undefined);
      if (inFlight < max && waiting.length === 0) return Promise.resolve(grant());
      return new Promise((resolve) => {
        const onTurn = () => {
          signal.removeEventListener('abort', onAbort);
          resolve(grant());
        };
        const onAbort = () => {
          waiting.splice(waiting.indexOf(onTurn), 1);
          resolve(undefined);
        };
        waiting.push(onTurn);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    },
  };
}

/** Resolves to `unavailable` when the signal aborts, for a provider that overruns it. */
function whenAborted(signal: AbortSignal): Promise<SubscribeOutcome> {
  return new Promise((resolve) => {
    const answer = () => resolve(unavailable('timeout'));
    if (signal.aborted) answer();
    else signal.addEventListener('abort', answer, { once: true });
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
