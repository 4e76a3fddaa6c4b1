/**
 * A stand-in for Mailchimp in the benchmark, in its own process so that it never competes
 * with the load generator for the event loop: answers every call with 200 at once.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const server = createServer((req, res) => {
  req.resume().on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"subscribed"}');
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ event: 'server.listening', port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
