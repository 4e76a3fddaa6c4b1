import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { FastPath } from './http-server.ts';

/** One built file, kept in memory with the status and headers it is served with. */
type StaticFile = { status: number; body: Buffer; headers: Record<string, string> };

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/** Files above this size, or past the total, are left to the adapter, which streams them. */
const LIMITS = { file: 512 * 1024, total: 16 * 1024 * 1024 };

/**
 * Loads the prerendered pages and assets of `dist/client` into memory, keyed by the paths
 * they answer (`/contact` and `/contact/` for `contact/index.html`).
 * Hint: the site is a handful of small files; serving them from memory is what lets the
 * home page keep up with the forms under load (docs/performance.md).
 */
export function loadStaticFiles(clientDir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  let total = 0;
  for (const path of walk(clientDir)) {
    const name = `/${relative(clientDir, path).split(sep).join('/')}`;
    // The error pages answer with their error: /404.html is a 404 even when asked for by name.
    const status = name === '/404.html' || name === '/500.html' ? 404 : 200;
    const type = CONTENT_TYPES[extname(path)];
    const size = statSync(path).size;
    if (!type || size > LIMITS.file || total + size > LIMITS.total) continue;
    total += size;
    const body = readFileSync(path);
    // Vite's hashed assets never change under their name; pages may change with each build.
    const immutable = name.startsWith('/_astro/');
    const file: StaticFile = {
      status,
      body,
      headers: {
        'content-type': type,
        'content-length': String(body.length),
        etag: `"${createHash('sha1').update(body).digest('base64url').slice(0, 20)}"`,
        'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=0, must-revalidate',
      },
    };
    files.set(name, file);
    if (name.endsWith('/index.html')) {
      const dir = name.slice(0, -'index.html'.length);
      files.set(dir, file);
      if (dir !== '/') files.set(dir.slice(0, -1), file);
    }
  }
  return files;
}

/** Serves GET and HEAD of the loaded files, with ETag revalidation; anything else goes on. */
export function createStaticFastPath(files: Map<string, StaticFile>): FastPath {
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const file = files.get((req.url ?? '/').split('?', 1)[0]!);
    if (!file) return false;
    if (file.status === 200 && req.headers['if-none-match'] === file.headers.etag) {
      res.writeHead(304, { etag: file.headers.etag!, 'cache-control': file.headers['cache-control']! });
      res.end();
      return true;
    }
    res.writeHead(file.status, file.headers);
    res.end(req.method === 'HEAD' ? undefined : file.body);
    return true;
  };
}

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.isFile()) yield path;
  }
}
