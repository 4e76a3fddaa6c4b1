import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openStore } from '../../../packages/site-forms/src/lib/database/database.ts';
import { createFileLinks } from '../../../packages/site-forms/src/lib/files/links.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createSubmissionMachine } from '../../../packages/site-forms/src/lib/submissions/machine.ts';
import { createDeliveries } from '../../../packages/site-forms/src/lib/webhooks/deliveries.ts';
import type { Endpoint } from '../../../packages/site-forms/src/lib/webhooks/endpoints.ts';
import type { SiteEvent } from '../../../packages/site-forms/src/lib/webhooks/events.ts';
import { eventFiles } from '../../../packages/site-forms/src/lib/webhooks/files.ts';
import { createWebhookWorker } from '../../../packages/site-forms/src/lib/webhooks/worker.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../../support/fake-http.ts';
import { TEST_DATABASE, testEngines } from '../../support/stores.ts';

/** A message's files in webhooks and chat alerts: per file its name, size, type and a signed link, never its bytes. */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const ORIGIN = 'https://werkbank.example';
const FILES = [
  {
    id: 'AbCdEfGhIjKlMnOpQrStUvWx',
    field: 'drawings',
    name: 'front view.png',
    size: 48_213,
    type: 'image/png',
    storageKey: '2026-11/AbCdEfGhIjKlMnOpQrStUvWx',
  },
  {
    id: 'ZyXwVuTsRqPoNmLkJiHgFeDc',
    field: 'drawings',
    name: 'plan.pdf',
    size: 1_200_000,
    type: 'application/pdf',
    storageKey: '2026-11/ZyXwVuTsRqPoNmLkJiHgFeDc',
  },
];

let receiver: FakeHttpServer;
beforeAll(async () => {
  receiver = await startFakeHttpServer(replyJson(200, {}));
});
afterAll(() => receiver.close());

const LINK = /^https:\/\/werkbank\.example\/api\/files\/([\w-]+)\?expires=(\d+)&signature=([0-9a-f]{64})$/;

