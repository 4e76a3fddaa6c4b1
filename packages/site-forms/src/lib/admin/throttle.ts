import type { Redis } from 'ioredis';
import { createHash } from 'node:crypto';
import type { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { limiterClass } from '../lazy.ts';
import { describeError, type Logger } from '../log.ts';

/** The window in which sign-in attempts are counted. */
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;

/** Attempts a client may make in the window without signing in; the next one is answered 429. */
export const SIGN_IN_ATTEMPTS_PER_CLIENT = 10;

/**
 * How long an attempt waits before the password is checked, from the client's earlier
 * attempts in the window: nothing for the first three (a typo or two), then 1, 2, 4 and at
 * most 8 seconds.
 */
export function clientDelayMs(earlierAttempts: number): number {
  if (earlierAttempts < 3) return 0;
  return Math.min(8000, 1000 * 2 ** (earlierAttempts - 3));
}

/**
 * How long every attempt waits from all clients' attempts in the window: nothing under
 * 100, then a quarter second per hundred, at most 3 seconds.
 * Hint: this slows an attack from many addresses and never refuses, so nobody can lock the owner out.
 */
export function overallDelayMs(earlierAttempts: number): number {
  if (earlierAttempts < 100) return 0;
  return Math.min(3000, 250 * Math.floor(earlierAttempts / 100));
}

/** Attempts on one person's account in the window (from any client); the next one is answered 429, unless the browser signed in before. */
export const SIGN_IN_ATTEMPTS_PER_PERSON = 20;

/**
 * How long an attempt on a person's account waits, from the earlier attempts on it in the window
 * (from any client): nothing for the first five, then 1, 2, 4 and at most 8 seconds.
 */
export function personDelayMs(earlierAttempts: number): number {
  if (earlierAttempts < 5) return 0;
  return Math.min(8000, 1000 * 2 ** (earlierAttempts - 5));
}

/**
 * The count an attempt goes to, from what was typed alone (so an address nobody has is counted
 * exactly as a person's): `person:` and the SHA-256 of the email, trimmed and lower-cased (the
 * address itself is never a key in Redis), or `person:env` for an empty one (the first owner).
 */
export function personKey(email: string): string {
  const normal = email.trim().toLowerCase();
  return normal === '' ? 'person:env' : `person:${createHash('sha256').update(normal).digest('hex')}`;
}

/** The account an attempt is on, and whether its browser signed in before (the device cookie): that one is never refused. */
export type SignInTarget = { key: string; known: boolean };

/** Whether a sign-in attempt may go ahead, and after how long a wait. */
export type SignInGate = { ok: true; delayMs: number } | { ok: false; retryAfterSeconds: number };

/** Counts sign-in attempts per client, per person and overall. */
export interface SignInThrottle {
  /**
   * Counts an attempt of this client, on this person's account when given: refused after 10 of the
   * client or (for a browser without the device cookie) 20 on the account in 15 minutes, else how
   * long to wait first (the longest of the three delays).
   */
  attempt(clientKey: string, person?: SignInTarget): Promise<SignInGate>;
  /** Forgets the client's attempts, and the account's when given, once it has signed in. */
  succeeded(clientKey: string, personKey?: string): Promise<void>;
}

/** The delays to apply; the HTTP tests use none so that eleven attempts take no minute. */
export type ThrottleDelays = { client: (earlier: number) => number; overall: (earlier: number) => number; person?: (earlier: number) => number };

/**
 * The sign-in throttle, in memory or shared through Redis (memory as insurance while Redis
 * is unreachable), so that several instances count one attacker once.
 */
export function createSignInThrottle(options: { redis?: Redis; logger: Logger; delays?: ThrottleDelays }): SignInThrottle {
  const RateLimiterMemory = limiterClass('RateLimiterMemory');
  const RateLimiterRedis = limiterClass('RateLimiterRedis');
  const { redis, logger, delays = { client: clientDelayMs, overall: overallDelayMs } } = options;
  const delayOfPerson = delays.person ?? personDelayMs;
  const limiter = (keyPrefix: string, points: number) => {
    const memory = new RateLimiterMemory({ keyPrefix, points, duration: SIGN_IN_WINDOW_SECONDS });
    if (!redis) return memory;
    return new RateLimiterRedis({
      storeClient: redis,
      keyPrefix,
      points,
      duration: SIGN_IN_WINDOW_SECONDS,
      rejectIfRedisNotReady: true,
      insuranceLimiter: memory,
    });
  };
  const perClient = limiter('site-forms:sign-in', SIGN_IN_ATTEMPTS_PER_CLIENT);
  // Counted, never refused: the overall count only sets a delay.
  const overall = limiter('site-forms:sign-in-all', Number.MAX_SAFE_INTEGER);
  // Counted, never refused by the limiter: whether the 21st is refused depends on the browser.
  const perPerson = limiter('site-forms:sign-in-person', Number.MAX_SAFE_INTEGER);

  return {
    async attempt(clientKey, person) {
      const client = await count(perClient, clientKey, logger);
      if (!client.ok) return client;
      let personDelay = 0;
      if (person) {
        const account = await count(perPerson, person.key, logger);
        if (account.ok && account.attempts > SIGN_IN_ATTEMPTS_PER_PERSON && !person.known) {
          return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(account.msBeforeNext / 1000)) };
        }
        personDelay = account.ok ? delayOfPerson(account.attempts - 1) : 0;
      }
      const all = await count(overall, 'all', logger);
      const everyone = all.ok ? all.attempts : 0;
      return { ok: true, delayMs: Math.max(delays.client(client.attempts - 1), delays.overall(everyone - 1), personDelay) };
    },
    async succeeded(clientKey, personKey) {
      try {
        await perClient.delete(clientKey);
        if (personKey !== undefined) await perPerson.delete(personKey);
      } catch (error) {
        logger.error('admin.throttle_failed', { error: describeError(error) });
      }
    },
  };
}

type Counted = { ok: true; attempts: number; msBeforeNext: number } | { ok: false; retryAfterSeconds: number };

async function count(limiter: RateLimiterMemory | RateLimiterRedis, key: string, logger: Logger): Promise<Counted> {
  try {
    const res = await limiter.consume(key);
    return { ok: true, attempts: res.consumedPoints, msBeforeNext: res.msBeforeNext };
  } catch (rejection) {
    // A refusal is the library's RateLimiterRes; a store failure is an Error.
    if (!(rejection instanceof Error) && typeof (rejection as RateLimiterRes).msBeforeNext === 'number') {
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((rejection as RateLimiterRes).msBeforeNext / 1000)) };
    }
    // Without a count, let the attempt through: the password hash still stands in the way.
    logger.error('admin.throttle_failed', { error: describeError(rejection) });
    return { ok: true, attempts: 0, msBeforeNext: 0 };
  }
}
