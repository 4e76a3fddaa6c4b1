import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, test } from 'vitest';
import type { Services } from '../../packages/site-forms/src/lib/app/services.ts';
import { requireConfig } from '../../packages/site-forms/src/lib/config/config.ts';
import { createLogger } from '../../packages/site-forms/src/lib/log.ts';
import { createDispatcher } from '../../packages/site-forms/src/server/dispatch.ts';
import type { Front } from '../../packages/site-forms/src/server/front.ts';

// Issue 30 item 3: an answer that fails half-way (here the security headers cannot be written)
// used to end in `res.destroy()` and nothing else: the client saw a cut connection and the
// log said nothing. It is now one error line, naming the path and the error.

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

test('an answer that cannot be written: the connection is cut and the failure is one error line', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const health = { database: 'SQLite', writable: true, integrity: 'ok' as const, pendingMessages: 0, failedMessages: 0 };
  const services = { config: requireConfig({}), logger, store: { health: async () => health }, provider: { name: 'local' } } as unknown as Services;
  const front: Front = {
    check: () => false,
    dress: () => {},
    headersWith: () => {
      throw new TypeError('Invalid character in header content ["x-broken"]');
    },
  };
  server = createServer(createDispatcher({ services, front, staticFiles: () => false, astro: () => {} }));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  await expect(fetch(`http://127.0.0.1:${port}/api/health`)).rejects.toThrow();
  expect(lines.filter((line) => line.level === 'error')).toEqual([
    expect.objectContaining({ event: 'server.answer_failed', path: '/api/health', error: 'TypeError: Invalid character in header content ["x-broken"]' }),
  ]);
});

/** Our dispatcher in front of an Astro whose every page throws: its address and the log's lines. */
async function serveBrokenPages(): Promise<{ url: string; lines: Array<Record<string, unknown>> }> {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const services = { config: requireConfig({}), logger } as unknown as Services;
  const front: Front = { check: () => false, dress: () => {}, headersWith: () => [] };
  const astro = async () => {
    throw new RangeError('the renderer broke');
  };
  server = createServer(createDispatcher({ services, front, staticFiles: () => false, astro }));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, lines };
}

test('a page Astro fails to render: the connection is cut and the failure is one error line, never an unhandled rejection', async () => {
  const { url, lines } = await serveBrokenPages();
  await expect(fetch(`${url}/some-page`)).rejects.toThrow();
  expect(lines.filter((line) => line.level === 'error')).toEqual([
    expect.objectContaining({ event: 'server.answer_failed', path: '/some-page', error: 'RangeError: the renderer broke' }),
  ]);
});

test('the page of a sign-in link fails: the error line shows its path without the token, which would let a reader of the log in', async () => {
  const { url, lines } = await serveBrokenPages();
  const token = `sfl_${'Ab3_-'.repeat(8)}xyz`;
  await expect(fetch(`${url}/forms/admin/welcome/${token}`)).rejects.toThrow();
  expect(JSON.stringify(lines)).not.toContain(token.slice(4));
  expect(lines.filter((line) => line.level === 'error')).toEqual([
    expect.objectContaining({ event: 'server.answer_failed', path: '/forms/admin/welcome/sfl_…' }),
  ]);
});
