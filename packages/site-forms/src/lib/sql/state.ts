import type { Logger } from '../log.ts';
import { type Engine, engineName } from './sql.ts';

/** Whether the database answered its last statement, and if not, why. */
export interface DatabaseState {
  /** Why the database stopped answering, or `undefined` while it answers. */
  readonly failure: string | undefined;
  /** Records a statement that failed; the first failure of an outage is logged, once. */
  failed(error: unknown): void;
  /** Records a statement that succeeded; after failures, says in the log that the database is back. */
  succeeded(): void;
}

/**
 * Tracks the database's availability for health and the log.
 * Hint: only the first failure of an outage is logged, with its cause, and the recovery once:
 * an outage under load is two lines, not one per request (later causes, such as "connection
 * refused" after "terminating connection", go to the debug level).
 */
export function createDatabaseState(engine: Engine, logger: Logger): DatabaseState {
  let failure: string | undefined;
  // The latest cause, so that a changed cause is noted (at debug level) once, not per request.
  let latest: string | undefined;
  return {
    get failure() {
      return failure;
    },
    failed(error) {
      const cause = describeDatabaseError(error);
      if (failure === undefined) logger.error('database.unavailable', { database: engineName(engine), error: cause });
      else if (cause !== latest) logger.debug('database.still_unavailable', { database: engineName(engine), error: cause });
      failure ??= cause;
      latest = cause;
    },
    succeeded() {
      if (failure === undefined) return;
      failure = undefined;
      latest = undefined;
      logger.info('database.recovered', { database: engineName(engine) });
    },
  };
}

/**
 * What went wrong, in one line without secrets: the driver's message, or its code when the
 * message is empty (a refused connection to every address of a host is an AggregateError).
 */
export function describeDatabaseError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const inner = error instanceof AggregateError ? (error.errors[0] as Error | undefined)?.message : undefined;
  const message = error.message || inner || (typeof code === 'string' ? code : 'no message');
  return `${error.name}: ${message.split('\n', 1)[0]}`;
}

/**
 * Whether the database refused a statement because of the statement itself, which is our bug
 * and no outage: a table or column that is not there, a duplicate key, a value of the wrong
 * kind, or a mistake in the code around the statements (a TypeError in a transaction's work).
 * Everything else (no connection, a full disk, a lock, a timeout) is the database's state.
 * Hint: PostgreSQL's SQLSTATE classes 21 (cardinality), 22 (data), 23 (integrity), 42 (syntax, a
 * name not there; but 42501, a privilege the owner did not grant, is their set-up) and 0A (not
 * supported); SQLite's primary codes 1 (an SQL error), 19 (a constraint), 20 (a mismatch), 25 (range).
 */
export function isStatementFault(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return /^(21|22|23|42|0A)/.test(code) && code !== '42501';
  const errcode = (error as { errcode?: unknown }).errcode;
  if (typeof errcode === 'number') return STATEMENT_FAULTS_SQLITE.includes(errcode % 256);
  return error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError || error instanceof SyntaxError;
}

const STATEMENT_FAULTS_SQLITE = [1, 19, 20, 25];

/**
 * Gives an error the name of the statement it came from (`SELECT submissions`: the verb and the
 * first table), which `describeError` adds to the one line that reports it; the innermost
 * statement names it. Hint: only the statement's words, never its parameters (a visitor's text).
 */
export function nameStatement(error: unknown, text: string): void {
  if (typeof error !== 'object' || error === null || Object.hasOwn(error, 'statement')) return;
  const verb = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'SQL';
  const table = /\b(?:FROM|INTO|UPDATE)\s+"?(\w+)/i.exec(text)?.[1];
  Object.defineProperty(error, 'statement', { value: table ? `${verb} ${table}` : verb, enumerable: false, configurable: true });
}
