import { describeError, type Logger } from '../log.ts';
import { type Engine, engineName } from './sql.ts';

/** Whether the database answered its last statement, and if not, why. */
export interface DatabaseState {
  /** Why the last statement failed, or `undefined` while the database answers. */
  readonly failure: string | undefined;
  /** Records a statement that failed; the first failure of a run of them is logged, once. */
  failed(error: unknown): void;
  /** Records a statement that succeeded; after failures, says in the log that the database is back. */
  succeeded(): void;
}

/**
 * Tracks the database's availability for health and the log.
 * Hint: a request that fails for the same cause as the one before logs nothing, so an outage
 * under load is one line with its real cause (and one when it ends), not one per request.
 */
export function createDatabaseState(engine: Engine, logger: Logger): DatabaseState {
  let failure: string | undefined;
  return {
    get failure() {
      return failure;
    },
    failed(error) {
      const cause = describeError(error);
      if (cause !== failure) logger.error('database.unavailable', { database: engineName(engine), error: cause });
      failure = cause;
    },
    succeeded() {
      if (failure === undefined) return;
      failure = undefined;
      logger.info('database.recovered', { database: engineName(engine) });
    },
  };
}
