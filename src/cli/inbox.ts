/**
 * The site owner's inbox on the command line: `npm run inbox -- list | show <id> |
 * export --format csv|json | retry <id>`. It opens the same database as the server, which
 * may be running (SQLite's WAL lets both work at once). Results go to stdout, everything
 * meant for people to stderr, so `export` can be redirected to a file as it is.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readDataDir } from '../lib/config.ts';
import { EXIT, INBOX_USAGE, parseInboxArgs, runInboxCommand } from '../lib/contact/inbox.ts';
import { createOutbox } from '../lib/contact/outbox.ts';
import { DATABASE_FILE, openDatabase } from '../lib/store/database.ts';

// The same rule as the server: .env beside package.json if present; ENV_FILE names another, or '' for none.
const envFile = process.env.ENV_FILE ?? '.env';
if (envFile && existsSync(envFile)) process.loadEnvFile(envFile);

const parsed = parseInboxArgs(process.argv.slice(2));
if (!parsed.ok) {
  process.stderr.write(`${parsed.problem}\n\n${INBOX_USAGE}`);
  process.exit(EXIT.usage);
}

const out = (text: string) => void process.stdout.write(text);
const err = (text: string) => void process.stderr.write(text);

if (parsed.command.name === 'help') {
  out(INBOX_USAGE);
} else {
  const dataDir = readDataDir(process.env);
  // Opening would create an empty database: a mistyped DATA_DIR would then look like an empty inbox.
  if (!existsSync(join(dataDir, DATABASE_FILE))) {
    err(`No database in ${resolve(dataDir)} (${DATABASE_FILE} is created when the server first starts). Is DATA_DIR right?\n`);
    process.exit(EXIT.notFound);
  }
  const db = openDatabase(dataDir);
  try {
    // exitCode rather than exit(): a large export to a pipe must be flushed before the process ends.
    process.exitCode = runInboxCommand(parsed.command, { outbox: createOutbox(db), out, err });
  } finally {
    db.close();
  }
}
