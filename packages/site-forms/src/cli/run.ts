import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EXIT, streamOut } from '../lib/cli.ts';
import { loadEnvFile, readStoreOptions } from '../lib/config/config.ts';
import { createLogger, describeError } from '../lib/log.ts';
import { withoutCredentials } from '../lib/config/secrets.ts';
import { DATABASE_FILE } from '../lib/sql/sqlite.ts';
import { openStore, type Store } from '../lib/database/database.ts';

/** What a tool is: its usage text, how it reads its arguments, and what it does with the store. */
export type Tool<Command extends { name: string }> = {
  usage: string;
  parse(args: readonly string[]): { ok: true; command: Command } | { ok: false; problem: string };
  run(command: Command, io: { store: Store; out: (text: string) => void | Promise<void>; err: (text: string) => void }): Promise<number>;
};

/**
 * Runs a command-line tool over the server's store, as every tool needs: the same .env rule
 * and DATABASE_URL as the server, usage on bad arguments, results to stdout and everything
 * meant for people to stderr, so an export can be redirected to a file as it is.
 */
export async function runTool<Command extends { name: string }>(tool: Tool<Command>): Promise<void> {
  loadEnvFile();

  // A promise while stdout is full: an export into a slow pipe waits rather than piling up in memory.
  const out = streamOut(process.stdout);
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
  // The server's options, news included: what a tool does is recorded as the server would record it.
  const read = readStoreOptions(process.env);
  if (!read.ok) {
    err(`${read.problems.join('\n')}\n`);
    process.exit(EXIT.usage);
  }
  const { options } = read;
  const { dataDir } = options;
  // Opening would create an empty database: a mistyped DATA_DIR would then look like an empty list.
  if (!options.url && !existsSync(join(dataDir, DATABASE_FILE))) {
    err(`No database in ${resolve(dataDir)} (${DATABASE_FILE} is created when the server first starts). Is DATA_DIR right?\n`);
    process.exit(EXIT.notFound);
  }
  // The store logs an outage as the server does; a tool shows only the line below.
  const store = openStore(options, createLogger({ level: 'silent' }));
  try {
    // exitCode rather than exit(): a large export to a pipe must be flushed before the process ends.
    process.exitCode = await tool.run(parsed.command, { store, out, err });
  } catch (error) {
    const where = options.url ? withoutCredentials(options.url) : resolve(dataDir, DATABASE_FILE);
    err(`Cannot read the database at ${where}: ${describeError(error)}\n`);
    process.exitCode = EXIT.notFound;
  } finally {
    await store.close();
  }
}
