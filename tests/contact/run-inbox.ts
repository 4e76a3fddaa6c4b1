import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What one run of the inbox command printed, and how it exited. */
export type InboxRun = { code: number | null; stdout: string; stderr: string };

/**
 * Runs `src/cli/inbox.ts` as the owner would, with only the given environment (plus PATH),
 * or through `npm run --silent inbox` when `viaNpm` is set.
 */
export function runInbox(args: string[], env: Record<string, string>, options: { viaNpm?: boolean } = {}): Promise<InboxRun> {
  const [command, commandArgs] = options.viaNpm
    ? ['npm', ['run', '--silent', 'inbox', '--', ...args]]
    : [process.execPath, [fileURLToPath(new URL('../../src/cli/inbox.ts', import.meta.url)), ...args]];
  const child = spawn(command, commandArgs, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ENV_FILE: '', ...env },
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
