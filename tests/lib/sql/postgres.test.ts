import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { openStore } from '../../../packages/site-forms/src/lib/database/database.ts';
import { type PostgresServer, postgresAvailable, startPostgres } from '../../support/postgres.ts';
import { eventually } from '../../support/smtp.ts';
import { TEST_DATABASE } from '../../support/stores.ts';

describe.skipIf(!postgresAvailable)('PostgreSQL going away under the store', () => {
  let postgres: PostgresServer;
  let dataDir: string;
  beforeAll(async () => {
    postgres = await startPostgres();
    dataDir = mkdtempSync(join(tmpdir(), 'site-forms-pg-'));
  }, 60_000);
  afterAll(async () => {
    await postgres?.remove();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('a connection cut in the middle of a transaction rejects it, stores none of it, and the process lives on', async () => {
    const logs: Array<Record<string, unknown>> = [];
    const store = openStore(
      { ...TEST_DATABASE, url: await postgres.createDatabase('cut'), dataDir },
      createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
    );
    try {
      await store.ready;
      let inside!: () => void;
      const reached = new Promise<void>((resolve) => (inside = resolve));
      let carryOn!: () => void;
      const gate = new Promise<void>((resolve) => (carryOn = resolve));
      const transaction = store.sql.transaction(async (tx) => {
        await tx.run("INSERT INTO subscribers (email, created_at) VALUES ('a@example.org', 't')");
        inside();
        await gate;
        await tx.run("INSERT INTO subscribers (email, created_at) VALUES ('b@example.org', 't')");
      });
      await reached;
      // Fast shutdown ends every connection while this one holds an open transaction.
      await postgres.stop();
      carryOn();
      await expect(transaction).rejects.toThrow();
      expect(logs.filter((l) => l.level === 'error')).toEqual([expect.objectContaining({ event: 'database.unavailable', database: 'PostgreSQL' })]);

      await postgres.start();
      await eventually(
        'the store to answer again',
        () =>
          store.subscribers.list().then(
            () => true,
            () => false,
          ),
        15_000,
      );
      await expect(store.subscribers.list()).resolves.toEqual([]);
      await store.subscribers.add('c@example.org', new Date('2026-01-01T00:00:00.000Z'));
      expect(logs.filter((l) => l.event === 'database.recovered')).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
