import { connect, createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/postgres.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { eventually, startSilentServer } from '../support/smtp.ts';

const valid = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.', honeypot: '' };

describe.skipIf(!postgresAvailable)('while PostgreSQL is down', () => {
  let postgres: PostgresServer;
  let site: Site;
  beforeAll(async () => {
    postgres = await startPostgres();
    const url = await postgres.createDatabase('outage');
    site = await startSite({ DATABASE_URL: url, DATABASE_CONNECT_TIMEOUT_MS: '1000', DATABASE_STATEMENT_TIMEOUT_MS: '2000' });
  }, 60_000);
  afterAll(async () => {
    await site?.stop();
    await postgres?.remove();
  });

  const errorsLogged = () => site.logs.filter((l) => typeof l === 'object' && l.level === 'error');

  test('posts answer 500 in the JSON of the spec, health 503 naming the database, pages are served, one log line; all back without a restart', async () => {
    expect((await postForm(`${site.url}/api/contact`, valid)).status).toBe(200);
    expect(site.logs).toContainEqual(expect.objectContaining({ event: 'rate_limit.per_instance', level: 'warn' }));

    await postgres.stop();
    for (let i = 0; i < 3; i++) {
      const failed = await postForm(`${site.url}/api/contact`, valid);
      expect(failed.status).toBe(500);
      await expect(failed.json()).resolves.toEqual({ success: false, error: 'Internal server error' });
    }
    const health = await fetch(`${site.url}/api/health`);
    expect(health.status).toBe(503);
    await expect(health.json()).resolves.toMatchObject({
      success: false,
      error: expect.stringMatching(/^The PostgreSQL database does not take writes: /),
      database: 'PostgreSQL',
      databaseWritable: false,
    });
    const page = await fetch(`${site.url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form');
    expect(errorsLogged()).toEqual([expect.objectContaining({ event: 'database.unavailable', database: 'PostgreSQL' })]);

    await postgres.start();
    // The pool opens new connections by itself: the first health check after the return passes.
    await eventually('health to pass again', async () => (await fetch(`${site.url}/api/health`)).status === 200, 15_000);
    expect((await postForm(`${site.url}/api/contact`, valid)).status).toBe(200);
    expect(site.logs.filter((l) => typeof l === 'object' && l.event === 'database.recovered')).toHaveLength(1);
    expect(errorsLogged()).toHaveLength(1);
    // No stack trace reaches the log.
    expect(JSON.stringify(site.logs)).not.toMatch(/\\n\s+at /);
  });
});

/**
 * A TCP relay in front of PostgreSQL that can go unreachable: open connections are cut and new
 * ones are accepted but never answered, as behind a dead network path.
 */
async function startRelay(targetPort: number) {
  let unreachable = false;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket)).on('error', () => {});
  };
  const server = createServer((client) => {
    track(client);
    if (unreachable) return;
    const upstream = connect(targetPort, '127.0.0.1');
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      unreachable = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      unreachable = false;
      for (const socket of sockets) socket.destroy();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.skipIf(!postgresAvailable)('while PostgreSQL is unreachable', () => {
  test('a post fails with the JSON of the spec after the connect timeout instead of hanging, and all comes back', async () => {
    const postgres = await startPostgres();
    const relay = await startRelay(postgres.port);
    const database = new URL(await postgres.createDatabase('unreachable'));
    database.port = String(relay.port);
    const site = await startSite({ DATABASE_URL: database.toString(), DATABASE_CONNECT_TIMEOUT_MS: '500', DATABASE_STATEMENT_TIMEOUT_MS: '1000' });
    try {
      expect((await postForm(`${site.url}/api/contact`, valid)).status).toBe(200);
      relay.cut();
      const failed = await postForm(`${site.url}/api/contact`, valid);
      expect(failed.status).toBe(500);
      await expect(failed.json()).resolves.toEqual({ success: false, error: 'Internal server error' });
      expect((await fetch(`${site.url}/api/health`)).status).toBe(503);
      relay.restore();
      await eventually('health to pass again', async () => (await fetch(`${site.url}/api/health`)).status === 200, 15_000);
      expect((await postForm(`${site.url}/api/contact`, valid)).status).toBe(200);
    } finally {
      await site.stop();
      await relay.close();
      await postgres.remove();
    }
  }, 60_000);
});

describe('a DATABASE_URL that does not answer at start', () => {
  test('the server stops after the connect timeout with one line naming DATABASE_URL, password masked', async () => {
    // Accepts the connection and never says a word: a database behind a dead network path.
    const silent = await startSilentServer();
    try {
      const started = startSite({ DATABASE_URL: `postgres://forms:s3cret@127.0.0.1:${silent.port}/forms`, DATABASE_CONNECT_TIMEOUT_MS: '500' });
      await expect(started).rejects.toThrow(
        `DATABASE_URL postgres://***:***@127.0.0.1:${silent.port}/forms: PostgreSQL could not be reached or refused us (Error: Connection terminated due to connection timeout)`,
      );
      await expect(started).rejects.not.toThrow('s3cret');
    } finally {
      await silent.close();
    }
  });
});
