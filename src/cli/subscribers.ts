/**
 * The local newsletter list on the command line: `npm run subscribers -- export --format
 * csv|json`. It opens the same database as the server, which may be running (SQLite's WAL
 * lets both work at once). Results go to stdout, everything meant for people to stderr, so
 * the export can be redirected to a file as it is.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readDataDir } from '../lib/config.ts';
import { EXIT, parseSubscribersArgs, runSubscribersCommand, SUBSCRIBERS_USAGE } from '../lib/newsletter/subscribers.ts';
import { DATABASE_FILE, openDatabase } from '../lib/store/database.ts';

// The same rule as the server: .env beside package.json if present; ENV_FILE names another, or '' for none.
const envFile = process.env.ENV_FILE ?? '.env';
if (envFile && existsSync(envFile)) process.loadEnvFile(envFile);

const parsed = parseSubscribersArgs(process.argv.slice(2));
if (!parsed.ok) {
  process.stderr.write(`${parsed.problem}\n\n${SUBSCRIBERS_USAGE}`);
  process.exit(EXIT.usage);
}

const out = (text: string) => void process.stdout.write(text);
const err = (text: string) => void process.stderr.write(text);

if (parsed.command.name === 'help') {
  out(SUBSCRIBERS_USAGE);
} else {
  const dataDir = readDataDir(process.env);
  // Opening would create an empty database: a mistyped DATA_DIR would then look like an empty list.
  if (!existsSync(join(dataDir, DATABASE_FILE))) {
    err(`No database in ${resolve(dataDir)} (${DATABASE_FILE} is created when the server first starts). Is DATA_DIR right?\n`);
    process.exit(EXIT.notFound);
  }
  const db = openDatabase(dataDir);
  try {
    // exitCode rather than exit(): a large export to a pipe must be flushed before the process ends.
    process.exitCode = runSubscribersCommand(parsed.command, { db, out, err });
  } finally {
    db.close();
  }
}