describe.each(testEngines())('webhooks of a message with files on $name', (engine) => {
  const setUp = async (endpoint: Partial<Endpoint>) => {
    const { store } = await engine.open();
    const links = createFileLinks(store.sql, { lifetimeSeconds: 3600 });
    receiver.requests.length = 0;
    const worker = createWebhookWorker({
      deliveries: createDeliveries(store.sql),
      endpoints: [{ name: 'hook', kind: 'standard', url: `${receiver.url}/hook`, secrets: [SECRET], events: ['contact.received'], ...endpoint } as Endpoint],
      siteName: 'Werkbank',
      allowPrivate: true,
      logger: createLogger({ level: 'silent' }),
      withFiles: (event) => eventFiles(event, { records: store.files, links, origin: ORIGIN }),
    });
    return { store, links, worker, machine: createSubmissionMachine(store.sql) };
  };

  test.skipIf(!engine.available)("a webhook's payload lists each file with a signed link that opens it, and carries no byte of it", async () => {
    const { machine, worker, links } = await setUp({});
    const { id } = await machine.receive({ name: 'Ada Lovelace', email: 'ada@example.org', message: 'The drawings.', held: undefined, files: FILES });
    await worker.runPass();
    expect(receiver.requests).toHaveLength(1);
    const request = receiver.requests[0]!;
    const { data } = new Webhook(SECRET).verify(request.body, request.headers as Record<string, string>) as { data: { id: number; files: unknown[] } };
    expect(data.id).toBe(id);
    expect(data.files).toEqual([
      { name: 'front view.png', size: 48_213, type: 'image/png', url: expect.stringMatching(LINK) },
      { name: 'plan.pdf', size: 1_200_000, type: 'application/pdf', url: expect.stringMatching(LINK) },
    ]);
    for (const [index, file] of (data.files as Array<{ url: string }>).entries()) {
      const [, fileId, expires, signature] = LINK.exec(file.url)!;
      expect(fileId).toBe(FILES[index]!.id);
      await expect(links.verify({ id: fileId!, expires: expires!, signature: signature! })).resolves.toBe('valid');
    }
    // Never the storage's key: the link is the only way to the bytes.
    expect(request.body).not.toContain('2026-11/');
  });

  test.skipIf(!engine.available)('a chat alert names each file with its size and link', async () => {
    const { machine, worker } = await setUp({ name: 'slack', kind: 'slack', secrets: undefined, detail: 'name-and-first-line' });
    await machine.receive({ name: 'Ada Lovelace', email: 'ada@example.org', message: 'The drawings.', held: undefined, files: FILES });
    await worker.runPass();
    const { text } = JSON.parse(receiver.requests[0]!.body) as { text: string };
    const lines = text.split('\n');
    expect(lines.slice(0, 2)).toEqual(['Werkbank: new message from Ada Lovelace &lt;ada@example.org&gt;', 'The drawings.']);
    expect(lines.slice(2)).toEqual([
      expect.stringMatching(/^front view\.png \(48\.2 kB\): https:\/\/werkbank\.example\/api\/files\//),
      expect.stringMatching(/^plan\.pdf \(1\.2 MB\): https:/),
    ]);
  });

  test.skipIf(!engine.available)("only a message's event with its number gets the files: not a newsletter event, not an id that is not a number", async () => {
    const { store, links, machine } = await setUp({});
    const { id } = await machine.receive({ name: 'Ada Lovelace', email: 'ada@example.org', message: 'The drawings.', held: undefined, files: FILES });
    const withFiles = (event: SiteEvent) => eventFiles(event, { records: store.files, links, origin: ORIGIN });
    const at = '2026-11-24T12:00:00.000Z';
    // The message's own event does get them: the ones below are left alone by their kind, not for want of files.
    const received = await withFiles({ id: 'msg_1', type: 'contact.received', createdAt: at, data: { id } });
    expect((received.data.files as Array<{ name: string }>).map((file) => file.name)).toEqual(['front view.png', 'plan.pdf']);
    for (const event of [
      { id: 'msg_2', type: 'newsletter.subscribed', createdAt: at, data: { id, email: 'reader@example.org' } },
      { id: 'msg_3', type: 'contact.held', createdAt: at, data: { id: String(id), email: 'ada@example.org' } },
    ] as const satisfies readonly SiteEvent[]) {
      expect(await withFiles(event)).toEqual({ ...event, data: { ...event.data } });
    }
  });

  test.skipIf(!engine.available)('a message without files gets the payload it always had', async () => {
    const { machine, worker } = await setUp({});
    await machine.receive({ name: 'Ada Lovelace', email: 'ada@example.org', message: 'No drawings.', held: undefined });
    await worker.runPass();
    const { data } = JSON.parse(receiver.requests[0]!.body) as { data: Record<string, unknown> };
    expect(Object.keys(data).sort()).toEqual(['createdAt', 'email', 'id', 'message', 'name']);
  });

  test.skipIf(!engine.available)("a try whose message's files cannot be read sends nothing, and is recorded as one to retry", async () => {
    const { store, url, dataDir } = await engine.open();
    // A second handle on the same database, closed: reading the files fails as it does while the store is down.
    const down = openStore({ ...TEST_DATABASE, url, dataDir }, createLogger({ level: 'silent' }));
    await down.ready;
    await down.close();
    const links = createFileLinks(store.sql, { lifetimeSeconds: 3600 });
    const deliveries = createDeliveries(store.sql);
    const logs: Array<Record<string, unknown>> = [];
    receiver.requests.length = 0;
    const worker = createWebhookWorker({
      deliveries,
      endpoints: [{ name: 'hook', kind: 'standard', url: `${receiver.url}/hook`, secrets: [SECRET], events: ['contact.received'] }],
      siteName: 'Werkbank',
      allowPrivate: true,
      logger: createLogger({ level: 'info', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
      withFiles: (event) => eventFiles(event, { records: down.files, links, origin: ORIGIN }),
    });
    await createSubmissionMachine(store.sql).receive({
      name: 'Ada Lovelace',
      email: 'ada@example.org',
      message: 'The drawings.',
      held: undefined,
      files: FILES,
    });
    await worker.runPass();
    // Never a payload without the links: the try ends before anything is sent.
    expect(receiver.requests).toHaveLength(0);
    const [delivery] = await deliveries.list(1);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, lastStatus: null, lastError: "the message's files could not be read" });
    expect((await deliveries.attempts(delivery!.id)).map((a) => [a.status, a.error])).toEqual([[null, "the message's files could not be read"]]);
    expect(logs.filter((l) => l.event === 'webhook.delivery_retrying')).toEqual([
      expect.objectContaining({ endpoint: 'hook', error: "the message's files could not be read" }),
    ]);
  });
});
