import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ClamdUnavailable, pingClamd, scanFile } from '../../../packages/site-forms/src/lib/files/clamd.ts';
import { type ClamdServer, clamdAvailable, EICAR, startClamd } from '../../support/clamd.ts';

const folder = mkdtempSync(join(tmpdir(), 'files-clamd-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const file = (name: string, content: string | Buffer) => {
  const path = join(folder, name);
  writeFileSync(path, content);
  return path;
};

describe.skipIf(!clamdAvailable)('the virus scan with a real clamd', () => {
  let clamd: ClamdServer;
  beforeAll(async () => {
    clamd = await startClamd();
  }, 60_000);
  afterAll(async () => {
    await clamd?.stop();
  });

  test('the EICAR test file is found by its name; a harmless file of the same size is clean', async () => {
    await expect(scanFile({ socket: clamd.socket }, file('eicar.com', EICAR))).resolves.toEqual({ clean: false, signature: 'Eicar-Test-Signature.UNOFFICIAL' });
    await expect(scanFile({ socket: clamd.socket }, file('harmless.txt', 'x'.repeat(EICAR.length)))).resolves.toEqual({ clean: true });
  });

  test('a file of several chunks is sent whole and found clean', async () => {
    await expect(scanFile({ socket: clamd.socket }, file('large.bin', Buffer.alloc(300 * 1024, 7)))).resolves.toEqual({ clean: true });
  });

  test('PING answers PONG', async () => {
    await expect(pingClamd({ socket: clamd.socket })).resolves.toBeUndefined();
  });
});

test('clamd down is an outage, never a pass: the scan and the PING reject', async () => {
  const path = file('any.txt', 'hello');
  await expect(scanFile({ socket: join(folder, 'no-such.sock') }, path)).rejects.toBeInstanceOf(ClamdUnavailable);
  await expect(scanFile({ host: '127.0.0.1', port: 9 }, path)).rejects.toThrow(/clamd cannot be reached/);
  await expect(pingClamd({ host: '127.0.0.1', port: 9 })).rejects.toBeInstanceOf(ClamdUnavailable);
});
