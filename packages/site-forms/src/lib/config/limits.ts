import * as v from 'valibot';
import { type ConfigConcern, integer, readVariables } from './variables.ts';

/** How many posts each client may make in each window; `max` 0 turns every limit off. */
export type LimitsConfig = { rateLimit: { max: number; windowSeconds: number } };

const VARIABLES = {
  RATE_LIMIT_MAX: v.optional(integer(0, 1_000_000), '5'),
  RATE_LIMIT_WINDOW_SECONDS: v.optional(integer(1, 31 * 24 * 3600), '600'),
};

/** RATE_LIMIT_MAX and RATE_LIMIT_WINDOW_SECONDS. */
export const limits: ConfigConcern<LimitsConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    return { config: { rateLimit: { max: e.RATE_LIMIT_MAX, windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS } }, problems };
  },
  describe: ({ rateLimit }) => ({ rateLimit: rateLimit.max === 0 ? 'off' : rateLimit }),
};
