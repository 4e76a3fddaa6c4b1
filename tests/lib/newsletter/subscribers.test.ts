import { describe, expect, test } from 'vitest';
import { parseSubscribersArgs, subscribersToCsv } from '../../../packages/site-forms/src/lib/newsletter/subscribers.ts';

describe('npm run subscribers arguments', () => {
  test.each([
    [['export', '--format', 'csv'], { name: 'export', format: 'csv', bom: false }],
    [['export', '--format', 'json'], { name: 'export', format: 'json', bom: false }],
    [['export', '--format=csv'], { name: 'export', format: 'csv', bom: false }],
    [['help'], { name: 'help' }],
    [['--help'], { name: 'help' }],
  ])('reads %j', (args, command) => {
    expect(parseSubscribersArgs(args)).toEqual({ ok: true, command });
  });

  test.each([
    [[], 'No command given.'],
    [['export'], 'export needs --format csv or --format json.'],
    [['export', '--format'], 'export needs --format csv or --format json.'],
    [['export', '--format', 'xml'], 'export needs --format csv or --format json.'],
    [['export', '--format', 'csv', 'extra'], 'Unexpected argument: extra'],
    [['import'], 'Unknown command: import'],
  ])('refuses %j, saying why', (args, problem) => {
    expect(parseSubscribersArgs(args)).toEqual({ ok: false, problem });
  });
});

describe('the CSV for Mailchimp', () => {
  test('has the header Mailchimp maps, CRLF line ends, and quotes what RFC 4180 says to', () => {
    expect(
      subscribersToCsv([
        { email: 'ada@example.com', created: '2026-01-01T00:00:00.000Z' },
        { email: '"a,b"@example.com', created: '2026-01-02T00:00:00.000Z' },
      ]),
    ).toBe('Email Address,Created\r\nada@example.com,2026-01-01 00:00:00\r\n"""a,b""@example.com",2026-01-02 00:00:00\r\n');
  });

  test('an address a spreadsheet would read as a formula is exported as text', () => {
    expect(subscribersToCsv([{ email: '=1+2@example.com', created: '2026-01-01T00:00:00.000Z' }])).toBe(
      `Email Address,Created\r\n"'=1+2@example.com",2026-01-01 00:00:00\r\n`,
    );
  });

  test('an empty list is the header alone', () => {
    expect(subscribersToCsv([])).toBe('Email Address,Created\r\n');
  });
});
