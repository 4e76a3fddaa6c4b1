// Where the service keeps its data, as src/lib/config/database.ts reads it: the database's own type.

/** Where the service keeps its data and how long it waits for the database. */
export type DatabaseConfig = {
  /** The PostgreSQL connection string, or `undefined` for the SQLite file in DATA_DIR. */
  url: string | undefined;
  /** The most connections one instance opens to PostgreSQL. */
  poolSize: number;
  /** How long opening a PostgreSQL connection (or waiting for a free one) may take before the request fails. */
  connectTimeoutMs: number;
  /** How long one statement may run (PostgreSQL), or wait for SQLite's write lock, before it fails. */
  statementTimeoutMs: number;
};
