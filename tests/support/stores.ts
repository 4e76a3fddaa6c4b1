import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import { createLogger } from '../../packages/site-forms/src/lib/log.ts';
import { openStore, type Store } from '../../packages/site-forms/src/lib/database/database.ts';
import { createDatabaseOn, dropDatabaseOn, type PostgresServer, postgresAvailable, startPostgres } from './postgres.ts';
import './shared-postgres.ts';

/** Settings a test store uses unless a test says otherwise. */
export const TEST_DATABASE = { poolSize: 4, connectTimeoutMs: 2_000, statementTimeoutMs: 2_000, events: true };

/** One engine the behaviour suite runs against. */
export type TestEngine = {
  name: 'SQLite' | 'PostgreSQL';
  available: boolean;
  /** A fresh, empty store; `logs` collects what the store logged. */
  open(options?: Partial<typeof TEST_DATABASE>): Promise<{ store: Store; logs: Array<Record<string, unknown>>; url?: string; dataDir: string }>;
};

/**
 * The two engines, for `describe.each`: SQLite in a temporary folder, and PostgreSQL in a
 * cluster this test file starts once (beforeAll) and removes after (afterAll), or in the run's
 * one cluster where a global setup started it (tests/support/shared-postgres.ts).
 */
export function testEngines(): TestEngine[] {
  let server: PostgresServer | undefined;
  const sharedPort = inject('sharedPostgresPort');
  const opened: Array<{ store: Store; dataDir: string }> = [];
  const sharedDatabases: string[] = [];
  beforeAll(async () => {
    if (postgresAvailable && sharedPort === undefined) server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const { store, dataDir } of opened) {
      await store.close().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    }
    await server?.remove();
    // On the run's one cluster, each a few MB: thousands of mutant runs would fill the disk.
    for (const name of sharedDatabases) await dropDatabaseOn(sharedPort!, name).catch(() => {});
  });
  const open = async (url: string | undefined, options: Partial<typeof TEST_DATABASE> = {}) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'site-forms-store-'));
    const logs: Array<Record<string, unknown>> = [];
    const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
    const store = openStore({ ...TEST_DATABASE, ...options, url, dataDir }, logger);
    await store.ready;
    opened.push({ store, dataDir });
    return { store, logs, url, dataDir };
  };
  return [
    { name: 'SQLite', available: true, open: (options) => open(undefined, options) },
    {
      name: 'PostgreSQL',
      available: postgresAvailable,
      // A name of its own: with one cluster for the run, files in one process would meet on a counter.
      open: async (options) => {
        const name = `test_${randomUUID().replaceAll('-', '')}`;
        if (sharedPort === undefined) return open(await server!.createDatabase(name), options);
        sharedDatabases.push(name);
        return open(await createDatabaseOn(sharedPort, name), options);
      },
    },
  ];
}
