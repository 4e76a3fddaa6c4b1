import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createAdminQueries } from '../../../packages/site-forms/src/lib/admin/queries.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createAbuseLimits } from '../../../packages/site-forms/src/lib/rate-limit.ts';
import { connectRedis } from '../../../packages/site-forms/src/lib/redis.ts';
import { createFormDrafts } from '../../../packages/site-forms/src/lib/sql/drafts.ts';
import { createDeliveries } from '../../../packages/site-forms/src/lib/webhooks/deliveries.ts';
import { recordEvent } from '../../../packages/site-forms/src/lib/webhooks/events.ts';
import { createWebhookWorker } from '../../../packages/site-forms/src/lib/webhooks/worker.ts';
import { runCli } from '../../contact/run-inbox.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';
import { type RedisServer, redisAvailable, startRedis } from '../../support/redis.ts';
import { testEngines } from '../../support/stores.ts';

/**
 * The erasure of a subscriber leaves no copy (issue 28, item 9): the address goes from the
 * events and the webhook deliveries waiting for a receiver that answers 503, from the per-address
 * limit in a real Redis (`site-forms:address:<email>`, 24 h) and from the drafts of refused posts,
 * through the admin's queries and through `npm run subscribers -- erase`, on both engines.
 */
const logger = createLogger({ level: 'silent' });
const ERASED = 'Erase.Me@Example.org';
const KEPT = 'keep@example.org';

let redisServer: RedisServer | undefined;
let receiver: FakeHttpServer;
beforeAll(async () => {
  if (redisAvailable) redisServer = await startRedis();
  receiver = await startFakeHttpServer();
}, 30_000);
afterAll(async () => {
  await redisServer?.stop();
  await receiver.close();
});

