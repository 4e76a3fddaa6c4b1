/**
 * What `npm start` and `npm run dev` both do before the first request: read `.env`, check the
 * configuration (stopping with every problem named), open the database, build the services,
 * log the configuration, and check the newsletter provider's key. One road, so that dev
 * serves /admin and sends mail exactly as production does.
 */
import { toolCommand } from '../lib/commands.ts';
import { ConfigError, type Config, describeConfig, loadEnvFile, requireConfig } from '../lib/config/config.ts';
import { withoutCredentials } from '../lib/config/secrets.ts';
import { createLogger, describeError, limitClientLines, type Logger } from '../lib/log.ts';
import { checkProviderKeys } from '../lib/newsletter/key-check.ts';
import { privateEndpoints } from '../lib/webhooks/private-endpoints.ts';
import { createServices, type Services } from '../lib/app/services.ts';
import { startupFailureLine } from '../lib/startup-failure.ts';

/** What `boot` is told of the server it boots for. */
export type BootOptions = {
  /**
   * `own` (the default): the server listens on HOST and PORT, which the configuration's line
   * names. `elsewhere`: another server chose its address (`astro dev`'s `--port`), which it logs
   * itself once it listens; the line then leaves HOST and PORT out, as they are not where it serves.
   */
  address?: 'own' | 'elsewhere';
};

/**
 * Why the start stops: its message is what the owner reads, one line naming the variable, port or
 * path to change (a configuration's problems, one line each). Thrown, never a `process.exit`: in an
 * owner's server the process is theirs (decision 0225); whoever runs the server prints the message
 * alone, without a stack (`stopStarting`).
 */
export class StartupError extends Error {
  override name = 'StartupError';
  /**
   * None: the message is all there is to say, and `astro dev`, which prints what its integrations
   * throw, then prints the message without a stack trace under it.
   */
  override stack = '';
}

/**
 * The configured services of this process, ready to answer (their background work not started yet).
 * Throws a `StartupError` when they cannot start, with everything it had opened closed again, so
 * that nothing of ours keeps the process alive.
 */
export async function boot(options: BootOptions = {}): Promise<Services> {
  loadEnvFile();
  let config: Config;
  try {
    config = requireConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new StartupError(`${error.message}\nSee .env.example and the configuration table in README.md.`);
  }

  // Lines about a client are bounded (one per client and event a minute, 50 a second in all): a flood cannot fill the disk.
  const logger = config.logClientLines === 'limited' ? limitClientLines(createLogger({ level: config.logLevel })) : createLogger({ level: config.logLevel });
  let services: Services;
  try {
    services = createServices(config, logger);
  } catch (error) {
    failToStart(databaseFailure(config, error));
  }
  try {
    return await ready(services, config, logger, options);
  } catch (error) {
    await services.close().catch(() => {});
    throw error;
  }
}

/**
 * The services opened, checked and logged, or a `StartupError` naming what to change.
 * Hint: exported for the test of its order (tests/lib/app/boot.test.ts).
 */
export async function ready(services: Services, config: Config, logger: Logger, options: BootOptions): Promise<Services> {
  try {
    await services.store.ready;
    // One server per SQLite file: a lease found there was taken by a process that is gone
    // (killed mid-send), and its message goes again now rather than when the lease ends.
    if (services.store.engine === 'sqlite') await services.store.outbox.releaseLeases();
    // The challenge secret is read once, now: GET /api/challenge then needs no database.
    await services.spam.service.prepare();
    // The first owner made or found (it logs its own failure and never rejects): an old cookie in
    // the first instant resumes, and whoever looks at admin_users after the start finds them.
    await services.admin?.ready;
  } catch (error) {
    failToStart(databaseFailure(config, error));
  }
  const described = describeConfig(config);
  if (options.address === 'elsewhere') {
    delete described.host;
    delete described.port;
  }
  logger.info('server.config', described);
  await checkNewsletterAtStart(config, logger);
  logNotes(config, logger);
  await warnOfPrivateEndpoints(config, logger);
  return services;
}

/** The line of a database that could not be opened: PostgreSQL's address without its password, or what SQLite's file needs. */
function databaseFailure(config: Config, error: unknown): string {
  return config.database.url
    ? `DATABASE_URL ${withoutCredentials(config.database.url)}: PostgreSQL could not be reached or refused us (${describeError(error)}): check that it runs, is reachable from here, and that the user, password and database are right.`
    : startupFailureLine(error, { step: 'database', dataDir: config.dataDir });
}

/** An endpoint every delivery would refuse, told at start rather than at the first message's retry. */
async function warnOfPrivateEndpoints({ webhooks }: Config, logger: Logger): Promise<void> {
  if (webhooks.allowPrivate) return;
  for (const { name, host } of await privateEndpoints(webhooks.endpoints)) {
    logger.warn('webhook.private_address', {
      endpoint: name,
      host,
      note: `${host} is a private address (this host or a private network): every delivery to ${name} is refused. If the receiver is yours, set WEBHOOK_ALLOW_PRIVATE=true.`,
    });
  }
}

/** What an owner should know about the configuration they chose, once at start. */
function logNotes(config: Config, logger: Logger): void {
  if (config.database.url && !config.redisUrl) {
    logger.warn('rate_limit.per_instance', {
      note: 'DATABASE_URL is set but REDIS_URL is not: with several instances, each one counts the rate limits alone. Set REDIS_URL to share them.',
    });
  }
  if (config.newsletterChoice === 'default') {
    logger.info('newsletter.local', {
      note: `No newsletter provider is configured: subscribers are stored in the local database (${toolCommand('subscribers', 'export --format csv')}).`,
    });
  }
  if (!config.smtp) {
    logger.info('contact.smtp_off', { note: `SMTP_URL is not set: contact messages are stored, not emailed (${toolCommand('inbox', 'list')}).` });
  }
}

/**
 * Checks the newsletter provider's key and list, form or segment with one read-only call: a
 * refused one stops the start naming the variable, an unreachable provider is a warning.
 */
async function checkNewsletterAtStart({ newsletter }: Config, logger: Logger): Promise<void> {
  if (newsletter.provider === 'resend' && newsletter.resend.target.kind === 'audience') {
    logger.warn('newsletter.resend_audiences_deprecated', {
      note: 'Resend deprecated audiences for segments and will remove them: create a segment in Resend and set RESEND_SEGMENT_ID instead of RESEND_AUDIENCE_ID.',
    });
  }
  const check = await checkProviderKeys(newsletter);
  if (check.result === 'refused') {
    failToStart(
      `${check.variable}: the newsletter provider (${newsletter.provider}) refused it at start (${check.detail}): check the value in the provider's account.`,
    );
  }
  if (check.result === 'unreachable') {
    logger.warn('newsletter.key_unchecked', {
      provider: newsletter.provider,
      detail: check.detail,
      note: `The provider could not be reached to check its key at start; the site starts anyway (${toolCommand('doctor')} checks again).`,
    });
  }
  if (check.result === 'ok') logger.info('newsletter.key_checked', { provider: newsletter.provider });
}

/** Stops the start with one line naming what to change (a `StartupError`, which `stopStarting` prints). */
export function failToStart(line: string): never {
  throw new StartupError(line);
}

/**
 * What a server does with a start that failed: a `StartupError`'s message on stderr, alone, and the
 * exit code 1 for when the process ends; anything else is a fault of ours, passed on as it is.
 * Hint: it sets `process.exitCode`, never calls `process.exit`: the process ends when nothing is
 * left to do, the owner's own work included (decision 0225).
 */
export function stopStarting(error: unknown): void {
  if (!(error instanceof StartupError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exitCode = 1;
}
