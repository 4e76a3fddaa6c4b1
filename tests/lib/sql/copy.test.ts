import { describe, expect, test } from 'vitest';
import { createLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { copyStore, parseDbArgs, reportCopy } from '../../../packages/site-forms/src/lib/sql/copy.ts';
import { numbered } from '../../../packages/site-forms/src/lib/sql/postgres.ts';
import type { Sql } from '../../../packages/site-forms/src/lib/sql/sql.ts';
import { createDatabaseState, describeDatabaseError } from '../../../packages/site-forms/src/lib/sql/state.ts';
import { testEngines } from '../../support/stores.ts';

const message = (name: string) => ({ name, email: `${name.toLowerCase()}@example.org`, message: `Hello from ${name}, at length.`, honeypot: '' });

describe('copying SQLite into PostgreSQL, in process', () => {
  const [sqlite, postgresql] = testEngines();
  test.skipIf(!postgresql!.available)('copies once, keeps ids, and counts what it did each time', async () => {
    const { store: from } = await sqlite!.open();
    const { store: to } = await postgresql!.open();
    const file = {
      id: 'Zm9vYmFyYmF6cXV4cXV1eDEy',
      field: 'photos',
      name: 'front.png',
      size: 68,
      type: 'image/png',
      storageKey: '2026-11/Zm9vYmFyYmF6cXV4cXV1eDEy',
    };
    const { id } = await from.submissions.receive({ ...message('Ada'), held: undefined, files: [file] });
    await from.outbox.markFailed(id, new Date('2026-05-01T08:00:00.000Z'), '550');
    await from.subscribers.add('ada@example.org', new Date('2026-01-01T00:00:00.000Z'));
    await expect(copyStore(from.sql, to.sql)).resolves.toEqual({
      ok: true,
      messages: { source: 1, copied: 1, target: 1 },
      history: { source: 1, copied: 1, target: 1 },
      subscribers: { source: 1, copied: 1, target: 1 },
      files: { source: 1, copied: 1, target: 1 },
    });
    await expect(to.files.filesOf(id)).resolves.toEqual([{ ...file, submissionId: id, createdAt: expect.any(String) }]);
    await to.submissions.save(message('Bob'));
    await expect(copyStore(from.sql, to.sql)).resolves.toEqual({
      ok: true,
      messages: { source: 1, copied: 0, target: 2 },
      history: { source: 1, copied: 0, target: 1 },
      subscribers: { source: 1, copied: 0, target: 1 },
      files: { source: 1, copied: 0, target: 1 },
    });
    await expect(to.outbox.find(id)).resolves.toMatchObject({ status: 'failed', lastError: '550', name: 'Ada' });
  });

  test.skipIf(!postgresql!.available)('refuses a database where another message has the same id, and copies nothing', async () => {
    const { store: from } = await sqlite!.open();
    const { store: to } = await postgresql!.open();
    await from.submissions.save(message('Ada'));
    await from.subscribers.add('ada@example.org', new Date());
    await to.submissions.save(message('Zed'));
    await expect(copyStore(from.sql, to.sql)).resolves.toEqual({
      ok: false,
      problem: 'PostgreSQL already holds another message with id 1: copy into an empty database, or the one this file was copied into before.',
    });
    await expect(to.subscribers.list()).resolves.toEqual([]);
  });
  // A message as SQLite holds it, written with the test's own values, so a clash can differ in one column only.
  const insertMessage = (sql: Sql, id: number, createdAt: string, email: string) =>
    sql.run("INSERT INTO submissions (id, created_at, name, email, message) VALUES (?, ?, 'Ada', ?, 'Hello there, at length.')", [id, createdAt, email]);
  const insertAttempt = (sql: Sql, id: number, submission: number, at: string) =>
    sql.run("INSERT INTO delivery_attempts (id, submission_id, attempted_at, outcome, error) VALUES (?, ?, ?, 'failed', '550')", [id, submission, at]);
  const refusedMessage = 'PostgreSQL already holds another message with id 1: copy into an empty database, or the one this file was copied into before.';

  test.skipIf(!postgresql!.available)('another message under the same id differs in one column only: its address, or its time; both are refused', async () => {
    const { store: from } = await sqlite!.open();
    await insertMessage(from.sql, 1, '2026-05-01T08:00:00.000Z', 'ada@example.org');
    const { store: sameTime } = await postgresql!.open();
    await insertMessage(sameTime.sql, 1, '2026-05-01T08:00:00.000Z', 'zed@example.org');
    await expect(copyStore(from.sql, sameTime.sql)).resolves.toEqual({ ok: false, problem: refusedMessage });
    const { store: sameAddress } = await postgresql!.open();
    await insertMessage(sameAddress.sql, 1, '2026-05-01T08:00:00.001Z', 'ada@example.org');
    await expect(copyStore(from.sql, sameAddress.sql)).resolves.toEqual({ ok: false, problem: refusedMessage });
  });

  test.skipIf(!postgresql!.available)(
    'a history entry the service wrote after an earlier copy, under an id SQLite used since: refused, and nothing of this copy stored',
    async () => {
      const { store: from } = await sqlite!.open();
      const { store: to } = await postgresql!.open();
      await insertMessage(from.sql, 1, '2026-05-01T08:00:00.000Z', 'ada@example.org');
      await insertAttempt(from.sql, 1, 1, '2026-05-01T08:00:01.000Z');
      await expect(copyStore(from.sql, to.sql)).resolves.toMatchObject({ ok: true, history: { source: 1, copied: 1, target: 1 } });
      // Both sides went on: PostgreSQL recorded attempt 2 at one time, the old SQLite file another attempt 2.
      await insertAttempt(to.sql, 2, 1, '2026-05-01T09:00:00.000Z');
      await insertAttempt(from.sql, 2, 1, '2026-05-01T09:30:00.000Z');
      await from.subscribers.add('ada@example.org', new Date('2026-01-01T00:00:00.000Z'));
      await expect(copyStore(from.sql, to.sql)).resolves.toEqual({
        ok: false,
        problem: 'PostgreSQL already holds another history entry with id 2: copy into an empty database, or the one this file was copied into before.',
      });
      await expect(to.outbox.history(1)).resolves.toEqual([
        { at: '2026-05-01T08:00:01.000Z', outcome: 'failed', error: '550' },
        { at: '2026-05-01T09:00:00.000Z', outcome: 'failed', error: '550' },
      ]);
      await expect(to.subscribers.list()).resolves.toEqual([]);
    },
  );

  test.skipIf(!postgresql!.available)(
    'a row gone from PostgreSQL between the copy and its check (the service erased it meanwhile): the copy says so',
    async () => {
      const { store: from } = await sqlite!.open();
      const { store: to } = await postgresql!.open();
      await from.subscribers.add('ada@example.org', new Date('2026-01-01T00:00:00.000Z'));
      await from.subscribers.add('bob@example.org', new Date('2026-01-02T00:00:00.000Z'));
      // The target as the running service uses it: its erasure lands right after the copy's commit.
      const erasedMeanwhile: Sql = {
        ...to.sql,
        transaction: async (work, options) => {
          const result = await to.sql.transaction(work, options);
          await to.subscribers.remove('bob@example.org');
          return result;
        },
      };
      await expect(copyStore(from.sql, erasedMeanwhile)).resolves.toEqual({ ok: false, problem: '1 rows of subscribers are not in PostgreSQL after the copy' });
    },
  );
});

describe('reading the arguments of npm run db', () => {
  test.each([
    [['copy', '--to', 'postgres://u:p@db:5432/forms'], { name: 'copy', to: 'postgres://u:p@db:5432/forms' }],
    [['copy', '--to=postgresql://db/forms'], { name: 'copy', to: 'postgresql://db/forms' }],
    [['copy', '--to', 'POSTGRES://db/forms'], { name: 'copy', to: 'POSTGRES://db/forms' }],
    [['help'], { name: 'help' }],
    [['--help'], { name: 'help' }],
    [['-h'], { name: 'help' }],
  ])('%j is %j', (args, command) => {
    expect(parseDbArgs(args)).toEqual({ ok: true, command });
  });

  const needsUrl = 'copy needs --to and a PostgreSQL URL, such as --to postgres://user:password@127.0.0.1:5432/forms';
  test.each([
    [[], 'No command given.'],
    [['cpoy'], 'Unknown command: cpoy'],
    [['copy'], needsUrl],
    [['copy', '--to'], needsUrl],
    [['copy', '--to='], needsUrl],
    [['copy', 'postgres://db/forms'], needsUrl],
    [['copy', '--to', 'mysql://db/forms'], needsUrl],
    [['copy', '--to', 'mypostgres://db/forms'], needsUrl],
    [['copy', '--to', 'postgres:///forms'], needsUrl],
    [['copy', '--to', 'postgres://[::1/forms'], needsUrl],
    [['copy', '--to', 'postgres://db/forms', 'now'], 'Unexpected argument: now'],
    [['copy', '--to=postgres://db/forms', 'now'], 'Unexpected argument: now'],
  ])('%j is a usage error: %s', (args, problem) => {
    expect(parseDbArgs(args)).toEqual({ ok: false, problem });
  });
});

describe('what npm run db prints', () => {
  test('the counts, aligned, and what to do next', () => {
    let out = '';
    let err = '';
    const code = reportCopy(
      {
        ok: true,
        messages: { source: 12, copied: 2, target: 14 },
        history: { source: 30, copied: 5, target: 30 },
        subscribers: { source: 0, copied: 0, target: 0 },
        files: { source: 3, copied: 3, target: 3 },
      },
      (t) => (out += t),
      (t) => (err += t),
    );
    expect({ code, err }).toEqual({ code: 0, err: '' });
    expect(out).toBe(
      'Copied, and checked that every row of SQLite is in PostgreSQL:\n' +
        '  messages              12 in SQLite,       2 copied now,      14 in PostgreSQL\n' +
        '  delivery history      30 in SQLite,       5 copied now,      30 in PostgreSQL\n' +
        '  subscribers            0 in SQLite,       0 copied now,       0 in PostgreSQL\n' +
        '  files                  3 in SQLite,       3 copied now,       3 in PostgreSQL\n' +
        'Next: set DATABASE_URL to this URL and restart the server.\n',
    );
  });

  test('a refusal: exit 1, the reason on stderr, nothing on stdout', () => {
    let out = '';
    let err = '';
    expect(
      reportCopy(
        { ok: false, problem: 'the reason' },
        (t) => (out += t),
        (t) => (err += t),
      ),
    ).toBe(1);
    expect({ out, err }).toEqual({ out: '', err: 'Nothing was copied: the reason\n' });
  });
});

describe('the pieces under the store', () => {
  test.each([
    ['SELECT 1', 'SELECT 1'],
    ['SELECT ? + ?', 'SELECT $1 + $2'],
    ['UPDATE t SET a = ?, b = ? WHERE id = ?', 'UPDATE t SET a = $1, b = $2 WHERE id = $3'],
  ])('%s is %s for PostgreSQL', (sql, expected) => {
    expect(numbered(sql)).toBe(expected);
  });

  test.each([
    [new Error('connect ECONNREFUSED 127.0.0.1:5432'), 'Error: connect ECONNREFUSED 127.0.0.1:5432'],
    [new AggregateError([new Error('connect ECONNREFUSED ::1:5432')], ''), 'AggregateError: connect ECONNREFUSED ::1:5432'],
    [Object.assign(new Error(''), { code: 'ECONNRESET' }), 'Error: ECONNRESET'],
    [new Error(''), 'Error: no message'],
    [new Error('first line\n    at somewhere'), 'Error: first line'],
    [new AggregateError([], ''), 'AggregateError: no message'],
    [Object.assign(new Error(''), { code: 57 }), 'Error: no message'],
    [Object.assign(new TypeError('outer'), { code: 'EINNER' }), 'TypeError: outer'],
    ['a string', 'a string'],
  ])('%s is described as "%s"', (error, expected) => {
    expect(describeDatabaseError(error)).toBe(expected);
  });

  test('an outage is one error line and one recovery line, whatever happens in between', () => {
    const lines: Array<Record<string, unknown>> = [];
    const state = createDatabaseState('postgresql', createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }));
    state.succeeded();
    expect(state.failure).toBeUndefined();
    state.failed(new Error('terminating connection due to administrator command'));
    state.failed(new Error('terminating connection due to administrator command'));
    state.failed(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    state.failed(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    expect(state.failure).toBe('Error: terminating connection due to administrator command');
    state.succeeded();
    state.succeeded();
    expect(state.failure).toBeUndefined();
    expect(lines.map(({ time: _, ...rest }) => rest)).toEqual([
      { level: 'error', event: 'database.unavailable', database: 'PostgreSQL', error: 'Error: terminating connection due to administrator command' },
      { level: 'debug', event: 'database.still_unavailable', database: 'PostgreSQL', error: 'Error: connect ECONNREFUSED 127.0.0.1:5432' },
      { level: 'info', event: 'database.recovered', database: 'PostgreSQL' },
    ]);
  });
});
