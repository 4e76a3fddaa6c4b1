import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postForm, type Site, startSite } from '../support/site.ts';
import { holdWriteLock } from '../support/sqlite-lock.ts';

const valid = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello, I would like to know more.', honeypot: '' };

describe('a write lock held by another process', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite({ DATABASE_STATEMENT_TIMEOUT_MS: '3000' });
  });
  afterAll(() => site.stop());

  test('pages and health keep answering while a post waits for the lock, then fails with the JSON of the spec; posts work once it is released', async () => {
    const holder = await holdWriteLock(join(site.dataDir, 'forms.db'));
    const finished: string[] = [];
    try {
      const post = postForm(`${site.url}/api/contact`, valid).then((response) => {
        finished.push('post');
        return response;
      });
      // Started after the post: with a statement blocking the process, they would end after it.
      const page = fetch(`${site.url}/`).then((response) => {
        finished.push('page');
        return response;
      });
      const health = fetch(`${site.url}/api/health`).then((response) => {
        finished.push('health');
        return response;
      });
      expect((await page).status).toBe(200);
      const healthy = await health;
      expect(healthy.status).toBe(200);
      await expect(healthy.json()).resolves.toMatchObject({ success: true, database: 'SQLite', databaseWritable: true });

      const failed = await post;
      expect(finished.at(-1)).toBe('post');
      expect(failed.status).toBe(500);
      await expect(failed.json()).resolves.toEqual({ success: false, error: 'Internal server error' });
      // Once a post has failed, health says so.
      expect((await fetch(`${site.url}/api/health`)).status).toBe(503);
    } finally {
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
    }
    const stored = await postForm(`${site.url}/api/contact`, valid);
    expect(stored.status).toBe(200);
    expect((await fetch(`${site.url}/api/health`)).status).toBe(200);
    const errors = site.logs.filter((l) => typeof l === 'object' && l.level === 'error');
    expect(errors).toEqual([
      expect.objectContaining({ event: 'database.unavailable', error: 'Error: the database file stayed locked by another process for 3000 ms' }),
    ]);
  });
});
