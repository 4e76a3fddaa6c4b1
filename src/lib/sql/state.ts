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
