import { existsSync } from 'node:fs';
import type { DatabaseSync } from 'node:sqlite';
import { join, resolve } from 'node:path';
import { EXIT } from '../lib/cli.ts';
import { loadEnvFile, readDataDir } from '../lib/config.ts';
import { DATABASE_FILE, openDatabase } from '../lib/store/database.ts';

/** What a tool is: its usage text, how it reads its arguments, and what it does with the database. */
export type Tool<Command extends { name: string }> = {
  usage: string;
  parse(args: readonly string[]): { ok: true; command: Command } | { ok: false; problem: string };
  run(command: Command, io: { db: DatabaseSync; out: (text: string) => void; err: (text: string) => void }): number;
};

/**
 * Runs a command-line tool over the server's database, as both tools need: the same .env
 * rule as the server, usage on bad arguments, results to stdout and everything meant for
 * people to stderr, so an export can be redirected to a file as it is.
 */
export function runTool<Command extends { name: string }>(tool: Tool<Command>): void {
  loadEnvFile();

  const out = (text: string) => void process.stdout.write(text);
  const err = (text: string) => void process.stderr.write(text);

  const parsed = tool.parse(process.argv.slice(2));
  if (!parsed.ok) {
    err(`${parsed.problem}\n\n${tool.usage}`);
    process.exit(EXIT.usage);
  }
  if (parsed.command.name === 'help') {
    out(tool.usage);
    return;
  }
  const dataDir = readDataDir(process.env);
  // Opening would create an empty database: a mistyped DATA_DIR would then look like an empty list.
  if (!existsSync(join(dataDir, DATABASE_FILE))) {
    err(`No database in ${resolve(dataDir)} (${DATABASE_FILE} is created when the server first starts). Is DATA_DIR right?\n`);
    process.exit(EXIT.notFound);
  }
  const db = openDatabase(dataDir);
  try {
    // exitCode rather than exit(): a large export to a pipe must be flushed before the process ends.
    process.exitCode = tool.run(parsed.command, { db, out, err });
  } finally {
    db.close();
  }
}
