import type { FormScope } from '../access/permissions.ts';
import { csvChunks, jsonChunks, toCsv } from '../csv.ts';
import { displayValue, ownValue } from '../forms/definition.ts';
import type { FormsSettings } from '../forms/define-forms.ts';
import { extraFieldNames, fieldOf, formTitleOf, forms as siteForms, labelOf } from '../forms/registry.ts';
import { EXPORT_COLUMNS } from '../forms/reserved.ts';
import { catalogueFor, type Language } from '../i18n/catalogues.ts';
import type { SiteSettings } from '../site/define-site.ts';
import type { Outbox, Submission } from './outbox.ts';
import type { ListedFile } from '../files/listing.ts';

// The messages as both exports write them, the admin's download and `npm run inbox -- export`:
// the one part of the inbox command the server uses too (its command code is in src/cli/inbox/).

/**
 * The columns of both exports for this site's forms: the fixed ones, then `form` when the site has
 * forms of its own, then one per extra field of every form (decision 0131).
 * Hint: a site with the spec's contact form alone exports exactly the columns it always did, so
 * an owner's spreadsheet keeps working; a field's column comes from the definitions, not from the
 * rows, so a streamed export knows its header before it reads the first row.
 */
export function exportColumns(set: FormsSettings = siteForms): readonly string[] {
  return [...EXPORT_COLUMNS, ...(set.forms.length > 0 ? ['form'] : []), ...extraFieldNames(set)];
}

/** The times among the exported columns, written as a spreadsheet reads dates. */
const DATE_COLUMNS = ['createdAt', 'nextAttemptAt', 'sentAt'] as const;

/** One exported message: each column's value. */
export type ExportedMessage = Record<string, unknown>;

/** The messages as CSV, for the command line and the admin alike; `byteOrderMark` for Excel. */
export function messagesToCsv(rows: readonly ExportedMessage[], { byteOrderMark = false } = {}): string {
  return toCsv(exportColumns(), rows, { dateColumns: DATE_COLUMNS, byteOrderMark });
}

/**
 * How many messages an export reads at a time: half a megabyte of long messages, which V8 can
 * collect young (a batch of 500 outlived the young generation and piled up; decision 0147).
 */
export const EXPORT_BATCH = 100;

/**
 * What the spreadsheet export ("CSV for Excel") is written for: the site's language (its
 * separator and the words of the fixed columns), its time zone and its forms (their labels).
 */
export type Spreadsheet = { language: Language; timeZone: string; forms: FormsSettings };

/** The spreadsheet export of this site: its language and time zone (site.config.ts), its forms (forms.config.ts). */
export function spreadsheetOf(settings: Pick<SiteSettings, 'language' | 'timeZone'>, set: FormsSettings = siteForms): Spreadsheet {
  return { language: settings.language, timeZone: settings.timeZone, forms: set };
}

/**
 * How an export is written: a byte-order mark on the plain CSV, or the spreadsheet variant
 * (decision 0148); the forms whose columns it has (the site's unless given), and where it reads
 * the messages' files, listed in their file field's column.
 */
export type ExportOptions = {
  byteOrderMark?: boolean;
  spreadsheet?: Spreadsheet | undefined;
  forms?: FormsSettings | undefined;
  files?: ((ids: readonly number[]) => Promise<ListedFile[]>) | undefined;
  /** The forms whose messages are exported (an editor's); every form when not given. */
  scope?: FormScope | undefined;
};

/**
 * Every message as an export writes it (this command's and the admin's), newest first, in chunks
 * read from a cursor: an export of any size holds one batch in memory.
 * Hint: `spreadsheet` writes the CSV for Excel, always with a byte-order mark; the plain CSV and
 * the JSON keep the field names, the stored values and UTC, as they always did.
 */
export function exportChunks(
  outbox: Pick<Outbox, 'batches'>,
  format: 'csv' | 'json',
  { byteOrderMark = false, spreadsheet, forms = siteForms, files, scope }: ExportOptions = {},
): AsyncGenerator<string> {
  if (format === 'csv' && spreadsheet) return spreadsheetChunks(outbox, spreadsheet, files, scope);
  const columns = exportColumns(forms);
  const batches = withFiles(
    mapBatches(outbox.batches(EXPORT_BATCH, { scope }), (s) => exported(s, columns)),
    { columns: fileColumns(forms), files, asText: format === 'csv' },
  );
  return format === 'json' ? jsonChunks(batches) : csvChunks(columns, batches, { dateColumns: DATE_COLUMNS, byteOrderMark });
}

