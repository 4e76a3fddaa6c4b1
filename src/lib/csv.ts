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

/** How a CSV file is written for a spreadsheet: which columns hold times, and whether it starts with a UTF-8 byte-order mark. */
export type CsvOptions<K extends string> = { dateColumns?: readonly K[]; byteOrderMark?: boolean };

/** The UTF-8 byte-order mark: Excel reads a CSV file as UTF-8 only when it starts with one. */
export const BYTE_ORDER_MARK = '\uFEFF';

/**
 * A CSV document: a header row of `columns`, then one record per row, every line ended
 * by CRLF as RFC 4180 asks (spreadsheets read it, and a field's own LF stays inside its quotes).
 * Hint: times in `dateColumns` are written `2026-11-24 14:57:13` (UTC), which Excel and
 * LibreOffice read as dates; ISO 8601's `T…Z` they read as text.
 */
export function toCsv<K extends string>(columns: readonly K[], rows: readonly Record<K, unknown>[], options: CsvOptions<K> = {}): string {
  const dates = new Set<K>(options.dateColumns ?? []);
  const line = (values: unknown[]) => `${values.map(csvField).join(',')}\r\n`;
  const cell = (row: Record<K, unknown>, column: K) => (dates.has(column) ? spreadsheetTime(row[column]) : row[column]);
  return (options.byteOrderMark ? BYTE_ORDER_MARK : '') + line([...columns]) + rows.map((row) => line(columns.map((c) => cell(row, c)))).join('');
}

/** An ISO 8601 UTC time as `YYYY-MM-DD HH:MM:SS`; anything else as it is. */
export function spreadsheetTime(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z$/.exec(value);
  return match ? `${match[1]} ${match[2]}` : value;
}

/**
 * CSV as `toCsv` writes it, one chunk per batch of rows: the header first, then each batch's
 * lines, for an export streamed from a cursor.
 */
export async function* csvChunks<K extends string>(
  columns: readonly K[],
  batches: AsyncIterable<readonly Record<K, unknown>[]>,
  options: CsvOptions<K> = {},
): AsyncGenerator<string> {
  yield toCsv(columns, [], options);
  const rest = { ...options, byteOrderMark: false };
  for await (const rows of batches) yield toCsv(columns, rows, rest).slice(toCsv(columns, [], rest).length);
}

/** JSON as `JSON.stringify(rows, null, 2)` writes it, one chunk per batch of rows. */
export async function* jsonChunks(batches: AsyncIterable<readonly unknown[]>): AsyncGenerator<string> {
  let first = true;
  for await (const rows of batches) {
    if (rows.length === 0) continue;
    const items = rows.map((row) => `  ${JSON.stringify(row, null, 2).replaceAll('\n', '\n  ')}`).join(',\n');
    yield `${first ? '[\n' : ',\n'}${items}`;
    first = false;
  }
  yield first ? '[]\n' : '\n]\n';
}
