import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * NODE_OPTIONS for a command-line tool run from source: it reads the suite's settings and forms,
 * not the owner's (tests/support/test-configs.ts).
 */
export const TEST_CONFIGS_OPTION = `--import=${fileURLToPath(new URL('../support/test-configs.ts', import.meta.url))}`;

/** What one run of a command-line tool printed, and how it exited. */
export type CliRun = { code: number | null; stdout: string; stderr: string };

/** What one run of the inbox command printed, and how it exited. */
export type InboxRun = CliRun;

/**
 * Runs one of `src/cli/*.ts` (`inbox`, `subscribers`, `db`…) as the owner would, with only the
 * given environment (plus PATH and HOME), or through `npm run --silent <script>` when `viaNpm` is set;
 * with the suite's settings and forms (TEST_CONFIGS_OPTION).
 */
export function runCli(script: string, args: string[], env: Record<string, string>, options: { viaNpm?: boolean } = {}): Promise<CliRun> {
  const [command, commandArgs] = options.viaNpm
    ? ['npm', ['run', '--silent', script, '--', ...args]]
    : [process.execPath, [fileURLToPath(new URL(`../../packages/site-forms/src/cli/${script}.ts`, import.meta.url)), ...args]];
  const child = spawn(command, commandArgs, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ENV_FILE: '', NODE_OPTIONS: TEST_CONFIGS_OPTION, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs `src/cli/inbox.ts` as the owner would; see `runCli`. */
export function runInbox(args: string[], env: Record<string, string>, options: { viaNpm?: boolean } = {}): Promise<InboxRun> {
  return runCli('inbox', args, env, options);
}
