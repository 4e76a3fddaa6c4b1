import * as v from 'valibot';
import { type ConfigConcern, readVariables } from './variables.ts';

/** The least severe kind of line the log writes. */
export type LoggingConfig = { logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent' };

const VARIABLES = {
  LOG_LEVEL: v.optional(v.picklist(['debug', 'info', 'warn', 'error', 'silent'], 'must be debug, info, warn, error or silent'), 'info'),
};

/** LOG_LEVEL. */
export const logging: ConfigConcern<LoggingConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    return { config: { logLevel: e.LOG_LEVEL }, problems };
  },
  describe: ({ logLevel }) => ({ logLevel }),
};
