import { existsSync } from 'node:fs';
import { admin } from './owner-inbox.ts';
import { autoReply } from './auto-reply.ts';
import { consent } from './consent.ts';
import { database } from './database.ts';
import { fileDelivery } from './file-delivery.ts';
import { limits } from './limits.ts';
import { logging } from './logging.ts';
import { newsletter } from './newsletter.ts';
import { origins } from './origins.ts';
import { missingPackages } from './packages.ts';
import { redis } from './redis.ts';
import { server } from './server.ts';
import { smtp } from './smtp.ts';
import { spam } from './spam.ts';
import { uploads } from './uploads.ts';
import { webhooks } from './webhooks.ts';
import type { ConfigConcern, Env } from './variables.ts';
import { fromProjectRoot } from '../project-root.ts';
import type { StoreOptions } from '../database/database.ts';
import { eventsRead } from '../webhooks/webhooks.ts';
import { readDataDir } from './server.ts';

export type { KitConfig, MailchimpConfig, NewsletterConfig, ProviderName, ResendConfig } from './newsletter.ts';
export { PROVIDER_NAMES } from './newsletter.ts';
export { readDataDir } from './server.ts';
export type { SmtpConfig } from './smtp.ts';
export type { SpamConfig, TurnstileConfig } from './spam.ts';

/**
 * Every concern of the configuration, each reading its own variables (src/lib/config/).
 * Hint: a new concern is a file exporting a `ConfigConcern` and one entry here; its part
 * joins `Config`, its problems the start-up's list, its description the start-up log.
 */
const CONCERNS = [
  server,
  database,
  origins,
  newsletter,
  smtp,
  limits,
  redis,
  logging,
  spam,
  admin,
  webhooks,
  autoReply,
  consent,
  uploads,
  fileDelivery,
] as const;

type PartOf<Concern> = Concern extends ConfigConcern<infer Part> ? Part : never;
type AllOf<Union> = (Union extends unknown ? (part: Union) => void : never) extends (all: infer All) => void ? All : never;

/** The whole configuration of the server, read once at start-up: every concern's part in one object. */
export type Config = AllOf<PartOf<(typeof CONCERNS)[number]>>;

/** The answer of `readConfig`: the configuration, or every problem found. */
export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/**
 * Reads and checks the configuration from an environment, collecting every concern's problems.
 * Hint: problems name the variable, never its value, because values may be secrets.
 */
export function readConfig(env: Env): ConfigResult {
  const readings = CONCERNS.map((concern) => concern.read(env));
  const problems = firstPerVariable(readings.flatMap((reading) => reading.problems));
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, config: Object.assign({}, ...readings.map((reading) => reading.config)) };
}

/**
 * The first problem of each variable: a malformed CONTACT_TO is read as not set, and then
 * "is required" as well would only send the owner looking for a second mistake.
 */
function firstPerVariable(problems: string[]): string[] {
  const byVariable = new Map<string, string>();
  for (const problem of problems) {
    const variable = problem.slice(0, problem.indexOf(' '));
    if (!byVariable.has(variable)) byVariable.set(variable, problem);
  }
  return [...byVariable.values()];
}

/** The error thrown by `requireConfig`, listing every problem on its own line. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Reads the configuration or throws a `ConfigError` naming every bad variable. */
export function requireConfig(env: Env): Config {
  const result = readConfig(env);
  if (!result.ok) throw new ConfigError(result.problems);
  // A client that only some owners configure (an optional peer) is named at start, with how to install it.
  const missing = missingPackages(result.config);
  if (missing.length > 0) throw new ConfigError(missing);
  return result.config;
}

/** The configuration as it may be logged: keys masked, URLs without user names or passwords. */
export function describeConfig(config: Config): Record<string, unknown> {
  return Object.assign({}, ...CONCERNS.map((concern) => concern.describe(config)));
}

/**
 * Loads `.env` beside package.json into `process.env` when it exists; `ENV_FILE` names
 * another file, or '' for none. The server and the command-line tools share this rule.
 * Hint: variables already set in the environment win over the file.
 */
export function loadEnvFile(): void {
  const name = process.env.ENV_FILE ?? '.env';
  // Beside package.json whatever the working directory: a systemd unit without
  // WorkingDirectory must read the same file as `npm start` (issue 11, item 2).
  const file = name && fromProjectRoot(name);
  if (file && existsSync(file)) process.loadEnvFile(file);
}

/**
 * How the store is opened, the same for the server and every command-line tool: where it is,
 * and whether each message's news is recorded (only when a webhook, chat alert or automatic
 * reply reads it), so `npm run inbox -- release` records what the server's "Not spam" would.
 */
export function storeOptionsOf(config: Pick<Config, 'database' | 'dataDir' | 'webhooks' | 'autoReply' | 'smtp'>): StoreOptions {
  return { ...config.database, dataDir: config.dataDir, events: eventsRead(config.webhooks.endpoints, Boolean(config.autoReply && config.smtp)) };
}

/**
 * The store's options from an environment, reading only the concerns they depend on (the
 * database, the webhooks and alerts, the automatic reply and its mail server), so a tool still
 * works while another part of the configuration is being fixed.
 */
export function readStoreOptions(env: Env): { ok: true; options: StoreOptions } | { ok: false; problems: string[] } {
  const readings = [database.read(env), webhooks.read(env), autoReply.read(env), smtp.read(env)] as const;
  const problems = firstPerVariable(readings.flatMap((reading) => reading.problems));
  if (problems.length > 0) return { ok: false, problems };
  const [db, hooks, reply, mail] = readings;
  return { ok: true, options: storeOptionsOf({ ...db.config, ...hooks.config, ...reply.config, ...mail.config, dataDir: readDataDir(env) }) };
}
