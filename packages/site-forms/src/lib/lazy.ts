import { createRequire } from 'node:module';

const fromHere = createRequire(import.meta.url);
let fromPackage: NodeJS.Require | undefined;
/** `require` from this package's folder, found by its name from wherever this code runs (below). */
const packageRequire = () => (fromPackage ??= createRequire(fromHere.resolve('site-forms/package.json')));

/**
 * Loads a package the first time a service needs it, so a deployment pays the memory of
 * only the services it uses (the Mailchimp client, nodemailer or ioredis each cost 20–30 MB).
 * Hint: pair it with `typeof import('pkg')` for the type; the static type import is erased.
 * Hint: resolved from this package's own folder, found by its name, not from this file: in an
 * owner's build this code is bundled into their dist/server, and under a strict install (pnpm)
 * the owner's node_modules hold only their own dependencies, not ours (decision 0236).
 */
export function requireWhenNeeded(name: string): unknown {
  return packageRequire()(name);
}

type Limiters = typeof import('rate-limiter-flexible');

/**
 * One of rate-limiter-flexible's limiters, from its own file: the package's index loads all
 * twenty-odd of them (MongoDB, DynamoDB, Prisma…), ~4 MB more for the two we use.
 */
export function limiterClass<Name extends 'RateLimiterMemory' | 'RateLimiterRedis'>(name: Name): Limiters[Name] {
  return requireWhenNeeded(`rate-limiter-flexible/lib/${name}.js`) as Limiters[Name];
}

/** Whether a package can be loaded from this package's folder (an optional peer the owner installed, or a dependency of ours). */
export function installed(name: string): boolean {
  try {
    packageRequire().resolve(name);
    return true;
  } catch {
    return false;
  }
}
