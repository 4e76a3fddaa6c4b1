/**
 * The first characters that make a spreadsheet read a cell as a formula (OWASP, "CSV
 * Injection"): `=`, `+`, `-`, `@`, tab and carriage return.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV field as RFC 4180 writes it: quoted when it holds a comma, a quote, CR or LF,
 * with quotes doubled; `null` and `undefined` are empty; a list is its items separated by spaces
 * (a message's spam reasons), since CSV has no lists.
 * Hint: text that a spreadsheet would run as a formula is neutralised as OWASP recommends,
 * with a single quote in front and the field quoted, so `=HYPERLINK(…)` shows as text.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return csvField(value.join(' '));
  if (typeof value === 'string' && FORMULA_START.test(value)) return quote(`'${value}`);
  const text = String(value);
  return /[",\r\n]/.test(text) ? quote(text) : text;
}

function quote(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/**
 * A CSV document: a header row of `columns`, then one record per row, every line ended
 * by CRLF as RFC 4180 asks (spreadsheets read it, and a field's own LF stays inside its quotes).
 */
export function toCsv<K extends string>(columns: readonly K[], rows: readonly Record<K, unknown>[]): string {
  const line = (values: unknown[]) => `${values.map(csvField).join(',')}\r\n`;
  return line([...columns]) + rows.map((row) => line(columns.map((c) => row[c]))).join('');
}
