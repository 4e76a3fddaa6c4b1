import { toolCommand } from '../commands.ts';
import { EXIT } from '../cli.ts';
import type { Sql, SqlSession, SqlValue } from './sql.ts';

/** The commands of `npm run db`, as parsed from its arguments. */
export type DbCommand = { name: 'help' } | { name: 'copy'; to: string };

/** What `npm run db` prints for help, and after a usage error. */
export const DB_USAGE = `Usage: ${toolCommand('db', '<command>')}

Commands:
  copy --to postgres://user:password@host:5432/forms
      copies forms.db in DATA_DIR into PostgreSQL: every contact message with its status,
      delivery history and files' rows (the files stay in their storage), every subscriber. Running it again copies nothing twice; it checks
      that every row arrived and prints the counts. Then set DATABASE_URL to the same URL.

Stop the server first (or copy again after stopping it), so that no message arrives in
SQLite after the copy. Reads DATA_DIR (default ./data) like the server, and .env.
`;

/** Reads the arguments after `npm run db --`, answering a command or what is wrong with them. */
export function parseDbArgs(args: readonly string[]): { ok: true; command: DbCommand } | { ok: false; problem: string } {
  const [name, ...rest] = args;
  switch (name) {
    case undefined:
      return { ok: false, problem: 'No command given.' };
    case 'help':
    case '--help':
    case '-h':
      return { ok: true, command: { name: 'help' } };
    case 'copy': {
      let to: string | undefined;
      if (rest[0] === '--to') to = rest[1];
      else if (rest[0]?.startsWith('--to=')) to = rest[0].slice('--to='.length);
      const extra = rest.slice(rest[0] === '--to' ? 2 : 1);
      if (!to || !/^postgres(ql)?:\/\/[^/]/i.test(to) || !URL.canParse(to)) {
        return { ok: false, problem: 'copy needs --to and a PostgreSQL URL, such as --to postgres://user:password@127.0.0.1:5432/forms' };
      }
      if (extra.length > 0) return { ok: false, problem: `Unexpected argument: ${extra[0]}` };
      return { ok: true, command: { name: 'copy', to } };
    }
    default:
      return { ok: false, problem: `Unknown command: ${name}` };
  }
}

/** How many rows of one table: in SQLite, newly copied, and in PostgreSQL after the copy. */
export type CopyCount = { source: number; copied: number; target: number };

/** The answer of `copyStore`: the counts, or why nothing was copied. */
export type CopyResult = { ok: true; messages: CopyCount; history: CopyCount; subscribers: CopyCount; files: CopyCount } | { ok: false; problem: string };

/** `counter`: its key is numbered by the database, whose sequence moves past the copied ids. */
type Table = { name: string; key: string; columns: readonly string[]; same: readonly string[]; counter?: false };

// The key of each row, and the columns that must agree for a row already in PostgreSQL to be
// this row (rather than another message that happens to have the same id).
const TABLES: readonly Table[] = [
  {
    name: 'submissions',
    key: 'id',
    columns: ['id', 'created_at', 'name', 'email', 'message', 'status', 'attempts', 'next_attempt_at', 'last_error', 'sent_at', 'form', 'fields'],
    same: ['created_at', 'email'],
  },
  { name: 'delivery_attempts', key: 'id', columns: ['id', 'submission_id', 'attempted_at', 'outcome', 'error'], same: ['submission_id', 'attempted_at'] },
  { name: 'subscribers', key: 'email', columns: ['email', 'created_at'], same: [] },
  // The files of messages (issue 31): their rows; the objects stay in the storage, which the copy does not move.
  {
    name: 'files',
    key: 'id',
    columns: ['id', 'submission_id', 'field', 'name', 'size', 'type', 'storage_key', 'created_at', 'position'],
    same: ['submission_id', 'storage_key'],
    counter: false,
  },
];

type Row = Record<string, SqlValue>;

/**
 * Copies every row of the SQLite store into the PostgreSQL one, in one transaction, keeping ids
 * (so Message-IDs and `inbox show <id>` stay the same), then checks that each row is there.
 * Hint: idempotent: a row already copied is skipped; a different row under the same id is
 * refused, and then nothing is copied.
 */
