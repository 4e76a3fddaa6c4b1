/**
 * The intake on PostgreSQL (issue 41, item 2): a message is stored in one statement, one round
 * trip to the database, with everything the transaction of several statements stored.
 */
import pg from 'pg';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { createSubmissionMachine } from '../../../packages/site-forms/src/lib/submissions/machine.ts';
import { messageEventId } from '../../../packages/site-forms/src/lib/webhooks/events.ts';
import { testEngines } from '../../support/stores.ts';

const input = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello, I would like to know more.', held: undefined };
const file = { id: 'file-1', field: 'attachment', name: 'notes.txt', size: 12, type: 'text/plain', storageKey: 'k/file-1' };

const postgres = testEngines().find((engine) => engine.name === 'PostgreSQL')!;

describe('receiving a message on PostgreSQL', () => {
  afterEach(() => vi.restoreAllMocks());

  test.skipIf(!postgres.available)('a post with a proof, a file and its news is one statement: one round trip, no BEGIN or COMMIT', async () => {
    const { store } = await postgres.open();
    const machine = createSubmissionMachine(store.sql);
    await machine.receive(input); // the pool's first connection, outside the count
    const sent: string[] = [];
    const query = pg.Client.prototype.query;
    vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: Parameters<typeof query>) {
      const config = args[0] as string | { text: string };
      sent.push(typeof config === 'string' ? config : config.text);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query);
    await machine.receive({ ...input, proof: { id: 'nonce-1', expiresAtMs: Date.now() + 60_000 }, files: [file] });
    expect(sent).toHaveLength(1);
  });

  test.skipIf(!postgres.available)(
    'the one statement stores what the transaction did: the message, its file, its news with the id as messageEventId makes it',
    async () => {
      const { store } = await postgres.open();
      const machine = createSubmissionMachine(store.sql);
      const proof = { id: 'nonce-2', expiresAtMs: Date.now() + 60_000 };
      const first = await machine.receive({ ...input, proof, files: [file], form: 'quote', fields: { budget: '100' }, shownPerson: true });
      const replayed = await machine.receive({ ...input, proof, held: ['too-fast'], ip: '192.0.2.1', userAgent: 'curl' });
      expect(first).toEqual({ id: expect.any(Number), status: 'pending', reasons: [] });
      expect(replayed).toEqual({ id: expect.any(Number), status: 'spam', reasons: ['too-fast', 'proof-replayed'] });

      const rows = await store.sql.all<Record<string, unknown>>(
        'SELECT id, created_at, status, next_attempt_at, spam_reasons, client_ip, user_agent, form, fields, shown_person FROM submissions ORDER BY id',
      );
      const [a, b] = rows as Array<{ id: string; created_at: string } & Record<string, unknown>>;
      expect(a).toMatchObject({ status: 'pending', spam_reasons: null, client_ip: null, form: 'quote', fields: '{"budget":"100"}', shown_person: 1 });
      // Due at once by the database's clock (decision 0270): the same instant, to the clocks' step.
      expect(Math.abs(Date.parse(String(a!.next_attempt_at)) - Date.parse(a!.created_at))).toBeLessThan(5_000);
      expect(b).toMatchObject({
        status: 'spam',
        next_attempt_at: null,
        spam_reasons: '["too-fast","proof-replayed"]',
        client_ip: '192.0.2.1',
        user_agent: 'curl',
      });

      await expect(store.sql.all('SELECT id, submission_id, field, name, size, type, storage_key, position FROM files')).resolves.toEqual([
        { id: 'file-1', submission_id: a!.id, field: 'attachment', name: 'notes.txt', size: '12', type: 'text/plain', storage_key: 'k/file-1', position: 0 },
      ]);
      const events = await store.sql.all<{ id: string; type: string; data: string; created_at: string }>(
        'SELECT id, type, data, created_at FROM events ORDER BY type',
      );
      const createdAt = (row: { created_at: string }) => new Date(row.created_at).toISOString();
      expect(events).toEqual([
        {
          id: messageEventId('contact.held', { id: Number(b!.id), createdAt: createdAt(b!) }),
          type: 'contact.held',
          data: expect.any(String),
          created_at: b!.created_at,
        },
        {
          id: messageEventId('contact.received', { id: Number(a!.id), createdAt: createdAt(a!) }),
          type: 'contact.received',
          data: expect.any(String),
          created_at: a!.created_at,
        },
      ]);
      expect(JSON.parse(events[1]!.data)).toEqual({
        id: Number(a!.id),
        createdAt: createdAt(a!),
        name: 'Ada Lovelace',
        email: 'ada@example.org',
        message: 'Hello, I would like to know more.',
        form: 'quote',
        fields: { budget: '100' },
      });
      expect(Object.keys(JSON.parse(events[0]!.data))).toEqual(['id', 'createdAt', 'name', 'email', 'message', 'reasons']);
      expect(JSON.parse(events[0]!.data).reasons).toEqual(['too-fast', 'proof-replayed']);
    },
  );
});
