import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { createServices, type Services } from '../../packages/site-forms/src/lib/app/services.ts';
import { requireConfig } from '../../packages/site-forms/src/lib/config/config.ts';
import { createLogger } from '../../packages/site-forms/src/lib/log.ts';
import { createDispatcher } from '../../packages/site-forms/src/server/dispatch.ts';
import { createFront } from '../../packages/site-forms/src/server/front.ts';

/**
 * Issue 30 item 3: the pipeline's reply says what it is (`kind`), and our dispatcher sends each
 * kind down its own road: an answer is written by us, a form's view and an admin's refusal go to
 * Astro with the view in `locals`. Real services over SQLite, a real server on 127.0.0.1; Astro
 * is the one stand-in, recording what it was handed.
 */
let services: Services;
let dataDir: string;
let server: Server;
let url: string;
let handed: App.Locals[];
let lines: Array<Record<string, unknown>>;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'reply-roads-'));
  lines = [];
  const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  services = createServices(requireConfig({ DATA_DIR: dataDir, RATE_LIMIT_MAX: '0' }), logger);
  const front = createFront({ ...services.config, headers: { 'x-content-type-options': 'nosniff' } });
  const astro = (_req: unknown, res: import('node:http').ServerResponse, locals: App.Locals) => {
    handed.push(locals);
    res.writeHead(299, { 'content-type': 'text/plain' }).end('rendered by Astro');
  };
  server = createServer(createDispatcher({ services, front, staticFiles: () => false, astro }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await services.close();
  rmSync(dataDir, { recursive: true, force: true });
});

beforeEach(() => {
  handed = [];
  lines.length = 0;
});

const NAVIGATION = { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', accept: 'text/html' };

describe('each kind of reply goes down its own road', () => {
  test('an answer: written by our server, Astro never asked', async () => {
    const response = await fetch(`${url}/api/health`);
    expect([response.status, response.headers.get('content-type')]).toEqual([200, 'application/json; charset=utf-8']);
    expect((await response.json()) as object).toMatchObject({ success: true });
    expect(handed).toEqual([]);
  });

  test('a form’s view: Astro renders it, with the view in locals', async () => {
    const posted = await fetch(`${url}/api/newsletter`, {
      method: 'POST',
      body: new URLSearchParams({ email: 'nope' }),
      headers: NAVIGATION,
      redirect: 'manual',
    });
    expect(posted.status).toBe(303);
    expect(handed).toEqual([]);
    const shown = await fetch(`${url}${posted.headers.get('location')}`, { headers: NAVIGATION, redirect: 'manual' });
    expect([shown.status, await shown.text()]).toEqual([299, 'rendered by Astro']);
    expect(handed).toEqual([expect.objectContaining({ formView: expect.objectContaining({ kind: 'form-view', form: 'newsletter', status: 400 }) })]);
    expect(handed[0]?.adminRefusal).toBeUndefined();
  });

  test('an admin’s refusal: Astro renders it, with the refusal in locals', async () => {
    const response = await fetch(`${url}/admin/actions/sign-out`, { method: 'POST', body: new URLSearchParams({}), headers: NAVIGATION });
    expect([response.status, await response.text()]).toEqual([299, 'rendered by Astro']);
    expect(handed).toEqual([
      expect.objectContaining({ adminRefusal: { kind: 'admin-refusal', status: 404, message: 'Page not found', headers: expect.any(Object) } }),
    ]);
    expect(handed[0]?.formView).toBeUndefined();
  });
});

describe('an answer whose body fails half-way', () => {
  test('the connection is cut and the failure is one error line with the path', async () => {
    const broken = Readable.from(
      (async function* () {
        yield new Uint8Array([1, 2, 3]);
        throw new Error('the disk went away');
      })(),
    );
    const files = {
      links: { verify: async () => 'valid' },
      records: { linkedFile: async () => ({ name: 'plan.pdf', size: 100, storageKey: 'k' }) },
      storage: { open: async () => broken },
    };
    const original = services.files;
    services.files = files as unknown as Services['files'];
    try {
      await expect(fetch(`${url}/api/files/${'A'.repeat(20)}?expires=1&signature=x`).then((response) => response.arrayBuffer())).rejects.toThrow();
    } finally {
      services.files = original;
    }
    await expect
      .poll(() => lines.filter((line) => line.level === 'error'))
      .toEqual([expect.objectContaining({ event: 'server.answer_failed', path: `/api/files/${'A'.repeat(20)}`, error: 'Error: the disk went away' })]);
  });
});
