import type { TestProject } from 'vitest/node';
import { postgresAvailable, startPostgres } from './postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The port of one cluster for the whole run, where `testEngines` makes its databases; absent: each file starts its own. */
    sharedPostgresPort?: number;
  }
}

/**
 * A global setup (vitest.stryker.config.ts): one PostgreSQL cluster for the whole run instead of
 * one per test file. Stryker reruns a test file for each mutant it covers, and the file's own
 * initdb and start cost more than its tests; a fresh database per store keeps the tests apart.
 * Suites that stop or restart their server (outages) still start a cluster of their own.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!postgresAvailable) return undefined;
  const server = await startPostgres();
  project.provide('sharedPostgresPort', server.port);
  return () => server.remove();
}
