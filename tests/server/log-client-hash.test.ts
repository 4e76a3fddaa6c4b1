import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postForm, type Site, startSite } from '../support/site.ts';

/**
 * The hashed client address in the logs: one salt per process, so that every line about
 * one visitor carries the same hash within a run, whichever part of the build wrote it.
 */
let site: Site;
beforeAll(async () => {
  site = await startSite();
});
afterAll(() => site.stop());

const clientsOf = (event: string) =>
  site.logs.filter((line): line is Record<string, unknown> => typeof line === 'object' && line.event === event).map((line) => line.client);

describe('the hashed client address in the logs of the built server', () => {
  test('a near miss, a script post and a post without JavaScript from one address carry the same hash', async () => {
    await fetch(`${site.url}/api//contact`, { method: 'POST' });
    await postForm(`${site.url}/api/newsletter`, { email: 'ada@example.com' }, { accept: 'application/json' });
    await postForm(
      `${site.url}/api/newsletter`,
      { email: 'not an address' },
      { accept: 'text/html', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
    );

    const hashes = [...clientsOf('request.near_miss'), ...clientsOf('form.request')];
    expect(hashes).toHaveLength(3);
    expect(hashes[0]).toMatch(/^[0-9a-f]{12}$/);
    expect(new Set(hashes).size).toBe(1);
  });
});
