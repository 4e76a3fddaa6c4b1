import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { diagnose } from '../../../packages/site-forms/src/lib/app/doctor.ts';
import { freePort } from '../../support/smtp.ts';

/**
 * The doctor's checks of the files' storage and of clamd, in this process: a storage folder that
 * cannot be written, and a clamd-speaking listener on a Unix socket (the real clamd's PING and
 * scans are tests/lib/files/clamd.test.ts's), or nothing listening on 127.0.0.1.
 */
let dataDir: string;
let server: Server | undefined;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'site-forms-doctor-files-'));
});
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

const finding = async (env: NodeJS.ProcessEnv, part: string) => (await diagnose({ DATA_DIR: dataDir, ...env })).find((f) => f.part === part);

/** Listens on a Unix socket and answers every command with `answer`, NUL-terminated as clamd's z commands are. */
async function listenAsClamd(socket: string, answer: string): Promise<void> {
  server = createServer((connection) => {
    connection.on('data', () => connection.end(`${answer}\0`));
  });
  await new Promise<void>((resolve) => server?.listen(socket, resolve));
}

describe('the files', () => {
  test('a storage folder that is a file is an error naming the folder and the failed step', async () => {
    writeFileSync(join(dataDir, 'files'), 'not a folder');
    await expect(finding({}, 'files')).resolves.toEqual({
      part: 'files',
      result: 'error',
      detail: `the folder ${dataDir}/files: ENOTDIR: not a directory, mkdir '${dataDir}/files/doctor'`,
    });
  });
});

describe('the virus scan', () => {
  test('a clamd on a socket that answers PING is fine, named by its socket', async () => {
    const socket = join(dataDir, 'clamd.sock');
    await listenAsClamd(socket, 'PONG');
    await expect(finding({ CLAMD_SOCKET: socket }, 'virus scan')).resolves.toEqual({
      part: 'virus scan',
      result: 'ok',
      detail: `clamd at ${socket}: answered PING`,
    });
  });

  test('a socket that answers something else than PONG is an error saying what it answered', async () => {
    const socket = join(dataDir, 'clamd.sock');
    await listenAsClamd(socket, 'UNKNOWN COMMAND');
    await expect(finding({ CLAMD_SOCKET: socket }, 'virus scan')).resolves.toEqual({
      part: 'virus scan',
      result: 'error',
      detail: `clamd at ${socket}: clamd answered UNKNOWN COMMAND to PING`,
    });
  });

  test('nothing listening at the host and port is an error, named by host and port', async () => {
    const port = await freePort();
    await expect(finding({ CLAMD_HOST: '127.0.0.1', CLAMD_PORT: String(port) }, 'virus scan')).resolves.toEqual({
      part: 'virus scan',
      result: 'error',
      detail: `clamd at 127.0.0.1:${port}: clamd cannot be reached: ECONNREFUSED`,
    });
  });
});
