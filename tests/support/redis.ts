import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { needs, REDIS_BINARY } from './services.ts';

/** A real redis-server (Debian's package) on a free port of 127.0.0.1, with no persistence. */
export type RedisServer = { url: string; port: number; stop(): Promise<void>; start(): Promise<void> };

/** Whether the Redis tests run: without redis-server the run fails, or skips them under ALLOW_SKIP=1 (tests/support/services.ts). */
export const redisAvailable = needs('redis');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts redis-server and waits until it accepts connections. */
export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(REDIS_BINARY, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child!.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        if (out.includes('Ready to accept connections')) resolve();
      });
      child!.once('error', reject);
      child!.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
    });
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    async stop() {
      if (!child || child.exitCode !== null) return;
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}
