import { describe, expect, test } from 'vitest';
import { csvField, toCsv } from '../../src/lib/csv.ts';

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
  ])('a field with %s', (_, value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

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
