import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { createLogger, describeError, type LogLevel, silentLogger, limitClientLines } from '../../packages/site-forms/src/lib/log.ts';

function capture(level?: LogLevel | 'silent') {
  const lines: string[] = [];
  const logger = createLogger({ level, write: (line) => lines.push(line) });
  return { logger, lines };
}

const writeAll = (logger: ReturnType<typeof createLogger>) => {
  logger.debug('a.debug');
  logger.info('a.info');
  logger.warn('a.warn');
  logger.error('a.error');
};

describe('the log', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-22T21:30:00.000Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  test('writes one JSON line per event: time, level, event, then the fields', () => {
    const { logger, lines } = capture();
    logger.warn('contact.stored', { id: 7, outcome: 'accepted' });
    expect(lines).toEqual(['{"time":"2026-11-22T21:30:00.000Z","level":"warn","event":"contact.stored","id":7,"outcome":"accepted"}\n']);
  });

  test.each([
    ['no fields', undefined, '{"time":"2026-11-22T21:30:00.000Z","level":"info","event":"a.b"}\n'],
    ['fields left out when undefined', { a: undefined, b: 1 }, '{"time":"2026-11-22T21:30:00.000Z","level":"info","event":"a.b","b":1}\n'],
    // A field cannot rename the line: a warning about an event once came out under that event's name.
    ['a field named level', { level: 'mine', id: 2 }, '{"time":"2026-11-22T21:30:00.000Z","level":"info","event":"a.b","id":2}\n'],
    ['a field named time', { time: 'then' }, '{"time":"2026-11-22T21:30:00.000Z","level":"info","event":"a.b"}\n'],
    ['a field named event', { event: 'other' }, '{"time":"2026-11-22T21:30:00.000Z","level":"info","event":"a.b"}\n'],
    ['quotes in the text', { note: 'say "hi"\n' }, '{"time":"2026-11-22T21:30:00.000Z","level":"info","event":"a.b","note":"say \\"hi\\"\\n"}\n'],
  ])('writes %s as the same JSON line', (_, fields, expected) => {
    const { logger, lines } = capture();
    logger.info('a.b', fields);
    expect(lines).toEqual([expected]);
  });

  test('an event name with a quote stays one JSON line', () => {
    const { logger, lines } = capture();
    logger.info('a"b');
    expect(lines).toEqual(['{"time":"2026-11-22T21:30:00.000Z","level":"info","event":"a\\"b"}\n']);
  });

  test.each([
    ['debug', ['a.debug', 'a.info', 'a.warn', 'a.error']],
    ['info', ['a.info', 'a.warn', 'a.error']],
    ['warn', ['a.warn', 'a.error']],
    ['error', ['a.error']],
    ['silent', []],
  ] as const)('at level %s it writes %j', (level, events) => {
    const { logger, lines } = capture(level);
    writeAll(logger);
    expect(lines.map((line) => JSON.parse(line).event)).toEqual(events);
  });

  test('writes from info up when no level is given', () => {
    const { logger, lines } = capture(undefined);
    writeAll(logger);
    expect(lines.map((line) => JSON.parse(line).level)).toEqual(['info', 'warn', 'error']);
  });

  test('writes to stdout unless told otherwise', () => {
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    createLogger().error('server.failed');
    expect(write).toHaveBeenCalledWith('{"time":"2026-11-22T21:30:00.000Z","level":"error","event":"server.failed"}\n');
  });

  test('the silent logger writes nothing, not even errors', () => {
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    writeAll(silentLogger);
    expect(write).not.toHaveBeenCalled();
  });

  test.each([
    ['an error: its name and message, no stack', new TypeError('fetch failed'), 'TypeError: fetch failed'],
    ['an error of our own kind', Object.assign(new Error('no route'), { name: 'RouteError' }), 'RouteError: no route'],
    [
      'an error whose toString tells more, still only its name and message',
      Object.assign(new Error('boom'), { toString: () => 'Error: boom\n    at secret.ts:1' }),
      'Error: boom',
    ],
    ['a string thrown as it is', 'socket hang up', 'socket hang up'],
    ['anything else, as a string', 42, '42'],
  ])('describes %s', (_, error, text) => {
    expect(describeError(error)).toBe(text);
  });
});

