import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freePort } from '../support/smtp.ts';

// `npm run dev` (astro dev) answers the API's near misses as the built server does, and prints
// no warning about request headers for them (it printed one per request on the 404 route).
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'site-forms-dev-'));
let dev: ChildProcess;
let url: string;
let output = '';

beforeAll(async () => {
  const port = await freePort();
  url = `http://localhost:${port}`;
  dev = spawn(process.execPath, [join(ROOT, 'node_modules/astro/bin/astro.mjs'), 'dev', '--port', String(port)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ENV_FILE: '', DATA_DIR: dataDir, ASTRO_TELEMETRY_DISABLED: '1', RATE_LIMIT_MAX: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [dev.stdout!, dev.stderr!]) stream.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/api/health`)).status > 0) break;
    } catch {}
    if (Date.now() > deadline) throw new Error(`astro dev did not answer:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}, 120_000);

afterAll(() => {
  dev?.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm run dev', () => {
  test('a near miss under /api/ is a JSON 404, with no warning about request headers', async () => {
    for (const path of ['/api/nothing', '/api/contact/', '/api/news']) {
      const response = await fetch(`${url}${path}`);
      expect(response.status).toBe(404);
      await expect(response.json()).resolves.toEqual({ success: false, error: 'Not found' });
    }
    expect((await fetch(`${url}/no-such-page`)).status).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(output).not.toContain('Astro.request.headers');
  });
});
