/** The exit codes of the command-line tools: done, nothing there or not done, a usage error. */
export const EXIT = { ok: 0, notFound: 1, failed: 1, usage: 2 } as const;

/** The export formats both tools write. */
export type ExportFormat = 'csv' | 'json';

/**
 * Reads `--format csv|json` (or `--format=csv`) at the start of the arguments.
 * Hint: answers what is left after it, so the caller can refuse extra arguments.
 */
export function readFormatOption(args: readonly string[]): { ok: true; format: ExportFormat; rest: readonly string[] } | { ok: false; problem: string } {
  let format: string | undefined;
  let rest = args;
  if (args[0] === '--format') {
    format = args[1];
    rest = args.slice(2);
  } else if (args[0]?.startsWith('--format=')) {
    format = args[0].slice('--format='.length);
    rest = args.slice(1);
  }
  if (format !== 'csv' && format !== 'json') return { ok: false, problem: 'export needs --format csv or --format json.' };
  return { ok: true, format, rest };
}

/**
 * Writes to a stream (stdout) and answers once it may take more: at once while its buffer has
 * room, after `drain` when it is full, so an export into a slow pipe waits instead of piling up.
 * Hint: a stream that closes or fails also settles the wait; the next write then fails as Node's own.
 */
export function streamOut(stream: NodeJS.WritableStream & { writableNeedDrain?: boolean }): (text: string) => Promise<void> | undefined {
  return (text) => {
    if (stream.write(text)) return undefined;
    return new Promise<void>((resolve) => {
      const go = () => {
        stream.off('drain', go);
        stream.off('close', go);
        stream.off('error', go);
        resolve();
      };
      stream.on('drain', go);
      stream.on('close', go);
      stream.on('error', go);
    });
  };
}
