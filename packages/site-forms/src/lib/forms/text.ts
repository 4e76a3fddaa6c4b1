/**
 * Normalises what a visitor typed before it is checked: NFC, so that "é" typed two
 * ways counts the same, and trimmed, so that surrounding spaces never count.
 */
export function cleanText(value: string): string {
  return value.normalize('NFC').trim();
}

/**
 * Takes out of a one-line text the characters that show as nothing and hide or join what is
 * there: tag characters (U+E0000–U+E007F, "ASCII smuggling"), zero-width space, non-joiner and
 * joiner, word joiner and the byte order mark (docs/decisions/0150-invisible-characters-in-names.md).
 * Hint: stripped rather than refused, since they arrive pasted from other pages more often than
 * typed; "Ann" with hidden text behind it is kept as the "Ann" every reader sees.
 */
export function withoutInvisible(value: string): string {
  return value.replace(HIDDEN, '');
}

const HIDDEN = /[\u200b-\u200d\u2060\ufeff\u{e0000}-\u{e007f}]/gu;

/**
 * Counts characters as people do: Unicode code points, not UTF-16 units, and a line break
 * as one character even when it arrives as CR LF.
 * Hint: an emoji such as 😀 is one character here, where `"😀".length` is 2; a browser counts
 * a line break as one for `maxlength` but sends it as CR LF, so a full textarea would
 * otherwise be refused.
 */
export function characterCount(value: string): number {
  // Without CR and surrogates (most text) every UTF-16 unit is one character: no walk needed.
  if (!/[\r\ud800-\udfff]/.test(value)) return value.length;
  let count = 0;
  for (const _ of value.replaceAll('\r\n', '\n')) count++;
  return count;
}

/**
 * Whether the text holds a character that has no business in a one-line field:
 * C0 and C1 controls (CR, LF, NUL, ...), line and paragraph separators, and the
 * bidirectional overrides and isolates that can disguise text.
 */
export function hasControlCharacters(value: string): boolean {
  return /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/u.test(value);
}

/**
 * Whether a multi-line text holds a control character other than tab and line breaks.
 * Hint: a message may span lines, so CR and LF are allowed there, NUL and the rest are not.
 */
export function hasControlCharactersInMultiline(value: string): boolean {
  return /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u.test(value);
}

/**
 * Counts the characters a reader can see: not spaces, not marks that only combine with the
 * one before, not format or default-ignorable characters such as U+200B ZERO WIDTH SPACE.
 * Hint: two zero-width spaces made a "name" of two characters that showed as nothing.
 */
export function visibleCount(value: string): number {
  let count = 0;
  for (const character of value) if (!INVISIBLE.test(character)) count++;
  return count;
}

const INVISIBLE = /^[\p{White_Space}\p{M}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]$/u;
