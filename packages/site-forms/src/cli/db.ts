/**
 * The database on the command line: `npm run db -- copy --to postgres://…` moves a SQLite
 * DATA_DIR into PostgreSQL, the upgrade path from one machine to several (decision 0050).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EXIT } from '../lib/cli.ts';
import { loadEnvFile, readDataDir } from '../lib/config/config.ts';
import { readDatabaseConfig } from '../lib/config/database.ts';
import { withoutCredentials } from '../lib/config/secrets.ts';
import { copyStore, DB_USAGE, parseDbArgs, reportCopy } from '../lib/sql/copy.ts';
import { openPostgres } from '../lib/sql/postgres.ts';
import { DATABASE_FILE, openSqlite } from '../lib/sql/sqlite.ts';
import { describeDatabaseError } from '../lib/sql/state.ts';

loadEnvFile();
const out = (text: string) => void process.stdout.write(text);
const err = (text: string) => void process.stderr.write(text);

const parsed = parseDbArgs(process.argv.slice(2));
if (!parsed.ok) {
  err(`${parsed.problem}\n\n${DB_USAGE}`);
  process.exit(EXIT.usage);
}
if (parsed.command.name === 'help') {
  out(DB_USAGE);
  process.exit(EXIT.ok);
}
const { to } = parsed.command;
const dataDir = readDataDir(process.env);
if (!existsSync(join(dataDir, DATABASE_FILE))) {
  err(`No database in ${resolve(dataDir)} (${DATABASE_FILE}). Is DATA_DIR right?\n`);
  process.exit(EXIT.notFound);
}
const { config } = readDatabaseConfig(process.env);
const from = openSqlite(dataDir, { lockTimeoutMs: config.statementTimeoutMs });
const target = openPostgres({ ...config, url: to });
try {
  process.exitCode = reportCopy(await copyStore(from, target), out, err);
} catch (error) {
  err(`Nothing was copied: PostgreSQL at ${withoutCredentials(to)} answered ${describeDatabaseError(error)}\n`);
  process.exitCode = EXIT.notFound;
} finally {
  await target.close();
  await from.close();
}
