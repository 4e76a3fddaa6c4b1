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
