import * as v from 'valibot';
import { fromProjectRoot } from '../project-root.ts';
import { type ConfigConcern, type Env, integer, readVariables, text } from './variables.ts';

/** Where the server listens and keeps its database (`dataDir` absolute). */
export type ServerConfig = { host: string; port: number; dataDir: string };

// Relative to the project's folder, not the working directory: a service started from
// anywhere must find the data it wrote before (issue 11, item 2).
const DATA_DIR = v.pipe(
  v.optional(text, './data'),
  v.transform((path) => fromProjectRoot(path)),
);

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
 * The data directory alone, absolute, for the command-line tools, which should work even
 * while another part of the configuration is being fixed.
 */
export function readDataDir(env: Env): string {
  return v.parse(DATA_DIR, env.DATA_DIR);
}
