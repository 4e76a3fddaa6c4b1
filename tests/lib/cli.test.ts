import { describe, expect, test } from 'vitest';
import { readFormatOption } from '../../src/lib/cli.ts';

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