describe.each(testEngines())('the erasure of a subscriber on $name', (engine) => {
  let redis: Redis | undefined;
  afterEach(() => {
    redis?.disconnect();
    redis = undefined;
  });

  /** Two subscribers, each with their news waiting for the receiver, a count in Redis and a draft. */
  async function setUp() {
    const opened = await engine.open();
    const { store } = opened;
    redis = connectRedis(redisServer!.url, logger);
    if (redis.status !== 'ready') await new Promise((resolve) => redis!.once('ready', resolve));
    await redis.flushall();
    const limits = createAbuseLimits({ rateLimit: { max: 5, windowSeconds: 600 } }, logger, redis);
    const clock = { now: new Date() };
    receiver.requests.length = 0;
    receiver.reply(replyJson(503, {}));
    const worker = createWebhookWorker({
      deliveries: createDeliveries(store.sql),
      endpoints: [{ name: 'hook', kind: 'standard', url: `${receiver.url}/hook`, events: ['newsletter.subscribed', 'newsletter.confirmed'] }],
      siteName: 'Test Site',
      allowPrivate: true,
      logger,
      now: () => clock.now,
    });
    const drafts = createFormDrafts(store.sql);
    const draftOf = async (email: string) => {
      const id = await drafts.save({ route: '/newsletter', client: 'client-1', content: JSON.stringify({ values: { email }, problems: ['taken'] }) });
      return { id: id!, route: '/newsletter', client: 'client-1' };
    };
    for (const email of [ERASED, KEPT]) {
      await store.subscribers.add(email, clock.now);
      await recordEvent(store.sql, 'newsletter.subscribed', { email, provider: 'local' }, clock.now);
      await limits.checkAddress(email);
    }
    await recordEvent(store.sql, 'newsletter.confirmed', { email: ERASED.toLowerCase(), provider: 'local' }, clock.now);
    const erasedDraft = await draftOf('erase.me@example.ORG');
    const keptDraft = await draftOf(KEPT);
    await worker.runPass();
    expect(receiver.requests).toHaveLength(3);
    await expect(redis.exists('site-forms:address:erase.me@example.org')).resolves.toBe(1);
    return { ...opened, store, limits, clock, worker, drafts, erasedDraft, keptDraft };
  }

  /** What is left of both addresses once the receiver is back and every retry has fallen due. */
  async function leftAfterErasure({ store, clock, worker, drafts, erasedDraft, keptDraft }: Awaited<ReturnType<typeof setUp>>) {
    receiver.reply(replyJson(200, {}));
    clock.now = new Date(clock.now.getTime() + 3_600_000);
    await worker.runPass();
    const events = await store.sql.all<{ data: string }>('SELECT data FROM events');
    return {
      subscribers: (await store.subscribers.list()).map((s) => s.email),
      events: events.map((row) => (JSON.parse(row.data) as { email: string }).email),
      posted: receiver.requests.slice(3).map((r) => (JSON.parse(r.body) as { data: { email: string } }).data.email),
      waiting: await createDeliveries(store.sql).nextDueAt(),
      redis: (await redis!.keys('site-forms:address:*')).sort(),
      drafts: [Boolean(await drafts.read(erasedDraft)), Boolean(await drafts.read(keptDraft))],
    };
  }

  const nothingLeft = {
    subscribers: [KEPT],
    events: [KEPT],
    posted: [KEPT],
    waiting: undefined,
    redis: ['site-forms:address:keep@example.org'],
    drafts: [false, true],
  };

  test.runIf(engine.available && redisAvailable)('through the admin: nothing of the address is left, in the store or in Redis', async () => {
    const parts = await setUp();
    const erased = await createAdminQueries(parts.store.sql, parts.store.messages, { limits: parts.limits }).deleteSubscriber(ERASED);
    await expect(leftAfterErasure(parts)).resolves.toEqual(nothingLeft);
    expect(erased).toEqual({ found: true });
  });

  test.runIf(engine.available && redisAvailable)(
    'through `npm run subscribers -- erase`: the same, from another process',
    async () => {
      const parts = await setUp();
      const env = { ...(parts.url ? { DATABASE_URL: parts.url } : { DATA_DIR: parts.dataDir }), REDIS_URL: redisServer!.url };
      const run = await runCli('subscribers', ['erase', ERASED], env);
      expect(run).toMatchObject({ code: 0, stdout: `${ERASED} is erased: the list, its consent, its signups, events and drafts, and its limit count.\n` });
      await expect(leftAfterErasure(parts)).resolves.toEqual(nothingLeft);
      // Again: nothing left to erase, said so, and a different exit code for scripts.
      await expect(runCli('subscribers', ['erase', ERASED], env)).resolves.toMatchObject({
        code: 1,
        stderr: `Nothing of ${ERASED} was found; nothing erased.\n`,
      });
    },
    30_000,
  );

  test.runIf(engine.available && redisAvailable)(
    'with Redis unreachable, `erase` erases the store and says the count is left, exiting 1',
    async () => {
      const parts = await setUp();
      // A port nobody listens on: Redis answers nothing.
      const dead = await startRedis();
      await dead.stop();
      const env = { ...(parts.url ? { DATABASE_URL: parts.url } : { DATA_DIR: parts.dataDir }), REDIS_URL: dead.url };
      const run = await runCli('subscribers', ['erase', ERASED], env);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /^Erase\.Me@Example\.org is erased from the database, but not from Redis, which could not be reached \(.+\): .* Run erase again once Redis is back\.\n$/,
      );
      const left = await leftAfterErasure(parts);
      expect(left).toEqual({ ...nothingLeft, redis: ['site-forms:address:erase.me@example.org', 'site-forms:address:keep@example.org'] });
    },
    30_000,
  );

  test.runIf(engine.available)('an erasure keeps the other addresses that merely contain it', async () => {
    const { store } = await engine.open();
    await recordEvent(store.sql, 'newsletter.subscribed', { email: 'xerase.me@example.org', provider: 'local' }, new Date());
    await recordEvent(store.sql, 'newsletter.subscribed', { email: 'erase.me@example.org', provider: 'local' }, new Date());
    const drafts = createFormDrafts(store.sql);
    const draft = { route: '/newsletter', client: 'client-1' };
    const other = await drafts.save({ ...draft, content: JSON.stringify({ values: { email: 'xerase.me@example.org' } }) });
    const own = await drafts.save({ ...draft, content: JSON.stringify({ values: { email: 'erase.me@example.org' } }) });
    await expect(createAdminQueries(store.sql, store.messages).deleteSubscriber(ERASED)).resolves.toEqual({ found: true });
    const left = await store.sql.all<{ data: string }>('SELECT data FROM events');
    expect(left.map((row) => (JSON.parse(row.data) as { email: string }).email)).toEqual(['xerase.me@example.org']);
    expect([Boolean(await drafts.read({ ...draft, id: other! })), Boolean(await drafts.read({ ...draft, id: own! }))]).toEqual([true, false]);
  });
});
