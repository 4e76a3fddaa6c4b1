import type { Redis } from 'ioredis';
import { createHash } from 'node:crypto';
import type { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { limiterClass } from '../lazy.ts';
import { describeError, type Logger } from '../log.ts';

// The limits on what sends a link (issue 42, decision 0288): mails to one address, reset requests
// from one client, invitations by one owner. Built as admin/throttle.ts is: Redis when
// configured (memory as insurance while it is unreachable), memory otherwise.

/** Link mails (invitation, reset, sign-in link) one address gets in 24 hours; after them, silently none. */
export const LINK_MAILS_PER_ADDRESS = 3;
const LINK_MAIL_WINDOW_SECONDS = 24 * 60 * 60;

/** Reset requests one client may make in an hour; the next is answered 429. */
export const RESET_REQUESTS_PER_CLIENT = 5;
const RESET_WINDOW_SECONDS = 60 * 60;

/** Invitations one owner may send in an hour; the next is answered 429. */
export const INVITATIONS_PER_OWNER = 20;
const INVITATION_WINDOW_SECONDS = 60 * 60;

/** Whether something may go ahead, or after how many seconds it may again. */
export type MailGate = { ok: true } | { ok: false; retryAfterSeconds: number };

/** Counts what sends links. */
export interface MailLimits {
  /** Counts a link mail to this address: `false` past 3 in 24 hours (then no mail is sent, and nothing else changes). */
  linkMail(email: string): Promise<boolean>;
  /** Counts a reset request of this client: refused past 5 in an hour. */
  resetRequest(clientKey: string): Promise<MailGate>;
  /** Counts an invitation by this person: refused past 20 in an hour. */
  invitation(personId: number): Promise<MailGate>;
}

/**
 * The limits, in memory or shared through Redis so that several instances count once.
 * Hint: an address is a key as its SHA-256 only, never itself (as the sign-in throttle's).
 * A store that fails lets the request through: the limits slow abuse, they are not a lock.
 */
export function createMailLimits(options: { redis?: Redis; logger: Logger }): MailLimits {
  const RateLimiterMemory = limiterClass('RateLimiterMemory');
  const RateLimiterRedis = limiterClass('RateLimiterRedis');
  const { redis, logger } = options;
  const limiter = (keyPrefix: string, points: number, duration: number) => {
    const memory = new RateLimiterMemory({ keyPrefix, points, duration });
    if (!redis) return memory;
    return new RateLimiterRedis({ storeClient: redis, keyPrefix, points, duration, rejectIfRedisNotReady: true, insuranceLimiter: memory });
  };
  const perAddress = limiter('site-forms:link-mail', LINK_MAILS_PER_ADDRESS, LINK_MAIL_WINDOW_SECONDS);
  const perClient = limiter('site-forms:reset-request', RESET_REQUESTS_PER_CLIENT, RESET_WINDOW_SECONDS);
  const perOwner = limiter('site-forms:invitation', INVITATIONS_PER_OWNER, INVITATION_WINDOW_SECONDS);

  return {
    async linkMail(email) {
      return (await consume(perAddress, createHash('sha256').update(email.trim().toLowerCase()).digest('hex'), logger)).ok;
    },
    resetRequest: (clientKey) => consume(perClient, clientKey, logger),
    invitation: (personId) => consume(perOwner, String(personId), logger),
  };
}

async function consume(limiter: RateLimiterMemory | RateLimiterRedis, key: string, logger: Logger): Promise<MailGate> {
  try {
    await limiter.consume(key);
    return { ok: true };
  } catch (rejection) {
    // A refusal is the library's RateLimiterRes; a store failure is an Error.
    if (!(rejection instanceof Error) && typeof (rejection as RateLimiterRes).msBeforeNext === 'number') {
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((rejection as RateLimiterRes).msBeforeNext / 1000)) };
    }
    logger.error('admin.mail_limits_failed', { error: describeError(rejection) });
    return { ok: true };
  }
}
