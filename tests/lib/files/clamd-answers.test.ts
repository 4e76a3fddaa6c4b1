import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { ClamdUnavailable, pingClamd, scanFile } from '../../../packages/site-forms/src/lib/files/clamd.ts';

/**
 * The clamd client against daemons that misbehave: a real TCP server on 127.0.0.1 that speaks
 * (or does not speak) clamd's protocol, one way per test. A real clamd's answers are in clamd.test.ts.
 */
const folder = mkdtempSync(join(tmpdir(), 'files-clamd-answers-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const file = (name: string, content: string | Buffer) => {
  const path = join(folder, name);
  writeFileSync(path, content);
  return path;
};

/** What the daemon got on one connection: its bytes so far, and whether the client ended or closed it. */
type Connection = { socket: Socket; received: () => Buffer; ended: Promise<unknown>; closed: Promise<unknown> };

/** Each daemon with its open connections: a socket server keeps no list of its own, and closes only once they are gone. */
let servers: Array<{ server: Server; sockets: Set<Socket> }> = [];
afterEach(async () => {
  for (const { server, sockets } of servers) {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
  servers = [];
});

/** A daemon on 127.0.0.1 that hands each connection to `serve`. */
async function daemon(serve: (connection: Connection) => void): Promise<{ host: string; port: number; connections: Connection[] }> {
  const connections: Connection[] = [];
  const server = createServer((socket) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    const connection = { socket, received: () => Buffer.concat(chunks), ended: once(socket, 'end'), closed: once(socket, 'close') };
    connections.push(connection);
    serve(connection);
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({ server, sockets });
  return { host: '127.0.0.1', port: (server.address() as AddressInfo).port, connections };
}

/** Answers `answer` once the client's INSTREAM is complete (its zero length), as clamd does. */
function answering(answer: string | Buffer) {
  return ({ socket, received }: Connection) => {
    socket.on('data', () => {
      const bytes = received();
      if (bytes.length >= 14 && bytes.subarray(-4).equals(Buffer.alloc(4))) socket.write(answer);
    });
  };
}

/** The file as the client framed it after `zINSTREAM\0`: each chunk's length, and the bytes together. */
function unframe(bytes: Buffer): { command: string; lengths: number[]; content: Buffer } {
  const command = bytes.subarray(0, 10).toString('latin1');
  const lengths: number[] = [];
  const parts: Buffer[] = [];
  let at = 10;
  for (;;) {
    const length = bytes.readUInt32BE(at);
    lengths.push(length);
    at += 4;
    if (length === 0) break;
    parts.push(bytes.subarray(at, at + length));
    at += length;
  }
  expect(at).toBe(bytes.length);
  return { command, lengths, content: Buffer.concat(parts) };
}

describe('what clamd receives of a scan (INSTREAM)', () => {
  test('the command, then the file in chunks of 64 KB at most, each after its length, then a zero length; the client ends its side after the answer', async () => {
    const clamd = await daemon(answering('stream: OK\0'));
    const content = Buffer.alloc(150 * 1024);
    for (let index = 0; index < content.length; index++) content[index] = index % 251;
    await expect(scanFile(clamd, file('three-chunks.bin', content))).resolves.toEqual({ clean: true });
    const connection = clamd.connections[0]!;
    await connection.ended;
    const sent = unframe(connection.received());
    expect(sent.command).toBe('zINSTREAM\0');
    expect(sent.lengths).toEqual([65536, 65536, 22528, 0]);
    expect(sent.content.equals(content)).toBe(true);
  });

  test('an empty file is the command and the zero length alone', async () => {
    const clamd = await daemon(answering('stream: OK\0'));
    await expect(scanFile(clamd, file('empty.bin', ''))).resolves.toEqual({ clean: true });
    expect(unframe(clamd.connections[0]!.received()).lengths).toEqual([0]);
  });
});

describe("clamd's answer", () => {
  test('an answer that comes in pieces is read to its NUL', async () => {
    const clamd = await daemon(({ socket, received }) => {
      socket.on('data', () => {
        if (!received().subarray(-4).equals(Buffer.alloc(4))) return;
        socket.write('stream: Eicar-');
        setTimeout(() => socket.write('Test-Signature FOUND\0'), 50);
      });
    });
    await expect(scanFile(clamd, file('piecewise.txt', 'hello'))).resolves.toEqual({ clean: false, signature: 'Eicar-Test-Signature' });
  });

  test.each([
    ['an error of its own', 'INSTREAM size limit exceeded. ERROR', 'clamd answered an error: INSTREAM size limit exceeded. ERROR'],
    ['OK with something before it', 'xstream: OK', 'clamd answered an error: xstream: OK'],
    ['OK with something after it', 'stream: OK then', 'clamd answered an error: stream: OK then'],
    ['FOUND with something before it', 'my stream: Virus FOUND', 'clamd answered an error: my stream: Virus FOUND'],
    ['FOUND with something after it', 'stream: Virus FOUND, or not', 'clamd answered an error: stream: Virus FOUND, or not'],
  ])('%s is an outage, never a pass', async (_, answer, message) => {
    const clamd = await daemon(answering(`${answer}\0`));
    const scan = scanFile(clamd, file('any.txt', 'hello'));
    await expect(scan).rejects.toThrow(new ClamdUnavailable(message));
    await expect(scan).rejects.toMatchObject({ name: 'ClamdUnavailable' });
  });

  test('a long garbage answer is quoted to 200 characters', async () => {
    const clamd = await daemon(answering(`${'g'.repeat(300)}\0`));
    await expect(scanFile(clamd, file('any.txt', 'hello'))).rejects.toThrow(new ClamdUnavailable(`clamd answered an error: ${'g'.repeat(200)}`));
  });

  test('a daemon that closes without an answer is an outage', async () => {
    const clamd = await daemon(({ socket, received }) => {
      socket.on('data', () => {
        if (received().subarray(-4).equals(Buffer.alloc(4))) socket.end('stream: OK');
      });
    });
    await expect(scanFile(clamd, file('any.txt', 'hello'))).rejects.toThrow(new ClamdUnavailable('clamd closed the connection without an answer'));
  });

  test('a daemon that resets the connection is an outage naming the break', async () => {
    const clamd = await daemon(({ socket, received }) => {
      socket.on('data', () => {
        if (received().subarray(-4).equals(Buffer.alloc(4))) socket.resetAndDestroy();
      });
    });
    await expect(scanFile(clamd, file('any.txt', 'hello'))).rejects.toThrow(new ClamdUnavailable('clamd broke off: read ECONNRESET'));
  });

  test('a daemon that says nothing is an outage once the time is up', async () => {
    const clamd = await daemon(() => {});
    await expect(scanFile(clamd, file('any.txt', 'hello'), { timeoutMs: 200 })).rejects.toThrow(new ClamdUnavailable('clamd did not answer in time'));
    await expect(pingClamd(clamd, { timeoutMs: 200 })).rejects.toThrow(new ClamdUnavailable('clamd did not answer in time'));
  });

  test('a daemon slow to read gets the whole of a large file, then answers', async () => {
    const content = Buffer.alloc(32 * 1024 * 1024, 1);
    let total = 0;
    let tail = Buffer.alloc(0);
    const clamd = await daemon(({ socket }) => {
      // Reads nothing for a while: the client's buffers fill, and it must wait for them to drain.
      socket.pause();
      setTimeout(() => socket.resume(), 300);
      socket.on('data', (chunk: Buffer) => {
        total += chunk.length;
        tail = Buffer.concat([tail, chunk]).subarray(-4);
        if (total > 14 && tail.equals(Buffer.alloc(4))) socket.write('stream: OK\0');
      });
    });
    await expect(scanFile(clamd, file('huge.bin', content))).resolves.toEqual({ clean: true });
    // The command, each 64 KB chunk after its length, and the zero length.
    expect(total).toBe(10 + content.length + 4 * 512 + 4);
  }, 20_000);

  test('a daemon that stops reading and closes during a large file is an outage, not a scan that never ends', async () => {
    const clamd = await daemon(({ socket }) => {
      // It reads nothing, as a daemon past its limit, then closes: the client waits for its buffers to drain.
      socket.pause();
      setTimeout(() => socket.destroy(), 300);
    });
    await expect(scanFile(clamd, file('large.bin', Buffer.alloc(32 * 1024 * 1024, 1)), { timeoutMs: 10_000 })).rejects.toBeInstanceOf(ClamdUnavailable);
  }, 20_000);

  test('a file that cannot be read is an outage, and the connection is let go', async () => {
    const clamd = await daemon(() => {});
    await expect(scanFile(clamd, join(folder, 'no-such-file'))).rejects.toThrow(
      new ClamdUnavailable(`clamd broke off: ENOENT: no such file or directory, open '${join(folder, 'no-such-file')}'`),
    );
    await clamd.connections[0]!.closed;
  });

  test('a refused connection names its code', async () => {
    const clamd = await daemon(() => {});
    const { port } = clamd;
    await new Promise((resolve) => servers.pop()!.server.close(resolve));
    await expect(scanFile({ host: '127.0.0.1', port }, file('any.txt', 'hello'))).rejects.toThrow(
      new ClamdUnavailable('clamd cannot be reached: ECONNREFUSED'),
    );
  });
});

describe("clamd's PING", () => {
  test('PONG is the only good answer; another is quoted to 100 characters', async () => {
    const good = await daemon(({ socket }) => socket.once('data', () => socket.write('PONG\0')));
    await expect(pingClamd(good)).resolves.toBeUndefined();
    expect(good.connections[0]!.received().toString('latin1')).toBe('zPING\0');
    const bad = await daemon(({ socket }) => socket.once('data', () => socket.write(`${'p'.repeat(150)}\0`)));
    await expect(pingClamd(bad)).rejects.toThrow(new ClamdUnavailable(`clamd answered ${'p'.repeat(100)} to PING`));
    const wrong = await daemon(({ socket }) => socket.once('data', () => socket.write('PONGS\0')));
    await expect(pingClamd(wrong)).rejects.toThrow(new ClamdUnavailable('clamd answered PONGS to PING'));
  });
});
