import type pg from 'pg';
import { requireWhenNeeded } from '../lazy.ts';
import { MIGRATIONS, type OnMigrated } from './migrations.ts';
import type { Sql, SqlSession, SqlValue } from './sql.ts';

/** The pool and the timeouts of the PostgreSQL store. */
export type PostgresOptions = {
  /** Told of each migration step applied. */
  onMigrated?: OnMigrated | undefined;
  url: string;
  poolSize: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  /** Told about an idle connection that broke (the server stopped, the network went away). */
  onIdleError?: (error: Error) => void;
};

/**
 * The key of the advisory lock under which an instance migrates, so that instances starting
 * together apply each step once. Any constant will do; this one spells "forms".
 */
export const MIGRATION_LOCK_KEY = 0x666f726d73;

/**
 * Connects to PostgreSQL through a bounded pool and applies the migrations it lacks.
 * Hint: the connect timeout also bounds the wait for a free connection of the pool, so a
 * request during an outage fails within it rather than queueing without end.
 */
export function openPostgres(options: PostgresOptions): Sql {
  // Loaded here, not at import: a site on SQLite (the default) never pays its ~7 MB.
  const { Pool, types } = requireWhenNeeded('pg') as typeof import('pg');
  const pool = new Pool({
    connectionString: options.url,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs,
    statement_timeout: options.statementTimeoutMs,
    // The client-side bound too, for a server that stopped answering without closing.
    query_timeout: options.statementTimeoutMs + options.connectTimeoutMs,
    idle_in_transaction_session_timeout: options.statementTimeoutMs * 2,
    application_name: 'site-forms',
    keepAlive: true,
    types: { getTypeParser: readAsText(types) },
  });
  // Without a listener, an idle connection broken by a server restart would end the process.
  pool.on('error', (error) => options.onIdleError?.(error));
  // Opening answers at once (the services are built synchronously); every statement waits
  // for the migrations, and the server awaits `ready` before it listens.
  const ready = migrate(pool, options.onMigrated);
  ready.catch(() => {});

  const prepared = preparedStatements();
  const session = (client: pg.Pool | pg.PoolClient, migrated: boolean): SqlSession => {
    const query = async (sql: string, params: readonly SqlValue[]) => {
      if (!migrated) await ready;
      return client.query(prepared(sql, params));
    };
    return {
      all: async <T>(sql: string, params: readonly SqlValue[] = []) => (await query(sql, params)).rows as T[],
      get: async <T>(sql: string, params: readonly SqlValue[] = []) => (await query(sql, params)).rows[0] as T | undefined,
      run: async (sql, params = []) => ({ changes: (await query(sql, params)).rowCount ?? 0 }),
    };
  };
  const direct = session(pool, false);
  return {
    engine: 'postgresql',
    ready,
    ...direct,
    runOnce: direct.run,
    async transaction(work) {
      await ready;
      const client = await pool.connect();
      let broken: Error | undefined;
      // A checked-out connection that breaks (the server stopped mid-transaction) emits 'error'
      // besides failing its query; unheard, that event would end the process.
      const onError = (error: Error) => {
        broken = error;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await work(session(client, true));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // A failed rollback means the connection is gone: it is dropped, and the first error told.
        await client.query('ROLLBACK').catch((rollbackError: Error) => {
          broken = rollbackError;
        });
        throw error;
      } finally {
        client.removeListener('error', onError);
        client.release(broken);
      }
    },
    async close() {
      await ready.catch(() => {});
      await pool.end();
    },
  };
}

/** PostgreSQL's type id of TIMESTAMPTZ. */
const TIMESTAMPTZ = 1184;

/**
 * The driver's parsers, but a TIMESTAMPTZ is answered as ISO 8601 text in UTC to the
 * millisecond (`2026-11-29T02:00:00.000Z`), as SQLite's text columns hold it, so the
 * repositories read one kind of value from both engines.
 */
export function readAsText(types: typeof pg.types): (oid: number, format?: 'text' | 'binary') => (value: string) => unknown {
  const parseTime = types.getTypeParser(TIMESTAMPTZ, 'text') as (value: string) => Date;
  return (oid, format = 'text') =>
    oid === TIMESTAMPTZ && format === 'text'
      ? (value: string) => parseTime(value).toISOString()
      : (types.getTypeParser(oid, format) as (value: string) => unknown);
}

/** The most statements each connection keeps prepared; the texts beyond them run unnamed. */
export const PREPARED_STATEMENTS = 200;

/** A list of values built to the length of an array (`IN (?, ?, …)`): its text changes with the list. */
const VARYING_LIST = /\bIN\s*\(\s*\?(\s*,\s*\?)*\s*\)/i;

/**
 * The query for a statement: named, so that each connection parses and plans it once and then
 * only binds and executes it (node-postgres sends the Parse only the first time a connection
 * meets the name). Hint: only texts whose number of values is fixed get a name, the first
 * PREPARED_STATEMENTS of them; a text with a list built to an array's length (the orphans'
 * sweep, a page of files) runs unnamed, so it neither uses up the names of texts first seen
 * later (the upkeep's) nor leaves a plan per length on each connection.
 */
export function preparedStatements(): (sql: string, params: readonly SqlValue[]) => pg.QueryConfig {
  const names = new Map<string, { name: string; text: string }>();
  return (sql, params) => {
    let statement = names.get(sql);
    if (!statement) {
      if (names.size >= PREPARED_STATEMENTS || VARYING_LIST.test(sql)) return { text: numbered(sql), values: [...params] };
      statement = { name: `site_forms_${names.size + 1}`, text: numbered(sql) };
      names.set(sql, statement);
    }
    return { ...statement, values: [...params] };
  };
}

/** `?` placeholders to PostgreSQL's `$1, $2, …` (no query of the store has a `?` in a literal). */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

async function migrate(pool: pg.Pool, onMigrated: OnMigrated | undefined): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
      )`);
      const { rows } = await client.query<{ applied: number | null }>('SELECT max(version) AS applied FROM schema_migrations');
      for (let version = (rows[0]?.applied ?? 0) + 1; version <= MIGRATIONS.length; version++) {
        const step = MIGRATIONS[version - 1]!;
        await client.query('BEGIN');
        try {
          await client.query(step.postgresql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [version, step.name]);
          await client.query('COMMIT');
          onMigrated?.({ version, name: step.name });
        } catch (error) {
          // The step's own error is the one to tell, not the rollback's on a broken connection.
          await client.query('ROLLBACK').catch(() => {});
          throw error;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}
