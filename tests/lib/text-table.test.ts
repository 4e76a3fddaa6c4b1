import { describe, expect, test } from 'vitest';
import { cutToWidth, displayWidth, formatTable } from '../../packages/site-forms/src/lib/text-table.ts';

describe('the columns a text takes in a terminal', () => {
  test.each([
    ['nothing', '', 0],
    ['plain Latin letters', 'Ada', 3],
    ['a precomposed accent', 'Zoë', 3],
    ['a combining accent', 'Zoe\u0308', 3],
    ['two combining marks on one letter', 'e\u0301\u0323', 1],
    ['a lone combining mark', '\u0301', 0],
    ['a zero-width space', 'a\u200bb', 2],
    ['a control character', 'a\u0007b', 2],
    ['an enclosing circle', 'a\u20dd', 1],
    ['a lone regional indicator', '\u{1f1eb}', 2],
    ['Chinese ideographs', '中文', 4],
    ['Japanese kana', 'ひらがなカタカナ', 16],
    ['halfwidth katakana', 'ｱｲｳ', 3],
    ['Korean syllables', '한국어', 6],
    ['Korean written as conjoining jamo', '\u1112\u1161\u11ab', 2],
    ['fullwidth Latin letters', 'ＡＢ', 4],
    ['the ideographic space', '\u3000', 2],
    ['an ideograph beyond the BMP', '𠀋', 2],
    ['an emoji', '😀', 2],
    ['an emoji with a skin tone', '👍🏽', 2],
    ['a family joined by zero-width joiners', '👩‍👩‍👧', 2],
    ['a flag', '🇫🇷', 2],
    ['a keycap', '1️⃣', 2],
    ['a heart asked to show as emoji', '❤️', 2],
    ['a heart in text style', '❤', 1],
    ['Cyrillic', 'Жанна', 5],
    ['Arabic', 'سلام', 4],
  ])('%s: %j takes %i', (_, text, width) => {
    expect(displayWidth(text)).toBe(width);
  });
});

describe('cutting a text to a width', () => {
  test.each([
    ['fits exactly', 'Ada Lovelace', 12, 'Ada Lovelace'],
    ['one column too long', 'Ada Lovelace', 11, 'Ada Lovela…'],
    ['ideographs that fit in pairs', '中文中文中文', 7, '中文中…'],
    ['an ideograph that would straddle the limit', '中文中文中文', 8, '中文中…'],
    ['an accent kept on its letter', 'Zoe\u0308 Zoe\u0308 Zoe\u0308', 4, 'Zoe\u0308…'],
    ['an emoji kept whole', 'ab👩‍👩‍👧cd', 4, 'ab…'],
    ['room for the ellipsis only', 'Ada', 1, '…'],
  ])('%s: %j in %i columns is %j', (_, text, width, cut) => {
    expect(cutToWidth(text, width)).toBe(cut);
  });
});

describe('a table', () => {
  test('aligns wide, combining and emoji characters, and cuts long cells with "…"', () => {
    const table = formatTable(
      [{ header: 'ID' }, { header: 'NAME', maxWidth: 12 }, { header: 'STATUS' }],
      [
        ['1', 'Ada Lovelace', 'sent'],
        ['22', '山田太郎', 'pending'],
        ['333', 'Zoe\u0308 😀', 'failed'],
        ['4444', 'Maximilian Alexander von Humboldt', 'sent'],
        ['5', '山田太郎山田太郎', 'sent'],
      ],
    );
    expect(table.split('\n')).toEqual([
      'ID    NAME          STATUS',
      '1     Ada Lovelace  sent',
      '22    山田太郎      pending',
      '333   Zoe\u0308 😀        failed',
      '4444  Maximilian …  sent',
      '5     山田太郎山…   sent',
      '',
    ]);
  });

  test('a heading wider than its cells sets the width, and a missing cell is blank', () => {
    expect(formatTable([{ header: 'NUMBER' }, { header: 'X' }, { header: 'Y' }], [['7'], ['8', 'ab', 'c']])).toBe('NUMBER  X   Y\n7\n8       ab  c\n');
  });
});

describe('the ends of a wide block', () => {
  test('the first and the last Hangul syllable both take two columns', () => {
    expect([displayWidth('\uac00'), displayWidth('\ud7a3'), displayWidth('\ud7a4')]).toEqual([2, 2, 1]);
  });
});
