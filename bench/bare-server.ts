/**
 * The practical limit for the benchmark: a bare `node:http` server doing the same work as
 * ours (the same form reading, the same schemas and handlers, the same SQLite store and
 * provider) with no framework in front. Started by bench/run.ts, never in production.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { requireConfig } from '../src/lib/config.ts';
import { handleContact } from '../src/lib/contact/handle.ts';
import { createLogger } from '../src/lib/log.ts';
import { handleNewsletter } from '../src/lib/newsletter/handle.ts';
import { failure, renderJson } from '../src/lib/pipeline/outcome.ts';
import { createServices } from '../src/lib/services.ts';

const config = requireConfig(process.env);
const services = createServices(config, createLogger({ level: 'warn' }));
// Compiled to dist/bench/ by bench/run.ts, so the built pages are at ../client.
const home = readFileSync(new URL('../client/index.html', import.meta.url));

const server = createServer(async (req, res) => {
  if (req.method === 'GET' && req.url === '/') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(home);
    return;
  }
  const request = new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method,
    headers: req.headers as Record<string, string>,
    body: req.method === 'POST' ? (Readable.toWeb(req) as ReadableStream) : undefined,
    duplex: 'half',
  } as RequestInit);
  const outcome =
    req.url === '/api/contact'
      ? await handleContact(request, services)
      : req.url === '/api/newsletter'
        ? await handleNewsletter(request, services)
        : failure(404, 'Not found');
  const answer = renderJson(outcome);
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ event: 'server.listening', port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
