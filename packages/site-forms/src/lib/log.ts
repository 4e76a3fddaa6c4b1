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
      const time = new Date().toISOString();
      const line = { time, level, event, ...fields };
      // A field may not rename the line: its own time, level and event win (and stay first).
      line.time = time;
      line.level = level;
      line.event = event;
      write(`${JSON.stringify(line)}\n`);
    };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** A logger that drops everything, for tests that do not look at logs. */
export const silentLogger: Logger = createLogger({ level: 'silent' });

/** The name and message of an error, without its stack, for a log line. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // A store error names the statement it came from (sql/state.ts `nameStatement`).
  const statement = (error as { statement?: unknown }).statement;
  return typeof statement === 'string' ? `${error.name}: ${error.message} (statement: ${statement})` : `${error.name}: ${error.message}`;
}

/** How a logger bounds the lines clients cause: per client and event, and in all. */
export type ClientLineLimits = {
  /** Within this long, the same event of the same client (and status) is written once, then counted. */
  intervalMs: number;
  /** Lines with a `client` written per second at most, whoever the clients are; the rest are counted. */
  maxPerSecond: number;
  /** How many distinct client-and-event keys are remembered; past it, their counts are written and forgotten. */
  maxKeys: number;
  clock?: () => number;
};

/** The bounds of the server: one line per client and event a minute, at most 50 such lines a second. */
export const CLIENT_LINE_LIMITS: ClientLineLimits = { intervalMs: 60_000, maxPerSecond: 50, maxKeys: 10_000 };

/** The longest text a client controls that a line may hold. */
export const CLIENT_TEXT_MAX = 200;

/**
 * A logger whose lines about a client (those with a `client` field) cannot fill a disk: a
 * repeat of the same event, client and status within the interval is counted rather than
 * written, and summed up in one `log.repeated` line; all of them together are held to a rate,
 * past which they are counted in one `log.dropped` line a second; their text fields are cut to
 * 200 characters. Lines without a client (the server's own) pass untouched.
 * Hint: a flood of near misses from one address wrote 1–3 MB of log a second before this.
 */
export function limitClientLines(logger: Logger, limits: ClientLineLimits = CLIENT_LINE_LIMITS): Logger & { flush(): void } {
  const clock = limits.clock ?? Date.now;
  const seen = new Map<string, { level: LogLevel; event: string; client: unknown; status: unknown; since: number; repeats: number }>();
  let second = 0;
  let written = 0;
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;

  const summarise = (key: string) => {
    const entry = seen.get(key)!;
    seen.delete(key);
    if (entry.repeats > 0) {
      logger[entry.level]('log.repeated', {
        of: entry.event,
        client: entry.client,
        ...(entry.status !== undefined && { status: entry.status }),
        repeats: entry.repeats,
        sinceMs: clock() - entry.since,
      });
    }
  };
  const flush = () => {
    const now = clock();
    for (const [key, entry] of seen) if (now - entry.since >= limits.intervalMs) summarise(key);
    if (dropped > 0 && now - second >= 1000) {
      logger.warn('log.dropped', { lines: dropped, note: `more than ${limits.maxPerSecond} lines a second about clients` });
      dropped = 0;
    }
    if (seen.size === 0 && dropped === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  const keepFlushing = () => {
    // Counts are written even when the flood stops; the timer ends with them and never holds the process.
    timer ??= setInterval(flush, Math.min(limits.intervalMs, 1000)).unref();
  };

  const limited =
    (level: LogLevel) =>
    (event: string, fields: Record<string, unknown> = {}) => {
      if (fields.client === undefined) return logger[level](event, fields);
      flush();
      const key = `${event}\u0000${String(fields.client)}\u0000${String(fields.status ?? '')}`;
      const entry = seen.get(key);
      if (entry) {
        entry.repeats++;
        return keepFlushing();
      }
      const now = clock();
      if (now - second >= 1000) {
        second = now;
        written = 0;
      }
      if (written >= limits.maxPerSecond) {
        dropped++;
        return keepFlushing();
      }
      written++;
      if (seen.size >= limits.maxKeys) for (const oldest of [...seen.keys()]) summarise(oldest);
      seen.set(key, { level, event, client: fields.client, status: fields.status, since: now, repeats: 0 });
      keepFlushing();
      logger[level](event, cut(fields));
    };
  return { debug: limited('debug'), info: limited('info'), warn: limited('warn'), error: limited('error'), flush };
}

/** The fields with every text cut to what a client may put in a line. */
function cut(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields))
    out[name] = typeof value === 'string' && value.length > CLIENT_TEXT_MAX ? value.slice(0, CLIENT_TEXT_MAX) : value;
  return out;
}