describe('lines about clients cannot fill a disk', () => {
  const setup = (limits: Partial<Parameters<typeof limitClientLines>[1]> = {}) => {
    let now = 1_000_000;
    const lines: Array<Record<string, unknown>> = [];
    const base = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const logger = limitClientLines(base, { intervalMs: 60_000, maxPerSecond: 5, maxKeys: 100, clock: () => now, ...limits });
    return { logger, lines, advance: (ms: number) => (now += ms), events: () => lines.map((l) => l.event) };
  };

  test('one client repeating an event within a minute: one line, then one line with the count', () => {
    const { logger, lines, advance, events } = setup();
    for (let i = 0; i < 1_000; i++) logger.warn('request.near_miss', { method: 'POST', path: `/api/x${i}`, client: 'c0ffee' });
    expect(events()).toEqual(['request.near_miss']);
    advance(60_000);
    logger.flush();
    expect(lines.at(-1)).toMatchObject({ level: 'warn', event: 'log.repeated', of: 'request.near_miss', client: 'c0ffee', repeats: 999, sinceMs: 60_000 });
  });

  test('another status or another client is another line', () => {
    const { logger, events } = setup();
    logger.info('form.request', { status: 400, client: 'a' });
    logger.info('form.request', { status: 429, client: 'a' });
    logger.info('form.request', { status: 400, client: 'b' });
    logger.info('form.request', { status: 400, client: 'a' });
    expect(events()).toEqual(['form.request', 'form.request', 'form.request']);
  });

  test('many clients at once: at most maxPerSecond lines a second, the rest counted in one line', () => {
    const { logger, lines, advance, events } = setup();
    for (let i = 0; i < 500; i++) logger.warn('request.near_miss', { client: `client-${i}` });
    expect(events()).toEqual(Array(5).fill('request.near_miss'));
    advance(1_000);
    logger.flush();
    expect(lines.at(-1)).toMatchObject({ level: 'warn', event: 'log.dropped', lines: 495 });
  });

  test('a text a client controls is cut to 200 characters; the server’s own lines pass untouched', () => {
    const { logger, lines } = setup();
    logger.warn('request.near_miss', { path: `/${'a'.repeat(5_000)}`, client: 'c' });
    logger.error('api.unexpected_error', { error: 'x'.repeat(300) });
    logger.error('api.unexpected_error', { error: 'x'.repeat(300) });
    expect((lines[0]!.path as string).length).toBe(200);
    expect(lines.slice(1).map((l) => (l.error as string).length)).toEqual([300, 300]);
  });

  test('past maxKeys clients remembered, their counts are written and forgotten: memory stays bounded', () => {
    const { logger, events } = setup({ maxPerSecond: 1_000, maxKeys: 3 });
    for (const client of ['a', 'b', 'c']) {
      logger.info('form.request', { client });
      logger.info('form.request', { client });
    }
    logger.info('form.request', { client: 'd' });
    expect(events()).toEqual(['form.request', 'form.request', 'form.request', 'log.repeated', 'log.repeated', 'log.repeated', 'form.request']);
  });

  test('the count line names the status when the lines had one, and a single line is summed up by nothing', () => {
    const { logger, lines, advance } = setup();
    logger.info('form.request', { status: 400, client: 'a' });
    logger.info('form.request', { status: 400, client: 'a' });
    logger.info('form.request', { client: 'b' });
    logger.info('form.request', { client: 'b' });
    logger.info('form.request', { client: 'c' });
    advance(60_000);
    logger.flush();
    expect(lines.slice(3).map(({ time: _, ...rest }) => rest)).toEqual([
      { level: 'info', event: 'log.repeated', of: 'form.request', client: 'a', status: 400, repeats: 1, sinceMs: 60_000 },
      { level: 'info', event: 'log.repeated', of: 'form.request', client: 'b', repeats: 1, sinceMs: 60_000 },
    ]);
  });

  test('a line after the interval is written again, the count of the earlier ones first, without a flush', () => {
    const { logger, lines, advance } = setup();
    logger.debug('form.request', { client: 'a', attempt: 3 });
    logger.debug('form.request', { client: 'a', attempt: 3 });
    advance(60_000);
    logger.debug('form.request', { client: 'a', attempt: 3 });
    expect(lines.map(({ level, event, attempt }) => [level, event, attempt])).toEqual([
      ['debug', 'form.request', 3],
      ['debug', 'log.repeated', undefined],
      ['debug', 'form.request', 3],
    ]);
  });

  test('the budget of a second starts again exactly a second later, and the dropped line says why', () => {
    const { logger, lines, advance, events } = setup();
    for (let i = 0; i < 6; i++) logger.warn('request.near_miss', { client: `client-${i}` });
    advance(1_000);
    logger.warn('request.near_miss', { client: 'client-late' });
    expect(events()).toEqual([...Array(5).fill('request.near_miss'), 'log.dropped', 'request.near_miss']);
    expect(lines[5]).toMatchObject({ lines: 1, note: 'more than 5 lines a second about clients' });
  });

  test('counts are written by the logger itself once the interval is over, with no more lines to write', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const base = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const logger = limitClientLines(base, { intervalMs: 50, maxPerSecond: 5, maxKeys: 100 });
    logger.warn('request.near_miss', { client: 'c0ffee' });
    logger.warn('request.near_miss', { client: 'c0ffee' });
    await vi.waitFor(() => expect(lines.map((line) => line.event)).toEqual(['request.near_miss', 'log.repeated']), { timeout: 600, interval: 10 });
  });
});
