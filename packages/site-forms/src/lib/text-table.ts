// Terminals give most characters one column, East Asian wide and fullwidth characters and
// emoji two, and combining marks none; counting UTF-16 units or code points misaligns a
// table as soon as a visitor's name holds any of them.

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

// A string property of the `v` flag, built at run time so that the type checker's target
// (ES2022) does not refuse the literal: Node 24 knows it.
// Stryker disable next-line Regex: its mutant \P{RGI_Emoji} is a syntax error under /v, which would stop the whole module from loading.
const RGI_EMOJI = /^\p{RGI_Emoji}$/v;
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}\p{Cc}]/u;
const EMOJI_PRESENTATION = /^\p{Emoji_Presentation}/u;

/** East Asian Wide and Fullwidth blocks (Unicode's EastAsianWidth.txt, W and F), as [first, last] code points. */
const WIDE: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f], // Hangul Jamo, leading consonants
  [0x2329, 0x232a], // angle brackets
  [0x2e80, 0x303e], // CJK radicals, Kangxi radicals, ideographic description, CJK symbols and punctuation
  [0x3041, 0x33ff], // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, Kanbun, enclosed CJK, CJK compatibility
  [0x3400, 0x4dbf], // CJK extension A
  [0x4e00, 0x9fff], // CJK unified ideographs
  [0xa000, 0xa4cf], // Yi
  [0xa960, 0xa97f], // Hangul Jamo extended A
  [0xac00, 0xd7a3], // Hangul syllables
  [0xf900, 0xfaff], // CJK compatibility ideographs
  [0xfe10, 0xfe19], // vertical forms
  [0xfe30, 0xfe6f], // CJK compatibility forms, small form variants
  [0xff00, 0xff60], // fullwidth forms
  [0xffe0, 0xffe6], // fullwidth signs
  [0x16fe0, 0x18cff], // ideographic symbols, Tangut, Khitan
  [0x1aff0, 0x1b2ff], // Kana supplement and extensions, Nushu
  [0x1f200, 0x1f2ff], // enclosed ideographic supplement
  [0x20000, 0x3fffd], // CJK extensions B and later
];

function isWide(codePoint: number): boolean {
  return WIDE.some(([first, last]) => codePoint >= first && codePoint <= last);
}

function graphemeWidth(grapheme: string): number {
  // Flags, keycaps, skin tones and ZWJ families are one emoji each, however many code points.
  if (RGI_EMOJI.test(grapheme)) return 2;
  if (ZERO_WIDTH.test(grapheme)) return 0;
  if (EMOJI_PRESENTATION.test(grapheme) || isWide(grapheme.codePointAt(0) ?? 0)) return 2;
  return 1;
}

/** The number of terminal columns `text` takes: 2 for wide characters and emoji, 0 for combining marks. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const { segment } of graphemes.segment(text)) width += graphemeWidth(segment);
  return width;
}

/**
 * `text` cut to at most `maxWidth` columns, ending in "…" when something was cut.
 * Hint: cuts between graphemes only, so an accent stays on its letter and an emoji stays whole;
 * a wide character that would straddle the limit goes, leaving the text a column short.
 */
export function cutToWidth(text: string, maxWidth: number): string {
  if (displayWidth(text) <= maxWidth) return text;
  let kept = '';
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    const next = graphemeWidth(segment);
    if (width + next > maxWidth - 1) break;
    kept += segment;
    width += next;
  }
  return `${kept}…`;
}

/** One column of a table: its heading and, optionally, the most columns a cell may take before it is cut. */
export type TableColumn = { header: string; maxWidth?: number };

/** Lays out rows under their headings in columns two spaces apart, aligned by display width, one line each. */
export function formatTable(columns: readonly TableColumn[], rows: readonly (readonly string[])[]): string {
  const cells = [columns.map((c) => c.header), ...rows.map((row) => columns.map((c, i) => cutToWidth(row[i] ?? '', c.maxWidth ?? Number.POSITIVE_INFINITY)))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => displayWidth(line[i] ?? ''))));
  const layout = (line: string[]) =>
    line
      .map((cell, i) => cell + ' '.repeat((widths[i] ?? 0) - displayWidth(cell)))
      .join('  ')
      .trimEnd();
  return `${cells.map(layout).join('\n')}\n`;
}
