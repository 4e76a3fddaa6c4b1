import { createRequire } from 'node:module';

/**
 * Loads a package the first time a service needs it, so a deployment pays the memory of
 * only the services it uses (the Mailchimp client, nodemailer or ioredis each cost 20–30 MB).
 * Hint: pair it with `typeof import('pkg')` for the type; the static type import is erased.
 */
export const requireWhenNeeded = createRequire(import.meta.url);
