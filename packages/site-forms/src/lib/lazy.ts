import { createRequire } from 'node:module';

/**
 * Loads a package the first time a service needs it, so a deployment pays the memory of
 * only the services it uses (the Mailchimp client, nodemailer or ioredis each cost 20–30 MB).
 * Hint: pair it with `typeof import('pkg')` for the type; the static type import is erased.
 */
export const requireWhenNeeded = createRequire(import.meta.url);

type Limiters = typeof import('rate-limiter-flexible');

/**
 * One of rate-limiter-flexible's limiters, from its own file: the package's index loads all
 * twenty-odd of them (MongoDB, DynamoDB, Prisma…), ~4 MB more for the two we use.
 */
export function limiterClass<Name extends 'RateLimiterMemory' | 'RateLimiterRedis'>(name: Name): Limiters[Name] {
  return requireWhenNeeded(`rate-limiter-flexible/lib/${name}.js`) as Limiters[Name];
}
