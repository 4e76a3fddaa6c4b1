/** The levels a logger writes, least to most severe. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Writes one JSON line per event; fields must never hold a secret, a message body or a full address. */
export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

const RANK: Record<LogLevel | 'silent', number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/**
 * A logger that writes JSON lines to a stream: stdout for the server, stderr for the
 * command-line tools, whose stdout is their output.
 */
export function createLogger(options: { level?: LogLevel | 'silent'; write?: (line: string) => void } = {}): Logger {
  const min = RANK[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stdout.write(line));
  const log =
    (level: LogLevel) =>
    (event: string, fields: Record<string, unknown> = {}) => {
      if (RANK[level] < min) return;
      write(`${JSON.stringify({ time: new Date().toISOString(), level, event, ...fields })}\n`);
    };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** A logger that drops everything, for tests that do not look at logs. */
export const silentLogger: Logger = createLogger({ level: 'silent' });

/** The name and message of an error, without its stack, for a log line. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
