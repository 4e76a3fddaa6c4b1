import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createDeliveries, type TryEnd } from '../../../packages/site-forms/src/lib/webhooks/deliveries.ts';
import type { Endpoint } from '../../../packages/site-forms/src/lib/webhooks/endpoints.ts';
import type { SiteEvent } from '../../../packages/site-forms/src/lib/webhooks/events.ts';
import { createWebhooks, type Webhooks } from '../../../packages/site-forms/src/lib/webhooks/webhooks.ts';
import { createWebhookWorker } from '../../../packages/site-forms/src/lib/webhooks/worker.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';
import { TEST_DATABASE } from '../../support/stores.ts';

/**
 * The webhooks as the server builds them (createWebhooks) and the worker's edges, over a real
 * SQLite store in a temporary folder and a real receiver on 127.0.0.1.
 */
let receiver: FakeHttpServer;
beforeAll(async () => {
  receiver = await startFakeHttpServer();
});
afterAll(() => receiver.close());

let store: Store;
let dataDir: string;
let logs: Array<Record<string, unknown>>;
let webhooks: Webhooks | undefined;
const logger = createLogger({ level: 'info', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });

beforeEach(async () => {
  logs = [];
  receiver.requests.length = 0;
  receiver.reply(replyJson(200, {}));
  dataDir = mkdtempSync(join(tmpdir(), 'site-forms-webhooks-'));
  store = openStore({ ...TEST_DATABASE, url: undefined, dataDir }, createLogger({ level: 'silent' }));
  await store.ready;
});
afterEach(async () => {
  await webhooks?.worker?.stop();
  webhooks = undefined;
  await store.close().catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
});

const endpoint = (more: Partial<Endpoint> = {}): Endpoint => ({
  name: 'webhook',
  kind: 'standard',
  url: `${receiver.url}/hook`,
  secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
  events: ['contact.received', 'newsletter.subscribed'],
  ...more,
});
const sql = (query: string) => store.sql.all(query);

describe('the webhooks of a deployment', () => {
  test('without an endpoint or an automatic reply: no worker, and an event is not even kept', async () => {
    webhooks = createWebhooks(store.sql, { endpoints: [], allowPrivate: true }, { siteName: 'Atelier Nord', logger });
    expect(webhooks.worker).toBeUndefined();
    await webhooks.events.record('newsletter.subscribed', { email: 'reader@example.org' });
    await expect(sql('SELECT type FROM events')).resolves.toEqual([]);
  });

  test('the automatic reply alone is an endpoint of its own: it gets each accepted message', async () => {
    const replied: Array<[SiteEvent, Date]> = [];
    const autoReply = async (event: SiteEvent, now: Date): Promise<TryEnd> => {
      replied.push([event, now]);
      return { kind: 'delivered', status: 250 };
    };
    webhooks = createWebhooks(store.sql, { endpoints: [], allowPrivate: true }, { siteName: 'Atelier Nord', logger, autoReply });
    await webhooks.events.record('contact.received', { id: 1, name: 'Ada', email: 'ada@example.org', message: 'Hello' });
    await webhooks.events.record('contact.held', { id: 2, name: 'Bot', email: 'bot@example.org', message: 'Buy', reasons: ['spam'] });
    await webhooks.worker!.runPass();
    expect(replied.map(([event]) => [event.type, event.data])).toEqual([
      ['contact.received', { id: 1, name: 'Ada', email: 'ada@example.org', message: 'Hello' }],
    ]);
    expect((await webhooks.deliveries.list(10)).map((d) => [d.endpoint, d.type, d.status, d.lastStatus])).toEqual([
      ['auto-reply', 'contact.received', 'delivered', 250],
    ]);
    expect(receiver.requests).toEqual([]);
  });

  test('started, the worker says so once, naming its endpoints, and a recorded event wakes it at once (not at the next poll)', async () => {
    webhooks = createWebhooks(
      store.sql,
      { endpoints: [endpoint()], allowPrivate: true },
      { siteName: 'Atelier Nord', logger, autoReply: async () => ({ kind: 'delivered', status: 250 }) },
    );
    webhooks.worker!.start();
    webhooks.worker!.start();
    expect(logs.filter((line) => line.event === 'webhook.worker_started')).toEqual([
      { time: expect.any(String), level: 'info', event: 'webhook.worker_started', endpoints: ['webhook', 'auto-reply'] },
    ]);
    // Let the pass of the start end: the worker then sleeps for the poll (5 s) with nothing due.
    await webhooks.worker!.runPass();
    const recordedAt = performance.now();
    await webhooks.events.record('newsletter.subscribed', { email: 'reader@example.org', provider: 'local' });
    await expect.poll(() => receiver.requests.length, { timeout: 4_000, interval: 20 }).toBe(1);
    expect(performance.now() - recordedAt).toBeLessThan(4_000);
    expect(JSON.parse(receiver.requests[0]!.body)).toMatchObject({ type: 'newsletter.subscribed', data: { email: 'reader@example.org', provider: 'local' } });
  });
});

