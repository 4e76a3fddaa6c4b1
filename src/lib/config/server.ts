import * as v from 'valibot';
import { type ConfigConcern, type Env, integer, readVariables, text } from './variables.ts';

/** Where the server listens and keeps its database. */
export type ServerConfig = { host: string; port: number; dataDir: string };

const DATA_DIR = v.optional(text, './data');

const VARIABLES = {
  HOST: v.optional(text, 'localhost'),
  PORT: v.optional(integer(0, 65535), '4321'),
  DATA_DIR,
};

/** HOST, PORT and DATA_DIR. */
export const server: ConfigConcern<ServerConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    return { config: { host: e.HOST, port: e.PORT, dataDir: e.DATA_DIR }, problems };
  },
  describe: ({ host, port, dataDir }) => ({ host, port, dataDir }),
};

/**
 * The data directory alone, for the command-line tools, which should work even while
 * another part of the configuration is being fixed.
 */
export function readDataDir(env: Env): string {
  return v.parse(DATA_DIR, env.DATA_DIR);
}
