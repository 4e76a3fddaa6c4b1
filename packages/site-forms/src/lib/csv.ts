/**
 * The first characters that make a spreadsheet read a cell as a formula (OWASP, "CSV
 * Injection"): `=`, `+`, `-`, `@`, tab and carriage return.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A sign, then digits in groups separated by single spaces or dots: a phone number
 * (`+43 664 1234567`) or a number. A spreadsheet reads it as a number or as text, never runs it:
 * it names no function, no cell and no operator between its groups (decision 0148).
 */
const SIGNED_NUMBER = /^[+-]\d+(?:[ .]\d+)*$/;

/** The separators a CSV file is written with: RFC 4180's comma, or the semicolon Excel expects where the decimal mark is a comma. */
export type CsvSeparator = ',' | ';';

/**
 * One CSV field as RFC 4180 writes it: quoted when it holds the separator, a quote, CR or LF,
 * with quotes doubled; `null` and `undefined` are empty; a list is its items separated by spaces
 * (a message's spam reasons), since CSV has no lists.
 * Hint: text that a spreadsheet would run as a formula is neutralised as OWASP recommends,
 * with a single quote in front and the field quoted, so `=HYPERLINK(…)` shows as text; a phone
 * number such as `+43 664 1234567` runs nothing and is written as it is.
 */
export function csvField(value: unknown, separator: CsvSeparator = ','): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return csvField(value.join(' '), separator);
  if (typeof value === 'string' && FORMULA_START.test(value) && !SIGNED_NUMBER.test(value)) return quote(`'${value}`);
  const text = String(value);
  return /["\r\n]/.test(text) || text.includes(separator) ? quote(text) : text;
}

function quote(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/**
 * How a CSV file is written for a spreadsheet: which columns hold times, whether it starts with a
 * UTF-8 byte-order mark, its separator (a comma unless given), and the time zone its times are
 * written in (UTC without an offset unless given, as the plain export always wrote them).
 */
export type CsvOptions<K extends string> = {
  dateColumns?: readonly K[];
  byteOrderMark?: boolean;
  separator?: CsvSeparator;
  timeZone?: string | undefined;
  /** The header row's words, one per column, when they are not the columns' names (a spreadsheet's labels). */
  headers?: readonly string[];
};

/** The UTF-8 byte-order mark: Excel reads a CSV file as UTF-8 only when it starts with one. */
export const BYTE_ORDER_MARK = '\uFEFF';

/**
 * A CSV document: a header row of `columns`, then one record per row, every line ended
 * by CRLF as RFC 4180 asks (spreadsheets read it, and a field's own LF stays inside its quotes).
 * Hint: times in `dateColumns` are written `2026-11-24 14:57:13` (UTC), which Excel and
 * LibreOffice read as dates; ISO 8601's `T…Z` they read as text. With a `timeZone` they are
 * written in it, with their offset: `2026-11-24 15:57:13 +01:00`.
 */
export function toCsv<K extends string>(columns: readonly K[], rows: readonly Record<K, unknown>[], options: CsvOptions<K> = {}): string {
  const line = csvLine(columns, options);
  return (options.byteOrderMark ? BYTE_ORDER_MARK : '') + csvHeader(columns, options) + rows.map(line).join('');
}

/** The header row of a CSV document: each column's name, or its header when given. */
function csvHeader(columns: readonly string[], { separator = ',', headers = columns }: CsvOptions<string>): string {
  return `${headers.map((header) => csvField(header, separator)).join(separator)}\r\n`;
}

/** Writes one row as a CSV line, ended by CRLF, with its times as the options ask. */
function csvLine<K extends string>(columns: readonly K[], { dateColumns = [], separator = ',', timeZone }: CsvOptions<K>): (row: Record<K, unknown>) => string {
  const dates = new Set<K>(dateColumns);
  const time = timeZone === undefined ? spreadsheetTime : (value: unknown) => zonedTime(value, timeZone);
  return (row) => `${columns.map((column) => csvField(dates.has(column) ? time(row[column]) : row[column], separator)).join(separator)}\r\n`;
}

/** An ISO 8601 UTC time as `YYYY-MM-DD HH:MM:SS`; anything else as it is. */
export function spreadsheetTime(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const match = ISO_UTC.exec(value);
  return match ? `${match[1]} ${match[2]}` : value;
}

const ISO_UTC = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z$/;

/**
 * An ISO 8601 UTC time in `timeZone` (an IANA name), as `YYYY-MM-DD HH:MM:SS +hh:mm`: the offset
 * says which of an autumn night's two 02:30 it was; anything else as it is.
 */
export function zonedTime(value: unknown, timeZone: string): unknown {
  if (typeof value !== 'string' || !ISO_UTC.test(value)) return value;
  const parts = Object.fromEntries(
    zoneFormat(timeZone)
      .formatToParts(new Date(value))
      .map((part) => [part.type, part.value]),
  );
  // `longOffset` writes `GMT+01:00`, and `GMT` alone for UTC itself.
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : (parts.timeZoneName ?? '').slice(3);
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${offset}`;
}

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

function zoneFormat(timeZone: string): Intl.DateTimeFormat {
  let format = zoneFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'longOffset',
    });
    zoneFormats.set(timeZone, format);
  }
  return format;
}

/** How long a streamed export's chunks grow: small strings, which V8 allocates young and collects cheaply (decision 0147). */
export const CHUNK_CHARACTERS = 64 * 1024;

/**
 * CSV as `toCsv` writes it, in chunks of about `CHUNK_CHARACTERS`, for an export streamed from a
 * cursor: the header first, then the lines of each batch, gathered until a chunk is full.
 */
export async function* csvChunks<K extends string>(
  columns: readonly K[],
  batches: AsyncIterable<readonly Record<K, unknown>[]>,
  options: CsvOptions<K> = {},
): AsyncGenerator<string> {
  yield toCsv(columns, [], options);
  const line = csvLine(columns, options);
  yield* gathered(batches, (row) => line(row));
}

/** JSON as `JSON.stringify(rows, null, 2)` writes it, in chunks of about `CHUNK_CHARACTERS`. */
export async function* jsonChunks(batches: AsyncIterable<readonly unknown[]>): AsyncGenerator<string> {
  let first = true;
  const item = (row: unknown) => {
    const text = `${first ? '[\n' : ',\n'}  ${JSON.stringify(row, null, 2).replaceAll('\n', '\n  ')}`;
    first = false;
    return text;
  };
  yield* gathered(batches, item);
  yield first ? '[]\n' : '\n]\n';
}

/** Each row's text, gathered into chunks of about `CHUNK_CHARACTERS`; a batch's rows are let go of as they are written. */
async function* gathered<T>(batches: AsyncIterable<readonly T[]>, text: (row: T) => string): AsyncGenerator<string> {
  let parts: string[] = [];
  let size = 0;
  for await (const rows of batches) {
    for (const row of rows) {
      const part = text(row);
      parts.push(part);
      size += part.length;
      if (size >= CHUNK_CHARACTERS) {
        yield parts.join('');
        parts = [];
        size = 0;
      }
    }
  }
  if (size > 0) yield parts.join('');
}