describe('the owner’s limit of tries', () => {
  test('DELIVERY_MAX_ATTEMPTS reaches the deliveries: with 1, the first failed try is the last', async () => {
    receiver.reply(replyJson(500, {}));
    webhooks = createWebhooks(store.sql, { endpoints: [endpoint()], allowPrivate: true }, { siteName: 'Atelier Nord', logger, maxAttempts: 1 });
    await webhooks.events.record('newsletter.subscribed', { email: 'reader@example.org' });
    await webhooks.worker!.runPass();
    expect((await webhooks.deliveries.list(10)).map((d) => [d.status, d.attempts, d.lastStatus])).toEqual([['failed', 1, 500]]);
  });
});

describe('the worker', () => {
  const clock = new Date('2026-11-25T12:00:00.000Z');
  const worker = (endpoints: Endpoint[]) =>
    createWebhookWorker({ deliveries: createDeliveries(store.sql), endpoints, siteName: 'Atelier Nord', allowPrivate: true, logger, now: () => clock });
  const record = (type: 'contact.received', data: Record<string, unknown>) =>
    createWebhooks(store.sql, { endpoints: [endpoint()], allowPrivate: true }, { siteName: 'Atelier Nord', logger }).events.record(type, data);

  test('a standard endpoint without a secret is sent unsigned: the id and time of the try, an empty signature', async () => {
    await record('contact.received', { id: 3, name: 'Ada', email: 'ada@example.org', message: 'Hello' });
    await worker([endpoint({ secrets: undefined })]).runPass();
    expect(receiver.requests).toHaveLength(1);
    const { headers } = receiver.requests[0]!;
    expect([headers['webhook-id'], headers['webhook-timestamp'], headers['webhook-signature']]).toEqual([
      expect.stringMatching(/^msg_[0-9a-f]{28}$/),
      '1795608000',
      '',
    ]);
  });

  test('a delivery to an endpoint taken off the configuration ends as stopped, without a request', async () => {
    const deliveries = createDeliveries(store.sql);
    await record('contact.received', { id: 4, name: 'Ada', email: 'ada@example.org', message: 'Hello' });
    await deliveries.fanOut([endpoint(), endpoint({ name: 'slack', kind: 'slack', url: `${receiver.url}/slack` })], clock);
    await worker([endpoint()]).runPass();
    expect(receiver.requests.map((r) => r.url)).toEqual(['/hook']);
    expect((await deliveries.list(10)).map((d) => [d.endpoint, d.status, d.attempts, d.lastStatus, d.lastError])).toEqual([
      ['slack', 'disabled', 1, 410, 'the receiver answered 410 Gone'],
      ['webhook', 'delivered', 1, 200, null],
    ]);
  });

  test('a pass that fails (the database gone) is one warning, and the worker goes on', async () => {
    const running = worker([endpoint()]);
    await store.close();
    await running.runPass();
    expect(logs.filter((line) => line.event === 'webhook.worker_failed')).toEqual([
      { time: expect.any(String), level: 'warn', event: 'webhook.worker_failed', error: 'Error: database is not open', note: 'tried again in a few seconds' },
    ]);
  });
});

describe('when the next delivery is due', () => {
  test('none waiting: never; one waiting: its time; once it is delivered: never again', async () => {
    const deliveries = createDeliveries(store.sql);
    await expect(deliveries.nextDueAt()).resolves.toBeUndefined();
    await createWebhooks(store.sql, { endpoints: [endpoint()], allowPrivate: true }, { siteName: 'Atelier Nord', logger }).events.record(
      'newsletter.subscribed',
      {
        email: 'reader@example.org',
      },
    );
    const at = new Date(Date.now() + 1_000);
    await deliveries.fanOut([endpoint()], at);
    await expect(deliveries.nextDueAt()).resolves.toEqual(at);
    const claimed = await deliveries.claim(at, new Date(at.getTime() + 60_000));
    await deliveries.finish(claimed!.delivery.id, claimed!.lease, { kind: 'delivered', status: 200 }, at);
    await expect(deliveries.nextDueAt()).resolves.toBeUndefined();
  });
});
