import * as v from 'valibot';
import type { DatabaseConfig } from '../database/connection-settings.ts';
import { withoutCredentials } from './secrets.ts';
import { type ConfigConcern, type Env, integer, readVariables, text } from './variables.ts';

export type { DatabaseConfig };

const VARIABLES = {
  DATABASE_URL: v.optional(
    v.pipe(
      text,
      v.check(
        (s) => s === '' || (/^postgres(ql)?:\/\/[^/]/i.test(s) && URL.canParse(s)),
        'must be a URL such as postgres://user:password@127.0.0.1:5432/forms',
      ),
    ),
    '',
  ),
  DATABASE_POOL_SIZE: v.optional(integer(1, 1000), '10'),
  DATABASE_CONNECT_TIMEOUT_MS: v.optional(integer(100, 600_000), '5000'),
  DATABASE_STATEMENT_TIMEOUT_MS: v.optional(integer(100, 600_000), '5000'),
};

/**
 * DATABASE_URL and the pool and timeouts; the command-line tools read it alone, since they
 * should work while another part of the configuration is being fixed.
 */
export function readDatabaseConfig(env: Env): { config: DatabaseConfig; problems: string[] } {
  const { config: e, problems } = readVariables(VARIABLES, env);
  return {
    config: {
      url: e.DATABASE_URL || undefined,
      poolSize: e.DATABASE_POOL_SIZE,
      connectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    },
    problems,
  };
}

/** DATABASE_URL, DATABASE_POOL_SIZE, DATABASE_CONNECT_TIMEOUT_MS and DATABASE_STATEMENT_TIMEOUT_MS. */
export const database: ConfigConcern<{ database: DatabaseConfig }> = {
  read(env) {
    const { config, problems } = readDatabaseConfig(env);
    return { config: { database: config }, problems };
  },
  describe: ({ database: { url, poolSize, connectTimeoutMs, statementTimeoutMs } }) => ({
    database: url
      ? { url: withoutCredentials(url), poolSize, connectTimeoutMs, statementTimeoutMs }
      : { sqlite: 'forms.db in DATA_DIR', lockTimeoutMs: statementTimeoutMs },
  }),
};
