import * as v from 'valibot';
import { type ConfigConcern, readVariables } from './variables.ts';

/**
 * The least severe kind of line the log writes, and whether lines about a client are bounded
 * (`limited`: one per client and event a minute, 50 a second in all) or all written (`all`,
 * for debugging on a machine whose disk you watch).
 */
export type LoggingConfig = { logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent'; logClientLines: 'limited' | 'all' };

const VARIABLES = {
  LOG_LEVEL: v.optional(v.picklist(['debug', 'info', 'warn', 'error', 'silent'], 'must be debug, info, warn, error or silent'), 'info'),
  LOG_CLIENT_LINES: v.optional(v.picklist(['limited', 'all'], 'must be limited or all'), 'limited'),
};

/** LOG_LEVEL and LOG_CLIENT_LINES. */
export const logging: ConfigConcern<LoggingConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    return { config: { logLevel: e.LOG_LEVEL, logClientLines: e.LOG_CLIENT_LINES }, problems };
  },
  describe: ({ logLevel, logClientLines }) => ({ logLevel, logClientLines }),
};
