import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { POSTGRES_SKIP_NOTE, type PostgresServer, postgresAvailable, startPostgres } from '../support/postgres.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { eventually } from '../support/smtp.ts';

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

describe.skipIf(postgresAvailable)('while PostgreSQL is down', () => {
  test.skip(POSTGRES_SKIP_NOTE, () => {});
});
