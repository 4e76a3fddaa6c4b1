import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createSubmissionMachine } from '../../../packages/site-forms/src/lib/submissions/machine.ts';
import { createDeliveries } from '../../../packages/site-forms/src/lib/webhooks/deliveries.ts';
import type { Endpoint } from '../../../packages/site-forms/src/lib/webhooks/endpoints.ts';
import { postDelivery } from '../../../packages/site-forms/src/lib/webhooks/sender.ts';
import { createWebhookWorker } from '../../../packages/site-forms/src/lib/webhooks/worker.ts';
import { type FakeHttpServer, type FakeReply, replyHang, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';
import { TEST_DATABASE, testEngines } from '../../support/stores.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const message = { name: 'Zoë Ångström', email: 'zoe@example.org', message: 'Hello, a question about your prices.', held: undefined };

let receiver: FakeHttpServer;
beforeAll(async () => {
  receiver = await startFakeHttpServer();
});
afterAll(() => receiver.close());

/** Answers each request with the next reply of the list, the last one for good. */
function replies(...list: FakeReply[]): FakeReply {
  let next = 0;
  return (request, res, req) => list[Math.min(next++, list.length - 1)]!(request, res, req);
}

describe.each(testEngines())('webhook deliveries on $name', (engine) => {
  const setUp = async (options: { allowPrivate?: boolean; endpoint?: Partial<Endpoint> } = {}) => {
    const { store, url, dataDir } = await engine.open();
    let clock = new Date();
    const logs: Array<Record<string, unknown>> = [];
    const logger = createLogger({ level: 'info', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
    const endpoint: Endpoint = {
      name: 'webhook',
      kind: 'standard',
      url: `${receiver.url}/hook`,
      secrets: [SECRET],
      events: ['contact.received', 'contact.held'],
      ...options.endpoint,
    };
    const workerOn = (s: Store) =>
      createWebhookWorker({
        deliveries: createDeliveries(s.sql),
        endpoints: [endpoint],
        siteName: 'Atelier Nord',
        allowPrivate: options.allowPrivate ?? true,
        logger,
        now: () => clock,
      });
    receiver.requests.length = 0;
    return {
      store,
      url,
      dataDir,
      logs,
      worker: workerOn(store),
      workerOn,
      machine: createSubmissionMachine(store.sql),
      deliveries: createDeliveries(store.sql),
      advance: (ms: number) => (clock = new Date(clock.getTime() + ms)),
    };
  };

  test.skipIf(!engine.available)('a stored message reaches the receiver, signed so that the standardwebhooks package verifies it', async () => {
    receiver.reply(replyJson(200, { ok: true }));
    const { machine, worker, deliveries, logs } = await setUp();
    const { id } = await machine.receive(message);
    await worker.runPass();
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    expect(request!.url).toBe('/hook');
    const verified = new Webhook(SECRET).verify(request!.body, request!.headers as Record<string, string>) as Record<string, unknown>;
    expect(verified).toEqual({
      type: 'contact.received',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: { id, createdAt: expect.any(String), name: 'Zoë Ångström', email: 'zoe@example.org', message: 'Hello, a question about your prices.' },
    });
    expect(request!.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{28}$/);
    expect((await deliveries.list(10)).map((d) => [d.type, d.status, d.attempts, d.lastStatus])).toEqual([['contact.received', 'delivered', 1, 200]]);
    // The lane ends when it finds nothing more to send, quietly.
    expect(logs.filter((l) => l.level !== 'info')).toEqual([]);
  });

  test.skipIf(!engine.available)(
    'a receiver down for a while gets the event once it is back, exactly once, with the same webhook-id on every try',
    async () => {
      receiver.reply(replies(replyJson(500, {}), replyJson(503, {}), replyJson(502, {}), replyJson(200, {})));
      const { machine, worker, deliveries, advance } = await setUp();
      await machine.receive({ ...message, held: ['too-many-links'] });
      await worker.runPass();
      for (const wait of [5_000, 300_000, 1_800_000]) {
        // Not due yet: nothing is sent a second early.
        advance(wait - 1_000);
        await worker.runPass();
        advance(1_000);
        await worker.runPass();
      }
      await worker.runPass();
      expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual(Array(4).fill(receiver.requests[0]!.headers['webhook-id']));
      expect(JSON.parse(receiver.requests[0]!.body)).toMatchObject({ type: 'contact.held', data: { reasons: ['too-many-links'] } });
      const [delivery] = await deliveries.list(10);
      expect(delivery).toMatchObject({ status: 'delivered', attempts: 4 });
      expect((await deliveries.attempts(delivery!.id)).map((a) => [a.status, a.error])).toEqual([
        [500, 'the receiver answered 500'],
        [503, 'the receiver answered 503'],
        [502, 'the receiver answered 502'],
        [200, null],
      ]);
    },
  );

  test.skipIf(!engine.available)('two instances deliver each event once', async () => {
    receiver.reply(replyJson(204, {}));
    const { store, url, dataDir, machine, worker, workerOn } = await setUp();
    const other = openStore({ ...TEST_DATABASE, url, dataDir }, createLogger({ level: 'silent' }));
    await other.ready;
    try {
      for (let n = 0; n < 12; n++) await machine.receive({ ...message, name: `Visitor ${n}` });
      await Promise.all([worker.runPass(), workerOn(other).runPass(), worker.runPass()]);
      const ids = receiver.requests.map((r) => r.headers['webhook-id']);
      expect(ids).toHaveLength(12);
      expect(new Set(ids).size).toBe(12);
      expect(store).toBeDefined();
    } finally {
      await other.close();
    }
  });

  test.skipIf(!engine.available)('a message released, marked spam and released again reaches the receiver under one webhook-id', async () => {
    receiver.reply(replyJson(204, {}));
    const { machine, worker } = await setUp();
    const { id } = await machine.receive({ ...message, held: ['too-many-links'] });
    for (let round = 0; round < 3; round++) {
      await machine.release(id, new Date());
      await worker.runPass();
      await machine.hold(id, new Date());
    }
    await machine.release(id, new Date());
    await worker.runPass();
    // The owner's "Spam" forgets the news (decision 0151), so each release tells it again, always
    // under the message's one id: a receiver that keeps the ids it has seen acts on it once.
    const told = receiver.requests.map((r) => [(JSON.parse(r.body) as { type: string }).type, r.headers['webhook-id']]);
    expect(told.map(([type]) => type)).toEqual(['contact.held', 'contact.received', 'contact.received', 'contact.received', 'contact.received']);
    expect(new Set(told.slice(1).map(([, webhookId]) => webhookId)).size).toBe(1);
    expect(told[0]![1]).not.toBe(told[1]![1]);
  });

  test.skipIf(!engine.available)(
    'a receiver that never answers delays no other endpoint and no automatic reply, for the messages waiting and the ones that come',
    async () => {
      const { store } = await engine.open();
      const hanging = await startFakeHttpServer(replyHang());
      // The hanging one gives up after 5 s here (15 s in service): it is not to be waited for.
      let hangingEnded!: () => void;
      const hangingTimedOut = new Promise<'the hanging receiver timed out'>((resolve) => {
        hangingEnded = () => resolve('the hanging receiver timed out');
      });
      hanging.reply((_, res) => void res.once('close', hangingEnded));
      const told: string[] = [];
      const waiters: Array<{ count: number; resolve: () => void }> = [];
      const tell = (what: string) => {
        told.push(what);
        for (const waiter of waiters) if (told.length >= waiter.count) waiter.resolve();
      };
      const toldTimes = (count: number) =>
        new Promise<'told'>((resolve) => {
          waiters.push({ count, resolve: () => resolve('told') });
          if (told.length >= count) resolve('told');
        });
      receiver.reply((request, res) => {
        tell(`webhook ${(JSON.parse(request.body) as { data: { name: string } }).data.name}`);
        res.writeHead(204).end();
      });
      const worker = createWebhookWorker({
        deliveries: createDeliveries(store.sql),
        endpoints: [
          { name: 'hanging', kind: 'standard', url: `${hanging.url}/hook`, secrets: [SECRET], events: ['contact.received'] },
          { name: 'answering', kind: 'standard', url: `${receiver.url}/hook`, secrets: [SECRET], events: ['contact.received'] },
          { name: 'auto-reply', kind: 'auto-reply', url: '', events: ['contact.received'] },
        ],
        siteName: 'Atelier Nord',
        allowPrivate: true,
        logger: createLogger({ level: 'silent' }),
        post: (request) => postDelivery({ ...request, timeoutMs: 5_000 }),
        autoReply: async (event) => {
          tell(`reply ${(event.data as { name: string }).name}`);
          return { kind: 'delivered', status: 250 };
        },
      });
      const machine = createSubmissionMachine(store.sql);
      for (const name of ['First', 'Second']) await machine.receive({ ...message, name });
      worker.start();
      // The hanging receiver goes first, so that the worker's stop has no try left to wait for.
      onTestFinished(async () => {
        await hanging.close();
        await worker.stop();
      });
      await expect(Promise.race([toldTimes(4), hangingTimedOut])).resolves.toBe('told');
      // A message that arrives while the hanging receiver still holds its first delivery.
      await machine.receive({ ...message, name: 'Third' });
      worker.poke();
      await expect(Promise.race([toldTimes(6), hangingTimedOut])).resolves.toBe('told');
      expect(told.sort()).toEqual(['reply First', 'reply Second', 'reply Third', 'webhook First', 'webhook Second', 'webhook Third']);
      expect(hanging.requests.map((r) => (JSON.parse(r.body) as { data: { name: string } }).data.name)).toEqual(['First']);
    },
  );

  test.skipIf(!engine.available)(
    "a message that comes while its endpoint's lane is sending goes out in that lane, which then ends",
    async () => {
      const { store } = await engine.open();
      receiver.requests.length = 0;
      // The first request is held until the second pass has looked for due deliveries.
      let firstArrived!: () => void;
      const arrived = new Promise<void>((resolve) => {
        firstArrived = resolve;
      });
      let answerFirst!: () => void;
      receiver.reply((_, res) => {
        if (receiver.requests.length > 1) return void res.writeHead(204).end();
        answerFirst = () => res.writeHead(204).end();
        firstArrived();
      });
      // Once the first request is out, the lane asks the clock no more until it is answered:
      // the second pass asks it twice, to fan out and to find the endpoints with deliveries due.
      let asked = 0;
      let passAsked!: () => void;
      const secondPassAsked = new Promise<void>((resolve) => {
        passAsked = resolve;
      });
      const deliveries = createDeliveries(store.sql);
      const worker = createWebhookWorker({
        deliveries,
        endpoints: [{ name: 'webhook', kind: 'standard', url: `${receiver.url}/hook`, secrets: [SECRET], events: ['contact.received'] }],
        siteName: 'Atelier Nord',
        allowPrivate: true,
        logger: createLogger({ level: 'silent' }),
        now: () => {
          if (++asked === 2) passAsked();
          return new Date();
        },
      });
      const machine = createSubmissionMachine(store.sql);
      await machine.receive({ ...message, name: 'First' });
      const firstPass = worker.runPass();
      await arrived;
      asked = 0;
      await machine.receive({ ...message, name: 'Second' });
      const secondPass = worker.runPass();
      await secondPassAsked;
      // A query of our own after the pass's last one: its answer comes after the pass's.
      await deliveries.dueEndpoints(new Date());
      answerFirst();
      await Promise.all([firstPass, secondPass]);
      expect(receiver.requests.map((r) => (JSON.parse(r.body) as { data: { name: string } }).data.name)).toEqual(['First', 'Second']);
      expect((await deliveries.list(10)).map((d) => [d.status, d.attempts])).toEqual([
        ['delivered', 1],
        ['delivered', 1],
      ]);
    },
    15_000,
  );

  test.skipIf(!engine.available)('a send that throws is logged as the worker failing, once, and ends its lane', async () => {
    const { store } = await engine.open();
    const logs: Array<Record<string, unknown>> = [];
    const worker = createWebhookWorker({
      deliveries: createDeliveries(store.sql),
      endpoints: [{ name: 'auto-reply', kind: 'auto-reply', url: '', events: ['contact.received'] }],
      siteName: 'Atelier Nord',
      allowPrivate: true,
      logger: createLogger({ level: 'info', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
      autoReply: async () => {
        throw new TypeError('the mail transport is closed');
      },
    });
    await createSubmissionMachine(store.sql).receive(message);
    await worker.runPass();
    expect(logs.filter((l) => l.event === 'webhook.worker_failed')).toEqual([
      expect.objectContaining({ level: 'warn', error: 'TypeError: the mail transport is closed', note: 'tried again in a few seconds' }),
    ]);
  });

  test.skipIf(!engine.available)('a redirect is not followed, and counts as a failed try', async () => {
    receiver.reply((request, res) => {
      if (request.url === '/elsewhere') return void res.writeHead(200).end();
      res.writeHead(302, { location: '/elsewhere' }).end();
    });
    const { machine, worker, deliveries } = await setUp();
    await machine.receive(message);
    await worker.runPass();
    expect(receiver.requests.map((r) => r.url)).toEqual(['/hook']);
    expect((await deliveries.list(1))[0]).toMatchObject({ status: 'pending', lastStatus: 302, lastError: 'a redirect (302), which is not followed' });
  });

  test.skipIf(!engine.available)('429 with Retry-After waits as long as the receiver asks', async () => {
    receiver.reply(replyJson(429, {}, { 'retry-after': '120' }));
    const { machine, worker, deliveries, advance } = await setUp();
    await machine.receive(message);
    await worker.runPass();
    advance(60_000);
    await worker.runPass();
    expect(receiver.requests).toHaveLength(1);
    advance(60_000);
    await worker.runPass();
    expect(receiver.requests).toHaveLength(2);
    expect((await deliveries.list(1))[0]).toMatchObject({ attempts: 2, lastStatus: 429 });
  });

  test.skipIf(!engine.available)('410 Gone stops the endpoint, once logged, until its address changes', async () => {
    receiver.reply(replyJson(410, {}));
    const { machine, worker, deliveries, logs } = await setUp();
    await machine.receive(message);
    await worker.runPass();
    await machine.receive({ ...message, name: 'After the 410' });
    await worker.runPass();
    expect(receiver.requests).toHaveLength(1);
    expect((await deliveries.list(10)).map((d) => d.status)).toEqual(['disabled']);
    expect(logs.filter((l) => l.event === 'webhook.endpoint_stopped')).toHaveLength(1);
  });

  test.skipIf(!engine.available)('410 Gone on the first of two waiting deliveries ends the second unsent, in the same lane', async () => {
    receiver.reply(replyJson(410, {}));
    const { machine, worker, deliveries, logs } = await setUp();
    await machine.receive({ ...message, name: 'First' });
    await machine.receive({ ...message, name: 'Second' });
    await worker.runPass();
    expect(receiver.requests.map((r) => (JSON.parse(r.body) as { data: { name: string } }).data.name)).toEqual(['First']);
    expect((await deliveries.list(10)).map((d) => [d.status, d.attempts])).toEqual([
      ['disabled', 1],
      ['disabled', 1],
    ]);
    expect(logs.filter((l) => l.event === 'webhook.endpoint_stopped')).toEqual([
      {
        time: expect.any(String),
        level: 'warn',
        event: 'webhook.endpoint_stopped',
        endpoint: 'webhook',
        note: 'its receiver answered 410 Gone; change its address to start it again',
      },
    ]);
  });

  test.skipIf(!engine.available)('a chat alert is sent unsigned: the signature is for standard receivers only', async () => {
    receiver.reply(replyJson(200, {}));
    const { machine, worker, deliveries } = await setUp({ endpoint: { name: 'team-chat', kind: 'slack', secrets: undefined } });
    await machine.receive(message);
    await worker.runPass();
    expect(receiver.requests).toHaveLength(1);
    expect(Object.keys(receiver.requests[0]!.headers).filter((name) => name.startsWith('webhook-'))).toEqual([]);
    expect((await deliveries.list(1))[0]).toMatchObject({ status: 'delivered', lastStatus: 200 });
  });

  test.skipIf(!engine.available)('a receiver on a private address is refused unless WEBHOOK_ALLOW_PRIVATE', async () => {
    receiver.reply(replyJson(200, {}));
    const { machine, worker, deliveries } = await setUp({ allowPrivate: false });
    await machine.receive(message);
    await worker.runPass();
    expect(receiver.requests).toHaveLength(0);
    expect((await deliveries.list(1))[0]).toMatchObject({
      status: 'pending',
      lastError: 'the address is private (set WEBHOOK_ALLOW_PRIVATE=true to allow it)',
    });
  });

  test.skipIf(!engine.available)('after the last try of the schedule a delivery has failed; the owner’s replay sends it again', async () => {
    receiver.reply(replyJson(500, {}));
    const { machine, worker, deliveries, advance, logs } = await setUp();
    await machine.receive(message);
    for (let n = 0; n < 10; n++) {
      await worker.runPass();
      advance(86_400_000);
    }
    const [failed] = await deliveries.list(1);
    expect(failed).toMatchObject({ status: 'failed', attempts: 10 });
    expect(logs.filter((l) => l.event === 'webhook.delivery_failed')).toEqual([
      expect.objectContaining({ level: 'warn', type: 'contact.received', error: 'the receiver answered 500' }),
    ]);
    receiver.reply(replyJson(200, {}));
    await expect(deliveries.replay(failed!.id, advance(0))).resolves.toEqual({ kind: 'replayed' });
    await worker.runPass();
    expect((await deliveries.list(1))[0]).toMatchObject({ status: 'delivered' });
  });

  test.skipIf(!engine.available)('a replay of a delivery waiting for its next try makes it due now: the next pass sends it', async () => {
    receiver.reply(replies(replyJson(500, {}), replyJson(200, {})));
    const { machine, worker, deliveries, advance } = await setUp();
    await machine.receive(message);
    await worker.runPass();
    const [waiting] = await deliveries.list(1);
    expect(waiting).toMatchObject({ status: 'pending', attempts: 1 });
    // Due in 5 s: a pass now sends nothing.
    await worker.runPass();
    expect(receiver.requests).toHaveLength(1);
    await expect(deliveries.replay(waiting!.id, advance(1_000))).resolves.toEqual({ kind: 'due', was: waiting!.nextAttemptAt });
    await worker.runPass();
    expect(receiver.requests).toHaveLength(2);
    expect((await deliveries.list(1))[0]).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  test.skipIf(!engine.available)('a replay of a delivery being sent says until when its try may run; an unknown one is missing', async () => {
    const { machine, deliveries } = await setUp();
    await machine.receive(message);
    // Fanned out, then taken as a sending worker takes it, with a lease of a minute.
    const endpoint: Endpoint = { name: 'webhook', kind: 'standard', url: `${receiver.url}/hook`, secrets: [SECRET], events: ['contact.received'] };
    await deliveries.fanOut([endpoint], new Date('2026-06-01T11:00:00.000Z'));
    const claimed = (await deliveries.claim(new Date('2026-06-01T11:00:01.000Z'), new Date('2026-06-01T11:01:01.000Z')))!;
    await expect(deliveries.replay(claimed.delivery.id, new Date('2026-06-01T11:00:30.000Z'))).resolves.toEqual({
      kind: 'sending',
      until: '2026-06-01T11:01:01.000Z',
    });
    await expect(deliveries.replay(99_999, new Date('2026-06-01T11:00:30.000Z'))).resolves.toEqual({ kind: 'missing' });
  });

  test.skipIf(!engine.available)('old events go with their deliveries and tries, but not while one still waits', async () => {
    receiver.reply(replies(replyJson(200, {}), replyJson(500, {})));
    const { machine, worker, deliveries, store } = await setUp();
    await machine.receive(message);
    await worker.runPass();
    await machine.receive({ ...message, name: 'Still waiting' });
    await worker.runPass();
    // An event no endpoint ever took (recorded while none was configured) goes too.
    await store.sql.run(`INSERT INTO events (id, type, data, created_at) VALUES ('msg_orphan', 'contact.held', '{}', ?)`, [new Date().toISOString()]);
    const later = new Date(Date.now() + 15 * 86_400_000);
    await expect(deliveries.prune(later)).resolves.toBe(2);
    expect((await deliveries.list(10)).map((d) => d.status)).toEqual(['pending']);
    await expect(store.sql.get<{ n: number | string }>('SELECT count(*) AS n FROM webhook_attempts')).resolves.toMatchObject({ n: expect.anything() });
    expect(Number((await store.sql.get<{ n: number | string }>('SELECT count(*) AS n FROM webhook_attempts'))!.n)).toBe(1);
  });
});
