import { describe, expect, test } from 'vitest';
import { createMemoryUsedChallenges } from '../../../packages/site-forms/src/lib/spam/used-challenges.ts';

const NOW = 1_000_000;

describe('used challenges in memory', () => {
  test('a challenge is accepted once until it expires', async () => {
    let now = NOW;
    const used = createMemoryUsedChallenges(() => now);
    await expect(used.claim('a', NOW + 1_000)).resolves.toBe(true);
    await expect(used.claim('a', NOW + 1_000)).resolves.toBe(false);
    await expect(used.claim('b', NOW + 1_000)).resolves.toBe(true);
    now = NOW + 999;
    await expect(used.claim('a', NOW + 1_000)).resolves.toBe(false);
    // Expired, so the proof itself is refused; the record need not hold it any more.
    now = NOW + 1_000;
    await expect(used.claim('a', NOW + 2_000)).resolves.toBe(true);
  });

  test('when full, expired entries go first, then the oldest', async () => {
    let now = NOW;
    const used = createMemoryUsedChallenges(() => now, 3);
    await used.claim('expires-soon', NOW + 10);
    await used.claim('old', NOW + 5_000);
    await used.claim('newer', NOW + 5_000);
    now = NOW + 20;
    await expect(used.claim('fourth', NOW + 5_000)).resolves.toBe(true);
    // 'expires-soon' made room: the live ones are all still remembered.
    await expect(used.claim('old', NOW + 5_000)).resolves.toBe(false);
    await expect(used.claim('newer', NOW + 5_000)).resolves.toBe(false);
    await expect(used.claim('fifth', NOW + 5_000)).resolves.toBe(true);
    // Full of live entries: the oldest inserted was forgotten.
    await expect(used.claim('old', NOW + 5_000)).resolves.toBe(true);
    await expect(used.claim('fifth', NOW + 5_000)).resolves.toBe(false);
  });
});
