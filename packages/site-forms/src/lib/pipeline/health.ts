import type { Data } from '../http/outcome.ts';
import type { Store } from '../database/database.ts';

/** What the health check reads. */
export type HealthDeps = { store: Pick<Store, 'health'>; providerName: string };

/**
 * GET /api/health: 200 with the provider, the database, whether it takes writes, its
 * integrity and the messages waiting or given up on; 503, naming the database and what is
 * wrong, when it does not take writes or failed its integrity check.
 * Hint: the write is real and committed, so a full disk or a stopped PostgreSQL shows here.
 */
export async function handleHealth({ store, providerName }: HealthDeps): Promise<Data> {
  const health = await store.health();
  const ok = health.problem === undefined;
  return {
    kind: 'data',
    status: ok ? 200 : 503,
    body: {
      success: ok,
      ...(!ok && { error: health.problem }),
      provider: providerName,
      database: health.database,
      databaseWritable: health.writable,
      databaseIntegrity: health.integrity,
      pendingMessages: health.pendingMessages,
      failedMessages: health.failedMessages,
    },
  };
}
