/**
 * The built server as the benches run it (`bench:export`, `bench:uploads`): started with `args`
 * (the flags of `npm run serve` and the entry) on a free port of 127.0.0.1, the rate limits off,
 * and stopped; its resident memory read from /proc.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Starts the server with only PATH, `env` and the bench's defaults; answers once it listens. */
export function startServer(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', ENV_FILE: '', HOST: '127.0.0.1', PORT: '0', RATE_LIMIT_MAX: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const match = /"event":"server.listening".*?"port":(\d+)/.exec(buffer);
      if (match) resolve({ child, url: `http://127.0.0.1:${match[1]}` });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

/** Stops the server (SIGTERM) and waits for it to exit. */
export function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  return exited;
}

/** A process's resident memory in MB; 0 once it has ended. */
export function rssMb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** The middle value (the upper of the two middle ones for an even count); 0 for none. */
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
