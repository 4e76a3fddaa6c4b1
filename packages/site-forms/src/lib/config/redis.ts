import { withoutCredentials } from './secrets.ts';
import { type ConfigConcern, optionalUrlOf, readVariables } from './variables.ts';

/** The Redis server that shares the limits between instances, or `undefined` to keep them in memory. */
export type RedisConfig = { redisUrl: string | undefined };

const VARIABLES = {
  REDIS_URL: optionalUrlOf(['redis', 'rediss'], 'redis://127.0.0.1:6379'),
};

/** REDIS_URL. */
export const redis: ConfigConcern<RedisConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    return { config: { redisUrl: e.REDIS_URL || undefined }, problems };
  },
  describe: ({ redisUrl }) => ({ redisUrl: redisUrl ? withoutCredentials(redisUrl) : undefined }),
};
