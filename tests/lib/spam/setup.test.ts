import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { requireConfig } from '../../../packages/site-forms/src/lib/config/config.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createSpamParts } from '../../../packages/site-forms/src/lib/app/spam-parts.ts';
import { openStore } from '../../../packages/site-forms/src/lib/database/database.ts';
import { type RedisServer, redisAvailable, startRedis } from '../../support/redis.ts';
import { TEST_DATABASE } from '../../support/stores.ts';

const person = { name: 'Ada', email: 'ada@example.com', message: 'Hello there, a question.', ip: '127.0.0.1' };

async function solvedFrom(parts: ReturnType<typeof createSpamParts>): Promise<string> {
  const { challenge } = await parts.service.challenge();
  const solution = await solveChallenge({ challenge, deriveKey });
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
}

describe('the spam filter of a server', () => {
  let redis: RedisServer | undefined;
  const dirs: string[] = [];
  beforeAll(async () => {
    if (redisAvailable) redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const open = (env: Record<string, string> = {}) => {
    const dir = mkdtempSync(join(tmpdir(), 'site-forms-spam-setup-'));
    dirs.push(dir);
    const config = requireConfig({ DATA_DIR: dir, ...env });
    const database = openStore({ ...TEST_DATABASE, url: undefined, dataDir: dir }, createLogger({ level: 'silent' }));
    return { parts: createSpamParts(config, database, undefined, createLogger({ level: 'silent' })), database };
  };

  /** Judges a proof, then stores the message as the contact handler does: the proof is consumed with it. */
  const judgeAndStore = async (parts: ReturnType<typeof createSpamParts>, database: ReturnType<typeof openStore>, proof: string) => {
    const verdict = await parts.service.judge({ ...person, proof, browser: true });
    return database.submissions.receive({ ...person, held: verdict.spam ? verdict.reasons : undefined, proof: verdict.proof });
  };

  test('two servers on one database sign alike, and a proof is single-use across them', async () => {
    const { parts: one, database } = open();
    const two = createSpamParts(requireConfig({}), database, undefined, createLogger({ level: 'silent' }));
    const proof = await solvedFrom(one);
    // Solved at once: too fast, a weak sign alone, so it is delivered; the same proof again is replayed.
    await expect(judgeAndStore(two, database, proof)).resolves.toMatchObject({ status: 'pending', reasons: [] });
    await expect(judgeAndStore(one, database, proof)).resolves.toMatchObject({ status: 'spam', reasons: ['proof-replayed'] });
    await database.close();
  });

  test.skipIf(!redisAvailable)('with REDIS_URL a proof stays single-use while Redis is up, down and restarted without its data', async () => {
    const { parts, database } = open({ REDIS_URL: redis!.url });
    const proofs = await Promise.all([solvedFrom(parts), solvedFrom(parts), solvedFrom(parts)]);
    const replayed = async (proof: string) => (await judgeAndStore(parts, database, proof)).reasons.includes('proof-replayed');

    await expect(replayed(proofs[0]!)).resolves.toBe(false);
    await expect(replayed(proofs[0]!)).resolves.toBe(true);
    await redis!.stop();
    await expect(replayed(proofs[0]!)).resolves.toBe(true);
    await expect(replayed(proofs[1]!)).resolves.toBe(false);
    // A Redis without persistence comes back empty: the database still remembers both.
    await redis!.start();
    await expect(replayed(proofs[1]!)).resolves.toBe(true);
    await expect(replayed(proofs[0]!)).resolves.toBe(true);
    await expect(replayed(proofs[2]!)).resolves.toBe(false);
    await database.close();
  });

  test('the filter hands its jobs to the housekeeping, and each runs on the database', async () => {
    const { parts, database } = open();
    expect(parts.jobs.map((job) => job.name)).toEqual(['spam-retention', 'used-challenges', 'digest']);
    for (const job of parts.jobs) await job.run(new Date());
    await database.close();
  });
});
