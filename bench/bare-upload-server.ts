/**
 * `bench:uploads`' floor for a Node server: node:http and nothing else of ours (it imports nothing
 * from packages/), each post's body written as it arrives to a file of its own in DATA_DIR with
 * `pipeline`, then a JSON answer. No multipart parsing, no type check, no record: what any Node
 * server pays to take a body off the socket and put it on the disk. Started by bench/uploads.ts
 * with the flags of `npm run serve`, never in production.
 */
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

const folder = process.env.DATA_DIR ?? '.';
let next = 0;
const server = createServer(async (req, res) => {
  if (req.method !== 'POST') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  try {
    await pipeline(req, createWriteStream(join(folder, `upload-${next++}`), { flags: 'wx' }));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
  } catch {
    res.writeHead(500, { 'content-type': 'application/json' }).end('{"success":false}');
  }
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  // The line bench/serve.ts waits for, as our server logs it.
  console.log(JSON.stringify({ event: 'server.listening', port: (server.address() as AddressInfo).port }));
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
