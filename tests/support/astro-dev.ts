import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { eventually, freePort } from './smtp.ts';

/** `astro dev` running in an owner's folder, answering at `url`. */
export type AstroDev = { url: string; stop(): Promise<void> };

/**
 * Starts `astro dev` in `folder` (an owner's site with its own node_modules) on a free port of
 * 127.0.0.1, with no environment of ours but PATH and HOME (their `.env` is read from the folder),
 * and waits until `healthPath` answers 200; what it printed is in the error when it never does.
 */
export async function startAstroDev(folder: string, healthPath: string): Promise<AstroDev> {
  const port = await freePort();
  const dev = spawn(process.execPath, [join(folder, 'node_modules/astro/bin/astro.mjs'), 'dev', '--port', String(port), '--host', '127.0.0.1'], {
    cwd: folder,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ASTRO_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [dev.stdout, dev.stderr]) stream.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise((resolve) => dev.once('exit', resolve));
  const stop = async () => {
    dev.kill('SIGTERM');
    await exited;
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    await eventually(
      `astro dev to answer ${healthPath}`,
      () =>
        fetch(`${url}${healthPath}`).then(
          (r) => r.status === 200,
          () => false,
        ),
      60_000,
    );
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}; it printed:\n${output}`);
  }
  return { url, stop };
}
