import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { createLogger, describeError, type LogLevel, silentLogger } from '../../src/lib/log.ts';

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
    ['a field named level', { level: 'mine', id: 2 }, '{"time":"2026-11-22T21:30:00.000Z","level":"mine","event":"a.b","id":2}\n'],
    ['a field named time', { time: 'then' }, '{"time":"then","level":"info","event":"a.b"}\n'],
    ['a field named event', { event: 'other' }, '{"time":"2026-11-22T21:30:00.000Z","level":"info","event":"other"}\n'],
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
