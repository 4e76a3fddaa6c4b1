import { describe, expect, test } from 'vitest';
import type { Subscriber } from '../../../packages/site-forms/src/lib/newsletter/local.ts';
import { parseSubscribersArgs, runSubscribersCommand, SUBSCRIBERS_USAGE } from '../../../packages/site-forms/src/lib/newsletter/subscribers.ts';

async function run(command: Parameters<typeof runSubscribersCommand>[0], subscribers: Subscriber[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runSubscribersCommand(command, {
    subscribers: { add: async () => {}, remove: async () => false, list: async () => subscribers },
    out: (text) => out.push(text),
    err: (text) => err.push(text),
  });
  return { code, out: out.join(''), err: err.join('') };
}

const ADA = { email: 'ada@example.com', created: '2026-11-01T10:00:00.000Z' };
const GRACE = { email: 'grace@example.com', created: '2026-11-02T11:00:00.000Z' };

describe('npm run subscribers', () => {
  test('help prints the usage to stdout', async () => {
    await expect(run({ name: 'help' }, [])).resolves.toEqual({ code: 0, out: SUBSCRIBERS_USAGE, err: '' });
  });

  test.each([
    ['no subscribers, as CSV', 'csv', [], 'Email Address,Created\r\n', 'No subscribers in the local database yet.\n'],
    ['one subscriber, as CSV', 'csv', [ADA], 'Email Address,Created\r\nada@example.com,2026-11-01 10:00:00\r\n', 'Exported 1 subscriber.\n'],
    [
      'two subscribers, as JSON',
      'json',
      [ADA, GRACE],
      '[\n  {\n    "email": "ada@example.com",\n    "created": "2026-11-01T10:00:00.000Z"\n  },\n  {\n    "email": "grace@example.com",\n    "created": "2026-11-02T11:00:00.000Z"\n  }\n]\n',
      'Exported 2 subscribers.\n',
    ],
  ] as const)('export of %s: the file to stdout, the count to stderr', async (_, format, subscribers, out, err) => {
    await expect(run({ name: 'export', format, bom: false }, [...subscribers])).resolves.toEqual({ code: 0, out, err });
  });

  test.each([
    ['help', { ok: true, command: { name: 'help' } }],
    ['--help', { ok: true, command: { name: 'help' } }],
    ['-h', { ok: true, command: { name: 'help' } }],
  ])('%s asks for help', (arg, expected) => {
    expect(parseSubscribersArgs([arg])).toEqual(expected);
  });

  test.each([
    [['export', '--format', 'csv'], { ok: true, command: { name: 'export', format: 'csv', bom: false } }],
    [['export', '--format', 'csv', '--bom'], { ok: true, command: { name: 'export', format: 'csv', bom: true } }],
    [['export', '--format', 'csv', '--bom', 'x'], { ok: false, problem: 'Unexpected argument: x' }],
  ])('%j', (args, expected) => {
    expect(parseSubscribersArgs(args)).toEqual(expected);
  });

  test('export --bom starts the CSV with the UTF-8 mark Excel needs', async () => {
    await expect(run({ name: 'export', format: 'csv', bom: true }, [ADA])).resolves.toMatchObject({
      out: '\uFEFFEmail Address,Created\r\nada@example.com,2026-11-01 10:00:00\r\n',
    });
  });
});
