import * as v from 'valibot';
import { type ConfigConcern, readVariables } from './variables.ts';

/** Whether our server answers `/api/*` itself rather than through Astro (decision 0005). */
export type FastPathConfig = { apiFastPath: boolean };

const VARIABLES = {
  API_FAST_PATH: v.optional(v.picklist(['on', 'off'], 'must be on or off'), 'on'),
};

/** API_FAST_PATH. */
export const fastPath: ConfigConcern<FastPathConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    return { config: { apiFastPath: e.API_FAST_PATH === 'on' }, problems };
  },
  describe: ({ apiFastPath }) => ({ apiFastPath }),
};
