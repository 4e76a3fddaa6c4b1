import type { Redis } from 'ioredis';
import type { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { mailboxOf } from './forms/mailbox.ts';
import { limiterClass } from './lazy.ts';
import { describeError, type Logger } from './log.ts';

/** The verdict on one request. */
export type LimitVerdict = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * The budget a route's posts count against, each its own: `newsletter`, `contact`, the held
 * messages' confirmations (`contact-confirm`), or `form:<name>` for an owner's form (decision 0131).
 */
export type LimitedRoute = 'newsletter' | 'contact' | 'contact-confirm' | `form:${string}`;

/** A budget of its own: accepted posts per client and window, instead of RATE_LIMIT_MAX and RATE_LIMIT_WINDOW_SECONDS. */
export type OwnBudget = { max: number; windowSeconds: number };

/** The abuse limits of the endpoints. */
export interface AbuseLimits {
  /** False when `RATE_LIMIT_MAX=0`: nothing is counted, so the pipeline skips the client's key and both calls. */
  readonly enabled: boolean;
  /**
   * Counts one post from a client (by its key) on a route, against both budgets: every
   * post, and accepted posts; `refundClient` gives the second back when it is not accepted.
   * Hint: `own` is read the first time a route is counted; the route's budget keeps it.
   */
  checkClient(route: LimitedRoute, clientKey: string, own?: OwnBudget): Promise<LimitVerdict>;
  /** Gives back the accepted-post budget a post took, when it was not accepted (a typo is not abuse). */
  refundClient(route: LimitedRoute, clientKey: string): Promise<void>;
  /** Counts one subscription attempt for an address's mailbox (`mailboxOf`). */
  checkAddress(email: string): Promise<LimitVerdict>;
  /** Forgets an address's count, in Redis and in this process's memory (an erasure); answers whether one was kept. */
  forgetAddress(email: string): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * How many posts of any outcome a client may make per accepted post allowed: with the
 * default 5 accepted per 10 minutes, 20 posts per 10 minutes (decision 0041).
 */
export const ATTEMPTS_PER_ACCEPTED_POST = 4;

/** Subscriptions allowed per address and day, whatever the client. */
export const SUBSCRIPTIONS_PER_ADDRESS_PER_DAY = 3;

/** The prefix of the per-address counts: Redis keeps `site-forms:address:<address in lower case>` for a day. */
const ADDRESS_PREFIX = 'site-forms:address';

/**
 * Deletes an address's count from Redis (an erasure), as a process without the limits does
 * (`npm run subscribers -- erase`); answers whether there was one. Throws while Redis is down.
 */
export async function forgetAddressInRedis(redis: Redis, email: string): Promise<boolean> {
  // The library's key: its prefix, a colon, then the key the limits counted (the address's mailbox).
  return (await redis.del(`${ADDRESS_PREFIX}:${mailboxOf(email)}`)) > 0;
}

const ALWAYS: LimitVerdict = { ok: true };

/**
 * How many clients (or addresses) one in-memory budget remembers: past it, the oldest windows
 * are forgotten first. 200,000 IPv6 /64 keys cost about 80 MB unbounded; 20,000 cost about 8.
 */
export const MEMORY_LIMITER_MAX_KEYS = 20_000;

/**
 * Builds the limits of the configuration: in memory, or shared through `redis` (the process's
 * one client, src/lib/redis.ts) with the memory limiter as insurance while Redis is unreachable.
 * Hint: `RATE_LIMIT_MAX=0` turns every limit off, for development and tests.
 */
export function createAbuseLimits(config: { rateLimit: { max: number; windowSeconds: number } }, logger: Logger, redis?: Redis): AbuseLimits {
  const { max, windowSeconds } = config.rateLimit;
  if (max === 0)
    return {
      enabled: false,
      checkClient: async () => ALWAYS,
      refundClient: async () => {},
      checkAddress: async () => ALWAYS,
      // Counts kept while the limits were on are still forgotten.
      forgetAddress: async (email) => (redis ? forgetAddressInRedis(redis, email) : false),
      close: async () => {},
    };

  const memoryLimiter = (keyPrefix: string, points: number, duration: number) =>
    createBoundedMemoryLimiter({ keyPrefix, points, duration }, MEMORY_LIMITER_MAX_KEYS);
  const limiter = (keyPrefix: string, points: number, duration: number, memory = memoryLimiter(keyPrefix, points, duration)) =>
    createSharedLimiter({ keyPrefix, points, duration }, redis, memory);
  // One pair of budgets per route, made when the route is first counted (an owner's form has its own).
  const budgets = new Map<LimitedRoute, { accepted: Limiter; attempts: Limiter }>();
  const budget = (route: LimitedRoute, own?: OwnBudget) => {
    let pair = budgets.get(route);
    if (!pair) {
      const points = own?.max ?? max;
      const duration = own?.windowSeconds ?? windowSeconds;
      pair = {
        accepted: limiter(`site-forms:${route}`, points, duration),
        attempts: limiter(`site-forms:attempts:${route}`, points * ATTEMPTS_PER_ACCEPTED_POST, duration),
      };
      budgets.set(route, pair);
    }
    return pair;
  };
  // The memory the address counts go to (without Redis, or while it is down), kept for an erasure.
  const addressMemory = memoryLimiter(ADDRESS_PREFIX, SUBSCRIPTIONS_PER_ADDRESS_PER_DAY, 24 * 3600);
  const perAddress = limiter(ADDRESS_PREFIX, SUBSCRIPTIONS_PER_ADDRESS_PER_DAY, 24 * 3600, addressMemory);

  return {
    enabled: true,
    async checkClient(route, key, own) {
      const { attempts, accepted } = budget(route, own);
      const verdict = await consume(attempts, key, logger);
      return verdict.ok ? consume(accepted, key, logger) : verdict;
    },
    async refundClient(route, key) {
      try {
        await budget(route).accepted.reward(key, 1);
      } catch (error) {
        // A lost refund costs one visitor one attempt; it must not cost the answer.
        logger.error('rate_limit.failed', { error: describeError(error) });
      }
    },
    // Per mailbox, so that `bomb+1@` or `b.o.m.b@gmail.com` is no new budget (decision 0141).
    checkAddress: (email) => consume(perAddress, mailboxOf(email), logger),
    async forgetAddress(email) {
      const inMemory = await addressMemory.delete(mailboxOf(email));
      // Redis down: thrown, so the erasure says it is not complete rather than pretend it is.
      const inRedis = redis ? await forgetAddressInRedis(redis, email) : false;
      return inMemory || inRedis;
    },
    // The Redis client is the services' (shared with the admin's throttle), closed with them.
    async close() {},
  };
}

/** A limiter of this module: in memory, or in Redis with the memory one as insurance. */
export type Limiter = RateLimiterMemory | RateLimiterRedis;

/**
 * A budget of `points` per `duration` seconds per key: in memory (at most MEMORY_LIMITER_MAX_KEYS
 * keys), or shared through `redis` with `memory` as insurance while Redis is unreachable, so that
 * several instances count one client once.
 */
export function createSharedLimiter(
  options: { keyPrefix: string; points: number; duration: number },
  redis: Redis | undefined,
  memory: RateLimiterMemory = createBoundedMemoryLimiter(options, MEMORY_LIMITER_MAX_KEYS),
): Limiter {
  if (!redis) return memory;
  const RateLimiterRedis = limiterClass('RateLimiterRedis');
  // rejectIfRedisNotReady: while Redis is down, go straight to memory instead of queueing.
  return new RateLimiterRedis({ ...options, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: memory });
}

/**
 * The library's memory limiter, remembering at most `maxKeys` keys: after each new key the
 * oldest windows are forgotten (each with its timer), so a flood of addresses cannot grow it.
 * Hint: the library keeps its records in a Map (insertion order: when each window began); the
 * tests check the bound, so an upgrade that changes that is noticed.
 */
export function createBoundedMemoryLimiter(options: { keyPrefix: string; points: number; duration: number }, maxKeys: number): RateLimiterMemory {
  const RateLimiterMemory = limiterClass('RateLimiterMemory');
  const limiter = new RateLimiterMemory(options);
  const records = (limiter as unknown as { _memoryStorage: { _storage: Map<string, { timeoutId?: NodeJS.Timeout }> } })._memoryStorage._storage;
  const consume = limiter.consume.bind(limiter);
  limiter.consume = (key, points, more) => {
    const answer = consume(key, points, more);
    for (const [oldest, record] of records) {
      if (records.size <= maxKeys) break;
      clearTimeout(record.timeoutId);
      records.delete(oldest);
    }
    return answer;
  };
  return limiter;
}

/** Counts one point of `key`: refused with the seconds until the window ends, or let through when the store fails. */
export async function consume(limiter: Limiter, key: string, logger: Logger): Promise<LimitVerdict> {
  try {
    await limiter.consume(key);
    return ALWAYS;
  } catch (rejection) {
    // A refusal is the library's RateLimiterRes; a store failure is an Error.
    if (!(rejection instanceof Error) && typeof (rejection as { msBeforeNext?: unknown }).msBeforeNext === 'number') {
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((rejection as { msBeforeNext: number }).msBeforeNext / 1000)) };
    }
    // A store failure with no insurance left: let the visitor through rather than lose a message.
    logger.error('rate_limit.failed', { error: describeError(rejection) });
    return ALWAYS;
  }
}