export async function copyStore(from: Sql, to: Sql): Promise<CopyResult> {
  const source = new Map<string, Row[]>();
  for (const table of TABLES) source.set(table.name, await from.all<Row>(`SELECT ${table.columns.join(', ')} FROM ${table.name} ORDER BY ${table.key}`));

  const copied = await to.transaction(async (tx) => {
    const counts: Record<string, number> = {};
    for (const table of TABLES) {
      const rows = source.get(table.name)!;
      const clash = await findClash(tx, table, rows);
      if (clash) return clash;
      let n = 0;
      for (const row of rows) {
        const { changes } = await tx.run(
          `INSERT INTO ${table.name} (${table.columns.join(', ')}) VALUES (${table.columns.map(() => '?').join(', ')}) ON CONFLICT (${table.key}) DO NOTHING`,
          table.columns.map((column) => normalise(row[column])),
        );
        n += changes;
      }
      counts[table.name] = n;
      // New rows written by the service must not take an id the copy used.
      if (table.key === 'id' && table.counter !== false)
        await tx.get(`SELECT setval(pg_get_serial_sequence('${table.name}', 'id'), (SELECT max(id) FROM ${table.name}))`);
    }
    return counts;
  });
  if (typeof copied === 'string') return { ok: false, problem: copied };

  const result: Record<string, CopyCount> = {};
  for (const table of TABLES) {
    const rows = source.get(table.name)!;
    const present = new Set((await to.all<{ key: SqlValue }>(`SELECT ${table.key} AS key FROM ${table.name}`)).map((r) => String(r.key)));
    const missing = rows.filter((row) => !present.has(String(row[table.key])));
    if (missing.length > 0) return { ok: false, problem: `${missing.length} rows of ${table.name} are not in PostgreSQL after the copy` };
    result[table.name] = { source: rows.length, copied: copied[table.name]!, target: present.size };
  }
  return { ok: true, messages: result.submissions!, history: result.delivery_attempts!, subscribers: result.subscribers!, files: result.files! };
}

/** A row of PostgreSQL with the same key but other contents: the target is another site's data. */
async function findClash(tx: SqlSession, table: Table, rows: readonly Row[]): Promise<string | undefined> {
  if (table.same.length === 0 || rows.length === 0) return undefined;
  const existing = new Map(
    (await tx.all<Row>(`SELECT ${[table.key, ...table.same].join(', ')} FROM ${table.name}`)).map((row) => [String(row[table.key]), row]),
  );
  for (const row of rows) {
    const there = existing.get(String(row[table.key]));
    if (there && table.same.some((column) => String(there[column]) !== String(row[column]))) {
      return `PostgreSQL already holds another ${table.name === 'submissions' ? 'message' : table.name === 'files' ? 'file' : 'history entry'} with id ${String(row[table.key])}: copy into an empty database, or the one this file was copied into before.`;
    }
  }
  return undefined;
}

function normalise(value: SqlValue | bigint | undefined): SqlValue {
  if (value === undefined) return null;
  return typeof value === 'bigint' ? Number(value) : value;
}

/** Prints the outcome of a copy and answers the exit code. */
export function reportCopy(result: CopyResult, out: (text: string) => void, err: (text: string) => void): number {
  if (!result.ok) {
    err(`Nothing was copied: ${result.problem}\n`);
    return EXIT.notFound;
  }
  const line = (what: string, c: CopyCount) =>
    `  ${what.padEnd(16)} ${String(c.source).padStart(7)} in SQLite, ${String(c.copied).padStart(7)} copied now, ${String(c.target).padStart(7)} in PostgreSQL\n`;
  out(
    `Copied, and checked that every row of SQLite is in PostgreSQL:\n${line('messages', result.messages)}${line('delivery history', result.history)}${line('subscribers', result.subscribers)}${line('files', result.files)}` +
      'Next: set DATABASE_URL to this URL and restart the server.\n',
  );
  return EXIT.ok;
}
