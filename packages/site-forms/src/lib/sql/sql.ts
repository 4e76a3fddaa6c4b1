/** The two engines the store runs on. */
export type Engine = 'sqlite' | 'postgresql';

/** A value a statement takes as a parameter. */
export type SqlValue = string | number | null;

/** Statements on one connection; inside `transaction`, all of them belong to it. */
export interface SqlSession {
  /** Every row the statement answers. */
  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  /** The first row the statement answers, or `undefined`. */
  get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined>;
  /** Runs a statement and answers how many rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<{ changes: number }>;
}

/** How a transaction may be run. */
export type TransactionOptions = {
  /**
   * It may wait for the event loop's next turn, to be committed with the others asked for
   * meanwhile: on SQLite one fsync for all of them (group commit). PostgreSQL groups commits
   * across its connections by itself and ignores this.
   */
  together?: boolean;
};

/**
 * The database as the repositories see it: SQL with `?` placeholders (turned into `$1…` for
 * PostgreSQL), so one query serves both engines and only the few that differ switch on `engine`.
 * Hint: PostgreSQL answers BIGINT and count(*) as strings; repositories convert with Number().
 */
export interface Sql extends SqlSession {
  readonly engine: Engine;
  /** Settles once the database is reachable and migrated; rejects with why it is not. */
  readonly ready: Promise<void>;
  /** Runs `work` in one transaction: all of it is stored, or none; the error of `work` is what is thrown. */
  transaction<T>(work: (tx: SqlSession) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Runs one statement without waiting for a lock held elsewhere: SQLite's busy answer is thrown at once. */
  runOnce(sql: string, params?: readonly SqlValue[]): Promise<{ changes: number }>;
  /** Waits for statements under way, then closes the connections. */
  close(): Promise<void>;
}

/** The human name of an engine, as logs and health name it. */
export function engineName(engine: Engine): string {
  return engine === 'sqlite' ? 'SQLite' : 'PostgreSQL';
}
