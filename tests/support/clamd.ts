import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAMD_BIN, needs } from './services.ts';

/** The EICAR test file: every scanner reports it, and it harms nothing. */
export const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*';

/** Whether the clamd tests run: without clamd the run fails, or skips them under ALLOW_SKIP=1 (tests/support/services.ts). */
export const clamdAvailable = needs('clamd');

/** A clamd of our own on a Unix socket, with a database that knows only the EICAR test file. */
export type ClamdServer = { socket: string; stop(): Promise<void> };

/**
 * Starts clamd in the foreground with a signature database of one line (the EICAR file's MD5 and
 * size); answers once it takes connections. No download of the real database.
 */
export async function startClamd(): Promise<ClamdServer> {
  const folder = mkdtempSync(join(tmpdir(), 'site-forms-clamd-'));
  const database = join(folder, 'db');
  mkdirSync(database);
  const md5 = createHash('md5').update(EICAR).digest('hex');
  writeFileSync(join(database, 'eicar.hdb'), `${md5}:${Buffer.byteLength(EICAR)}:Eicar-Test-Signature\n`);
  const socket = join(folder, 'clamd.sock');
  const config = join(folder, 'clamd.conf');
  writeFileSync(
    config,
    [
      `DatabaseDirectory ${database}`,
      `LocalSocket ${socket}`,
      'Foreground yes',
      `PidFile ${join(folder, 'clamd.pid')}`,
      `TemporaryDirectory ${folder}`,
      'LogFile /dev/null',
    ]
      .concat(process.getuid?.() === 0 ? ['User root'] : [])
      .join('\n'),
  );
  const child: ChildProcess = spawn(CLAMD_BIN, ['--config-file', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`clamd stopped at start (${child.exitCode}): ${errors.slice(0, 500)}`);
    if (await answers(socket)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`clamd did not start in 30 s: ${errors.slice(0, 500)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    socket,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    if (!existsSync(socket)) return resolve(false);
    const connection = connect(socket);
    connection.once('connect', () => {
      connection.end();
      resolve(true);
    });
    connection.once('error', () => resolve(false));
  });
}
