import * as v from 'valibot';
import { fromProjectRoot } from '../project-root.ts';
import { type ConfigConcern, type Env, integer, readVariables, text } from './variables.ts';

/**
 * Where the server listens and keeps its database (`dataDir` absolute), and how long a request
 * that carries no files may take to arrive whole (`requestTimeoutMs`; uploads have UPLOAD_TIMEOUT_SECONDS).
 */
export type ServerConfig = { host: string; port: number; dataDir: string; requestTimeoutMs: number };

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
  // Every request but a post with files: a slow client may not hold a connection longer (decision 0185).
  REQUEST_TIMEOUT_SECONDS: v.optional(integer(1, 300), '30'),
};

/** HOST, PORT, DATA_DIR and REQUEST_TIMEOUT_SECONDS. */
export const server: ConfigConcern<ServerConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    return { config: { host: e.HOST, port: e.PORT, dataDir: e.DATA_DIR, requestTimeoutMs: e.REQUEST_TIMEOUT_SECONDS * 1000 }, problems };
  },
  describe: ({ host, port, dataDir, requestTimeoutMs }) => ({ host, port, dataDir, requestTimeoutMs }),
};

/**
 * The data directory alone, absolute, for the command-line tools, which should work even
 * while another part of the configuration is being fixed.
 */
export function readDataDir(env: Env): string {
  return v.parse(DATA_DIR, env.DATA_DIR);
}
