import { describe, expect, test } from 'vitest';
import { describeConfig, requireConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { readDatabaseConfig } from '../../../packages/site-forms/src/lib/config/database.ts';

describe('the database settings', () => {
  test('unset: SQLite in DATA_DIR, a pool of 10, 5 s to connect, 5 s per statement', () => {
    expect(readDatabaseConfig({})).toEqual({ config: { url: undefined, poolSize: 10, connectTimeoutMs: 5_000, statementTimeoutMs: 5_000 }, problems: [] });
    expect(requireConfig({}).database).toEqual({ url: undefined, poolSize: 10, connectTimeoutMs: 5_000, statementTimeoutMs: 5_000 });
  });

  test.each([
    ['postgres://forms:secret@db.internal:5432/forms'],
    ['postgresql://forms@127.0.0.1/forms'],
    ['POSTGRES://forms@[::1]:5433/forms?sslmode=require'],
  ])('DATABASE_URL=%s is PostgreSQL', (url) => {
    expect(readDatabaseConfig({ DATABASE_URL: url })).toMatchObject({ config: { url }, problems: [] });
  });

  test('an empty DATABASE_URL is SQLite, as unset', () => {
    expect(readDatabaseConfig({ DATABASE_URL: '' })).toMatchObject({ config: { url: undefined }, problems: [] });
  });

  test.each([
    ['DATABASE_URL', 'mysql://forms@db/forms', 'DATABASE_URL must be a URL such as postgres://user:password@127.0.0.1:5432/forms'],
    ['DATABASE_URL', 'postgres://', 'DATABASE_URL must be a URL such as postgres://user:password@127.0.0.1:5432/forms'],
    ['DATABASE_URL', 'forms.db', 'DATABASE_URL must be a URL such as postgres://user:password@127.0.0.1:5432/forms'],
    ['DATABASE_POOL_SIZE', '0', 'DATABASE_POOL_SIZE must be at least 1'],
    ['DATABASE_POOL_SIZE', '1001', 'DATABASE_POOL_SIZE must be at most 1000'],
    ['DATABASE_POOL_SIZE', 'ten', 'DATABASE_POOL_SIZE must be a whole number'],
    ['DATABASE_CONNECT_TIMEOUT_MS', '99', 'DATABASE_CONNECT_TIMEOUT_MS must be at least 100'],
    ['DATABASE_CONNECT_TIMEOUT_MS', '600001', 'DATABASE_CONNECT_TIMEOUT_MS must be at most 600000'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '99', 'DATABASE_STATEMENT_TIMEOUT_MS must be at least 100'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '1.5', 'DATABASE_STATEMENT_TIMEOUT_MS must be a whole number'],
  ])('%s=%s stops the start: "%s"', (name, value, problem) => {
    expect(readDatabaseConfig({ [name]: value }).problems).toEqual([problem]);
    expect(() => requireConfig({ [name]: value })).toThrow(problem);
  });

  test.each([
    ['DATABASE_POOL_SIZE', '1', { poolSize: 1 }],
    ['DATABASE_POOL_SIZE', '1000', { poolSize: 1000 }],
    ['DATABASE_CONNECT_TIMEOUT_MS', '100', { connectTimeoutMs: 100 }],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '600000', { statementTimeoutMs: 600_000 }],
  ])('%s=%s is accepted', (name, value, expected) => {
    expect(readDatabaseConfig({ [name]: value })).toMatchObject({ config: expected, problems: [] });
  });

  test('the start-up log names the database without its password', () => {
    expect(describeConfig(requireConfig({ DATABASE_URL: 'postgres://forms:s3cret@db:5432/forms' })).database).toEqual({
      url: 'postgres://***:***@db:5432/forms',
      poolSize: 10,
      connectTimeoutMs: 5_000,
      statementTimeoutMs: 5_000,
    });
    expect(describeConfig(requireConfig({})).database).toEqual({ sqlite: 'forms.db in DATA_DIR', lockTimeoutMs: 5_000 });
  });

  test('DELIVERY_LEASE_MS: two minutes unless set, at least a second', () => {
    expect(requireConfig({}).delivery.leaseMs).toBe(120_000);
    expect(requireConfig({ DELIVERY_LEASE_MS: '1000' }).delivery.leaseMs).toBe(1_000);
    expect(() => requireConfig({ DELIVERY_LEASE_MS: '999' })).toThrow('DELIVERY_LEASE_MS must be at least 1000');
  });
});
