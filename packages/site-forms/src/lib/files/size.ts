/** One formatter per language: making one is far dearer than using it, and a post with files asks on every request (its 413's text). */
const FORMATS = new Map<string, Intl.NumberFormat>();

/**
 * A size as people read it: bytes, kB or MB, in powers of 1000 as operating systems show file
 * sizes, with the number in the language's own writing (`1.5 MB`, `1,5 MB`).
 */
export function formatSize(bytes: number, language: string): string {
  const [value, unit] = bytes < 1000 ? [bytes, 'B'] : bytes < 1_000_000 ? [bytes / 1000, 'kB'] : [bytes / 1_000_000, 'MB'];
  let format = FORMATS.get(language);
  if (!format) {
    format = new Intl.NumberFormat(language, { maximumFractionDigits: 1 });
    FORMATS.set(language, format);
  }
  return `${format.format(value)} ${unit}`;
}
