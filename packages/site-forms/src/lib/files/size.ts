/**
 * A size as people read it: bytes, kB or MB, in powers of 1000 as operating systems show file
 * sizes, with the number in the language's own writing (`1.5 MB`, `1,5 MB`).
 */
export function formatSize(bytes: number, language: string): string {
  const [value, unit] = bytes < 1000 ? [bytes, 'B'] : bytes < 1_000_000 ? [bytes / 1000, 'kB'] : [bytes / 1_000_000, 'MB'];
  return `${new Intl.NumberFormat(language, { maximumFractionDigits: 1 }).format(value)} ${unit}`;
}
