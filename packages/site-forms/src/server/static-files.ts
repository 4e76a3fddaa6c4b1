import { createHash } from 'node:crypto';
import { createReadStream, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { FastPath } from './http-server.ts';

/**
 * One built file with the status and headers it is served with: its bytes kept in memory, or
 * (a large file, past the total, or of a type not listed) the path it is streamed from.
 */
type StaticFile = { status: number; body: Buffer | { path: string }; headers: Record<string, string> };

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
  '.pdf': 'application/pdf',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
};

/** The forms' script for pages of the owner's site elsewhere, built by scripts/build-server.mjs. */
const FORMS_SCRIPT = '/forms.js';

/** Files above this size, or past the total, are streamed from the disk at each request. */
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
    const stat = statSync(path);
    // Vite's hashed assets never change under their name; pages may change with each build; /forms.js
    // keeps its name for other sites' script tags, so a new build reaches them within ten minutes (decision 0168).
    const cacheControl = name.startsWith('/_astro/')
      ? 'public, max-age=31536000, immutable'
      : name === FORMS_SCRIPT
        ? 'public, max-age=600'
        : 'public, max-age=0, must-revalidate';
    let file: StaticFile;
    if (type && stat.size <= LIMITS.file && total + stat.size <= LIMITS.total) {
      total += stat.size;
      const body = readFileSync(path);
      const etag = `"${createHash('sha1').update(body).digest('base64url').slice(0, 20)}"`;
      file = { status, body, headers: { 'content-type': type, 'content-length': String(body.length), etag, 'cache-control': cacheControl } };
    } else {
      // A file of its owner's (a PDF, a video): its size and time tell when it changed.
      const etag = `"${stat.size.toString(36)}-${Math.floor(stat.mtimeMs).toString(36)}"`;
      const headers = { 'content-type': type ?? 'application/octet-stream', 'content-length': String(stat.size), etag, 'cache-control': cacheControl };
      file = { status, body: { path }, headers };
    }
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
    if (req.method === 'HEAD') res.end();
    else if (Buffer.isBuffer(file.body)) res.end(file.body);
    else
      createReadStream(file.body.path)
        .on('error', () => res.destroy())
        .pipe(res);
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
