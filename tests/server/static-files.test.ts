import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createStaticFastPath, loadStaticFiles } from '../../packages/site-forms/src/server/static-files.ts';

let url: string;
let close: () => void;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'static-'));
  mkdirSync(join(dir, 'contact'));
  mkdirSync(join(dir, '_astro'));
  writeFileSync(join(dir, 'index.html'), '<h1>home</h1>');
  writeFileSync(join(dir, 'contact', 'index.html'), '<h1>contact</h1>');
  writeFileSync(join(dir, '_astro', 'app.abc123.js'), 'console.log(1)');
  writeFileSync(join(dir, '404.html'), 'not found page');
  writeFileSync(join(dir, 'data.bin'), 'unknown type');
  // Past the size kept in memory: streamed from the disk.
  writeFileSync(join(dir, 'brochure.pdf'), Buffer.alloc(600 * 1024, 'p'));
  const serveStatic = createStaticFastPath(loadStaticFiles(dir));
  const server = createServer((req, res) => {
    if (serveStatic(req, res)) return;
    res.writeHead(418).end('fell through');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
afterAll(() => close());

describe('the built pages served from memory', () => {
  test.each([
    ['/', '<h1>home</h1>', 'text/html; charset=utf-8'],
    ['/contact', '<h1>contact</h1>', 'text/html; charset=utf-8'],
    ['/contact/', '<h1>contact</h1>', 'text/html; charset=utf-8'],
    ['/contact/index.html', '<h1>contact</h1>', 'text/html; charset=utf-8'],
    ['/contact?ref=nav', '<h1>contact</h1>', 'text/html; charset=utf-8'],
    ['/_astro/app.abc123.js', 'console.log(1)', 'text/javascript; charset=utf-8'],
  ])('GET %s', async (path, body, type) => {
    const response = await fetch(`${url}${path}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(type);
    await expect(response.text()).resolves.toBe(body);
  });

  test('hashed assets are cached for good, pages are revalidated', async () => {
    expect((await fetch(`${url}/_astro/app.abc123.js`)).headers.get('cache-control')).toMatch(/immutable/);
    expect((await fetch(`${url}/`)).headers.get('cache-control')).toMatch(/must-revalidate/);
  });

  test('answers 304 to a matching If-None-Match', async () => {
    const etag = (await fetch(`${url}/`)).headers.get('etag')!;
    expect((await fetch(`${url}/`, { headers: { 'if-none-match': etag } })).status).toBe(304);
  });

  test('the 404 page asked for by name answers 404, with its page, and is never revalidated to a 304', async () => {
    const response = await fetch(`${url}/404.html`);
    expect([response.status, await response.text()]).toEqual([404, 'not found page']);
    const again = await fetch(`${url}/404.html`, { headers: { 'if-none-match': response.headers.get('etag')! } });
    expect(again.status).toBe(404);
  });

  test('HEAD has the headers and no body', async () => {
    const response = await fetch(`${url}/`, { method: 'HEAD' });
    expect(response.headers.get('content-length')).toBe('13');
    await expect(response.text()).resolves.toBe('');
  });

  test.each([
    ['an unknown path', 'GET', '/nope'],
    ['a POST', 'POST', '/'],
    ['a path climbing out', 'GET', '/../etc/passwd'],
  ])('leaves %s to the next handler', async (_, method, path) => {
    expect((await fetch(`${url}${path}`, { method })).status).toBe(418);
  });

  test('a file of a type not listed is served from the disk as bytes', async () => {
    const response = await fetch(`${url}/data.bin`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    await expect(response.text()).resolves.toBe('unknown type');
  });

  test('a large file is streamed from the disk, whole, with its length and a validator', async () => {
    const response = await fetch(`${url}/brochure.pdf`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-length')).toBe(String(600 * 1024));
    const etag = response.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-z]+-[0-9a-z]+"$/);
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.length).toBe(600 * 1024);
    expect(body.every((byte) => byte === 0x70)).toBe(true);
    expect((await fetch(`${url}/brochure.pdf`, { headers: { 'if-none-match': etag } })).status).toBe(304);
  });
});
