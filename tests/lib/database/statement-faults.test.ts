import { describe, expect, test } from 'vitest';
import { describeError } from '../../../packages/site-forms/src/lib/log.ts';
import { testEngines } from '../../support/stores.ts';

// A statement of ours that the database answered with "no" (a table that is not there, a
// duplicate key, a value bound wrongly) is our bug, not an outage: health keeps saying the
// database takes writes, nothing logs `database.unavailable`, and the error names its
// statement, so the one line that reports it says which one (issue 30, item 3).

describe.each(testEngines())('a statement at fault on $name', (engine) => {
  test.skipIf(!engine.available)("a table that is not there: the statement's name in the error, health unaffected", async () => {
    const { store, logs } = await engine.open();
    const failure = await store.sql.all('SELECT id FROM no_such_table WHERE id = ?', [1]).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(describeError(failure)).toContain('(statement: SELECT no_such_table)');
    expect(store.state.failure).toBeUndefined();
    await expect(store.health()).resolves.toMatchObject({ writable: true });
    expect(logs.filter((line) => line.event === 'database.unavailable')).toEqual([]);
  });

  test.skipIf(!engine.available)('a duplicate key inside a transaction: the failing statement named, health unaffected', async () => {
    const { store, logs } = await engine.open();
    const insert = 'INSERT INTO health_checks (id, checked_at) VALUES (?, ?)';
    const failure = await store.sql
      .transaction(async (tx) => {
        await tx.run(insert, [7, '2026-01-01T00:00:00.000Z']);
        await tx.run(insert, [7, '2026-01-01T00:00:00.000Z']);
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(describeError(failure)).toContain('(statement: INSERT health_checks)');
    expect(store.state.failure).toBeUndefined();
    await expect(store.health()).resolves.toMatchObject({ writable: true });
    expect(logs.filter((line) => line.event === 'database.unavailable')).toEqual([]);
  });

  test.skipIf(!engine.available)('a bug in the work of a transaction (a TypeError): health unaffected', async () => {
    const { store } = await engine.open();
    await expect(
      store.sql.transaction(async () => {
        throw new TypeError('Cannot read properties of undefined');
      }),
    ).rejects.toThrow(TypeError);
    expect(store.state.failure).toBeUndefined();
  });
});
