import { createReadStream } from 'node:fs';
import { connect, type Socket } from 'node:net';

/** Where clamd listens: a Unix socket (CLAMD_SOCKET), or a host and port (CLAMD_HOST, CLAMD_PORT). */
export type ClamdAddress = { socket: string } | { host: string; port: number };

/** What clamd said of a file: clean, or the name of what it found (never the file's content). */
export type ScanResult = { clean: true } | { clean: false; signature: string };

/** clamd did not answer (down, refused, too slow, or an error of its own): an outage, never a pass. */
export class ClamdUnavailable extends Error {
  override name = 'ClamdUnavailable';
}

/** How long a scan or a PING may take before clamd counts as down. */
const TIMEOUT_MS = 30_000;

function open(address: ClamdAddress, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = 'socket' in address ? connect(address.socket) : connect(address.port, address.host);
    socket.setTimeout(timeoutMs, () => socket.destroy(new ClamdUnavailable('clamd did not answer in time')));
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', (error) => reject(new ClamdUnavailable(`clamd cannot be reached: ${(error as NodeJS.ErrnoException).code ?? error.message}`)));
  });
}

/** The one answer clamd sends, up to its NUL (the `z` commands' terminator). */
function answerOf(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const all = Buffer.concat(chunks);
      const end = all.indexOf(0);
      if (end !== -1) {
        resolve(all.subarray(0, end).toString('utf8'));
        socket.end();
      }
    });
    socket.once('error', (error) => reject(error instanceof ClamdUnavailable ? error : new ClamdUnavailable(`clamd broke off: ${error.message}`)));
    socket.once('close', () => reject(new ClamdUnavailable('clamd closed the connection without an answer')));
  });
}

/**
 * Scans a file with clamd's INSTREAM command: the file in chunks, each after its length (4 bytes,
 * big-endian), then a zero length; clamd answers `stream: OK` or `stream: <name> FOUND`.
 * Hint: anything else (an error, a size limit of clamd's own, no answer) rejects with ClamdUnavailable.
 */
export async function scanFile(address: ClamdAddress, path: string, { timeoutMs = TIMEOUT_MS } = {}): Promise<ScanResult> {
  const socket = await open(address, timeoutMs);
  const answer = answerOf(socket);
  // Read before the file is sent: clamd may answer (a limit) and close while we still write.
  answer.catch(() => {});
  try {
    socket.write('zINSTREAM\0');
    for await (const chunk of createReadStream(path, { highWaterMark: 64 * 1024 })) {
      const length = Buffer.alloc(4);
      length.writeUInt32BE((chunk as Buffer).length);
      if (!socket.write(Buffer.concat([length, chunk as Buffer]))) await drained(socket);
      if (socket.destroyed) break;
    }
    socket.write(Buffer.alloc(4));
  } catch (error) {
    socket.destroy();
    throw error instanceof ClamdUnavailable ? error : new ClamdUnavailable(`clamd broke off: ${(error as Error).message}`);
  }
  const text = await answer;
  if (/^stream: OK$/.test(text)) return { clean: true };
  const found = /^stream: (.+) FOUND$/.exec(text);
  if (found) return { clean: false, signature: found[1]! };
  throw new ClamdUnavailable(`clamd answered an error: ${text.slice(0, 200)}`);
}

/** Waits until the socket takes more bytes, or is closed: clamd that closes (a limit, a crash) sends no 'drain', and the scan must not wait for ever. */
function drained(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.once('drain', done);
    socket.once('close', done);
  });
}

/** clamd's PING, for `npm run doctor`: resolves on PONG, rejects with why not. */
export async function pingClamd(address: ClamdAddress, { timeoutMs = 5_000 } = {}): Promise<void> {
  const socket = await open(address, timeoutMs);
  const answer = answerOf(socket);
  socket.write('zPING\0');
  const text = await answer;
  if (text !== 'PONG') throw new ClamdUnavailable(`clamd answered ${text.slice(0, 100)} to PING`);
}
