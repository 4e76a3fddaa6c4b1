import * as v from 'valibot';
import { type ConfigConcern, integer, readVariables } from './variables.ts';

/**
 * How many posts each client may make in each window (`max` 0 turns these limits off); and how
 * many requests each API key may make a minute on /api/v1, its own setting that `max` 0 leaves on.
 */
export type LimitsConfig = { rateLimit: { max: number; windowSeconds: number }; apiRateLimitPerMinute: number };

const VARIABLES = {
  RATE_LIMIT_MAX: v.optional(integer(0, 1_000_000), '5'),
  RATE_LIMIT_WINDOW_SECONDS: v.optional(integer(1, 31 * 24 * 3600), '600'),
  API_RATE_LIMIT_PER_MINUTE: v.optional(integer(1, 100_000), '120'),
};

/** RATE_LIMIT_MAX, RATE_LIMIT_WINDOW_SECONDS and API_RATE_LIMIT_PER_MINUTE. */
export const limits: ConfigConcern<LimitsConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    return {
      config: { rateLimit: { max: e.RATE_LIMIT_MAX, windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS }, apiRateLimitPerMinute: e.API_RATE_LIMIT_PER_MINUTE },
      problems,
    };
  },
  describe: ({ rateLimit, apiRateLimitPerMinute }) => ({ rateLimit: rateLimit.max === 0 ? 'off' : rateLimit, apiRateLimitPerMinute }),
};
