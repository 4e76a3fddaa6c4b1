import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { openStore } from '../../../packages/site-forms/src/lib/database/database.ts';
import { PREPARED_STATEMENTS, preparedStatements } from '../../../packages/site-forms/src/lib/sql/postgres.ts';
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

describe('the names of prepared statements', () => {
  test('a text with a varying list (the orphans’ sweep) does not use up the names, and a hot text first seen late still gets one', () => {
    const prepare = preparedStatements();
    const sweep = (n: number) => {
      const keys = Array.from({ length: n }, (_, i) => `k${i}`);
      return prepare(`SELECT storage_key FROM files WHERE storage_key IN (${keys.map(() => '?').join(', ')})`, keys);
    };
    // One page a length, more lengths than there are names.
    const pages = Array.from({ length: PREPARED_STATEMENTS + 50 }, (_, i) => sweep(i + 1));
    expect(pages.filter((page) => page.name !== undefined)).toEqual([]);
    expect(pages[2]!.text).toBe('SELECT storage_key FROM files WHERE storage_key IN ($1, $2, $3)');
    // The upkeep's statement, first run minutes after the start: named, and the same name each time.
    const hot = "UPDATE submissions SET lease_until = NULL WHERE status = 'pending' AND attempts >= ? AND lease_until <= ?";
    const first = prepare(hot, [3, 'now']);
    expect(first.name).toMatch(/^site_forms_\d+$/);
    expect(prepare(hot, [3, 'later']).name).toBe(first.name);
    // A fixed list of values (an insert's) is still named.
    expect(prepare('INSERT INTO files (id, name) VALUES (?, ?)', [1, 'a']).name).toMatch(/^site_forms_\d+$/);
  });
});