/** The names of the file fields among the exported columns: their cells list the message's files. */
function fileColumns(set: FormsSettings): string[] {
  return [...new Set([set.contact, ...set.forms].flatMap((form) => form.fields.filter((field) => field.type === 'file').map((field) => field.name)))];
}

/**
 * Fills each file field's cell of a batch from the files table (one query a batch): in JSON the
 * list of `{ name, size }`, in CSV one line a file, its name and size in bytes (a line break,
 * which no file name has, keeps a name with a comma or semicolon whole).
 */
async function* withFiles(
  batches: AsyncIterable<ExportedMessage[]>,
  { columns, files, asText }: { columns: readonly string[]; files: ExportOptions['files']; asText: boolean },
): AsyncGenerator<ExportedMessage[]> {
  for await (const batch of batches) {
    if (columns.length === 0 || !files) {
      yield batch;
      continue;
    }
    const listed = await files(batch.map((row) => Number(row.id)));
    for (const row of batch) {
      for (const column of columns) {
        const own = listed.filter((file) => file.submissionId === row.id && file.field === column).map(({ name, size }) => ({ name, size }));
        row[column] = asText ? own.map((file) => `${file.name} (${file.size} bytes)`).join('\n') : own;
      }
    }
    yield batch;
  }
}

/**
 * The CSV for Excel: the plain export's columns, headed by their labels (a field's from its form,
 * the others from the language's catalogue), each value as the owner reads it in the admin
 * (`displayValue`: a choice's label, Yes or No; a spam reason in the language's words), times in
 * the site's zone with their offset, and the separator that Excel expects in the site's language.
 */
function spreadsheetChunks(
  outbox: Pick<Outbox, 'batches'>,
  { language, timeZone, forms }: Spreadsheet,
  files: ExportOptions['files'],
  scope: FormScope | undefined,
): AsyncGenerator<string> {
  const words = catalogueFor(language).exports;
  const reasons = catalogueFor(language).spamDigest.reasons;
  const columns = exportColumns(forms);
  const header = (column: string) => (Object.hasOwn(words.columns, column) ? words.columns[column as keyof typeof words.columns] : labelOf(column, forms));
  const presented = (s: Submission): ExportedMessage => {
    const row = exported(s, columns);
    row.status = words.statuses[s.status as keyof typeof words.statuses] ?? s.status;
    // The language's words for each reason, as the digest says them; a reason the code no longer knows stays as stored.
    row.spamReasons = s.spamReasons.map((reason) => (Object.hasOwn(reasons, reason) ? reasons[reason as keyof typeof reasons] : reason)).join('; ');
    if ('form' in row) row.form = formTitleOf(s.form, forms);
    for (const column of columns.slice(EXPORT_COLUMNS.length)) if (column !== 'form') row[column] = displayValue(fieldOf(s.form, column, forms), row[column]);
    return row;
  };
  const options = { headers: columns.map(header), dateColumns: DATE_COLUMNS, byteOrderMark: true, separator: words.separator, timeZone };
  return csvChunks(
    columns,
    withFiles(mapBatches(outbox.batches(EXPORT_BATCH, { scope }), presented), { columns: fileColumns(forms), files, asText: true }),
    options,
  );
}

async function* mapBatches<T>(batches: AsyncIterable<Submission[]>, row: (s: Submission) => T): AsyncGenerator<T[]> {
  for await (const batch of batches) yield batch.map(row);
}

/**
 * One message as both exports write it (this command's and the admin's): the fixed columns, its
 * form, and each extra field's value (empty where its form has no such field).
 */
export function exported(s: Submission, columns: readonly string[] = exportColumns()): ExportedMessage {
  const row: ExportedMessage = {
    id: s.id,
    createdAt: s.createdAt,
    name: s.name,
    email: s.email,
    message: s.message,
    status: s.status,
    attempts: s.attempts,
    nextAttemptAt: s.nextAttemptAt,
    lastError: s.lastError,
    sentAt: s.sentAt,
    spamReasons: s.spamReasons,
  };
  for (const column of columns.slice(EXPORT_COLUMNS.length)) row[column] = column === 'form' ? s.form : (ownValue(s.fields, column) ?? null);
  return row;
}
