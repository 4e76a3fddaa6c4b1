import { Writable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { readFormatOption, streamOut } from '../../packages/site-forms/src/lib/cli.ts';

describe('the --format option of the command-line tools', () => {
  test.each([
    ['--format csv', ['--format', 'csv'], { ok: true, format: 'csv', rest: [] }],
    ['--format json', ['--format', 'json'], { ok: true, format: 'json', rest: [] }],
    ['--format=csv', ['--format=csv'], { ok: true, format: 'csv', rest: [] }],
    ['--format=json with an extra argument left over', ['--format=json', 'extra'], { ok: true, format: 'json', rest: ['extra'] }],
    ['--format csv with an extra argument left over', ['--format', 'csv', 'extra'], { ok: true, format: 'csv', rest: ['extra'] }],
    ['no option', [], { ok: false, problem: 'export needs --format csv or --format json.' }],
    ['--format without a value', ['--format'], { ok: false, problem: 'export needs --format csv or --format json.' }],
    ['another format', ['--format', 'xml'], { ok: false, problem: 'export needs --format csv or --format json.' }],
    ['another option of the same length', ['--output=csv'], { ok: false, problem: 'export needs --format csv or --format json.' }],
    ['the format in capitals', ['--format=CSV'], { ok: false, problem: 'export needs --format csv or --format json.' }],
  ])('%s', (_, args, expected) => {
    expect(readFormatOption(args)).toEqual(expected);
  });

  // The exit codes (0 done, 1 nothing there or not done, 2 a usage error) are read from the
  // commands themselves, run as processes, in tests/cli/.
});

describe('writing to a slow stream', () => {
  /** A stream whose buffer holds one byte and whose writes finish when the test says. */
  function slow(emitClose = true) {
    const finish: Array<() => void> = [];
    const stream = new Writable({ highWaterMark: 1, emitClose, write: (_chunk, _encoding, done) => void finish.push(() => done()) });
    const listeners = () => ['drain', 'close', 'error'].map((event) => stream.listenerCount(event));
    return { stream, finish, listeners };
  }

  test('a full buffer is waited for until it drains, and the wait leaves no listener behind', async () => {
    const { stream, finish, listeners } = slow();
    const write = streamOut(stream);
    const waiting = write('some lines');
    expect(waiting).toBeInstanceOf(Promise);
    expect(listeners()).toEqual([1, 1, 1]);
    finish.shift()!();
    await waiting;
    expect(listeners()).toEqual([0, 0, 0]);
  });

  test('a stream closed while waited for ends the wait', async () => {
    const { stream } = slow();
    const waiting = streamOut(stream)('some lines');
    stream.destroy();
    await expect(waiting).resolves.toBeUndefined();
  });

  test('a stream that fails while waited for ends the wait, without closing', async () => {
    const { stream } = slow(false);
    const waiting = streamOut(stream)('some lines');
    stream.destroy(new Error('write EPIPE'));
    await expect(waiting).resolves.toBeUndefined();
  });
});
