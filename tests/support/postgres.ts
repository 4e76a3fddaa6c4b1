import { spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { missingSentence, needs, POSTGRES_BIN } from './services.ts';

/** A real PostgreSQL server (Debian's package) of our own, on a free port of 127.0.0.1. */
export type PostgresServer = {
  port: number;
  /** Creates an empty database and answers its connection string. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown: connections are cut), keeping its data. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  /** Stops the server and removes its data. */
  remove(): Promise<void>;
};

/** Whether the PostgreSQL tests run: without it the run fails, or skips them under ALLOW_SKIP=1 (tests/support/services.ts). */
export const postgresAvailable = needs('postgresql');

// PostgreSQL refuses to run as root; as root (CI, this machine) it runs as the postgres user.
const asServerUser = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];

function run(command: string, args: string[]): void {
  const [program, ...rest] = [...asServerUser, join(POSTGRES_BIN ?? '', command), ...args];
  const result = spawnSync(program!, rest, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} failed (${result.status}): ${result.stderr}${result.stdout}`);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Creates a cluster in a temporary folder and starts it; one per test file keeps the suite quick.
 * Hint: tests run it without fsync, for speed; `durable: true` keeps PostgreSQL's defaults
 * (fsync, synchronous commit), as the benchmark needs to compare it fairly with SQLite.
 */
export async function startPostgres({ durable = false }: { durable?: boolean } = {}): Promise<PostgresServer> {
  if (!POSTGRES_BIN) throw new Error(missingSentence('postgresql'));
  const dir = mkdtempSync(join(tmpdir(), 'site-forms-pg-'));
  if (asServerUser.length > 0) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', ...(durable ? [] : ['--no-sync']), '--no-instructions']);
  // Room for a run's stores on one cluster (tests/support/shared-postgres.ts): 100 by default.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=300${durable ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off'}`;
  const start = async () => run('pg_ctl', ['start', '-D', data, '-w', '-s', '-l', join(dir, 'server.log'), '-o', options]);
  const stop = async () => run('pg_ctl', ['stop', '-D', data, '-m', 'fast', '-w', '-s']);
  await start();
  let running = true;
  return {
    port,
    createDatabase: (name) => createDatabaseOn(port, name),
    async stop() {
      await stop();
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    async remove() {
      if (running) await stop().catch(() => {});
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates an empty database on the server listening on `port` of 127.0.0.1 and answers its connection string. */
export async function createDatabaseOn(port: number, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  return `postgres://postgres@127.0.0.1:${port}/${name}`;
}

/** Drops a database `createDatabaseOn` made, cutting what is still connected to it. */
export async function dropDatabaseOn(port: number, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
