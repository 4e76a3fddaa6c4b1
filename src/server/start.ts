/**
 * Starts the site: reads the configuration (stopping with every problem named), opens
 * the database, then serves the built Astro site from our own `node:http` server.
 * Run it with `npm run serve` (after `npm run build`) or `npm start` (which builds first).
 */
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ConfigError, describeConfig, loadEnvFile, requireConfig } from '../lib/config.ts';
import { withoutCredentials } from '../lib/config/secrets.ts';
import { createLogger, describeError, limitClientLines } from '../lib/log.ts';
import { checkProviderKeys } from '../lib/newsletter/key-check.ts';
import { createServices, installServices, type Services } from '../lib/services.ts';
import { builtEndpointOrigin, readBuildSettings } from '../lib/build-settings.ts';
import { securityHeadersFor } from '../lib/security-headers.ts';
import { startupFailureLine } from '../lib/startup-failure.ts';
import { createDispatcher } from './dispatch.ts';
import { createFront } from './front.ts';
import { createHttpServer, type NodeHandler } from './http-server.ts';
import { createStaticFastPath, loadStaticFiles } from './static-files.ts';

// The adapter's entry sits beside the compiled dist/server/start.mjs; from source it is in dist/.
const ENTRY = [new URL('./entry.mjs', import.meta.url), new URL('../../dist/server/entry.mjs', import.meta.url)].find((url) => existsSync(url));

loadEnvFile();

let config: ReturnType<typeof requireConfig>;
try {
  config = requireConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\nSee .env.example and the configuration table in README.md.\n`);
  process.exit(1);
}

// Lines about a client are bounded (one per client and event a minute, 50 a second in all): a flood cannot fill the disk.
const logger = config.logClientLines === 'limited' ? limitClientLines(createLogger({ level: config.logLevel })) : createLogger({ level: config.logLevel });
let services: Services;
try {
  services = createServices(config, logger);
  await services.database.ready;
  // One server per SQLite file: a lease found there was taken by a process that is gone
  // (killed mid-send), and its message goes again now rather than when the lease ends.
  if (services.database.engine === 'sqlite') await services.database.outbox.releaseLeases();
  // The challenge secret is read once, now: GET /api/challenge then needs no database.
  await services.spam.service.prepare();
} catch (error) {
  failToStart(
    config.database.url
      ? `DATABASE_URL ${withoutCredentials(config.database.url)}: PostgreSQL could not be reached or refused us (${describeError(error)}): check that it runs, is reachable from here, and that the user, password and database are right.`
      : startupFailureLine(error, { step: 'database', dataDir: config.dataDir }),
  );
}
installServices(services);
logger.info('server.config', describeConfig(config));
await checkNewsletterAtStart();
if (config.database.url && !config.redisUrl) {
  logger.warn('rate_limit.per_instance', {
    note: 'DATABASE_URL is set but REDIS_URL is not: with several instances, each one counts the rate limits alone. Set REDIS_URL to share them.',
  });
}
if (config.newsletterChoice === 'default') {
  logger.info('newsletter.local', {
    note: 'No newsletter provider is configured: subscribers are stored in the local database (npm run subscribers -- export).',
  });
}
if (!config.smtp) {
  logger.info('contact.smtp_off', { note: 'SMTP_URL is not set: contact messages are stored, not emailed (npm run inbox -- list).' });
}

if (!ENTRY) {
  process.stderr.write('The site is not built yet: run `npm run build` first, or `npm start` to build and serve.\n');
  process.exit(1);
}
// The adapter starts its own server on import unless told not to; we serve through ours.
process.env.ASTRO_NODE_AUTOSTART = 'disabled';
const { handler } = (await import(ENTRY.href)) as { handler: NodeHandler };

// The built pages from memory, the routes through the pipeline, the rest through the adapter.
const staticFiles = createStaticFastPath(loadStaticFiles(fileURLToPath(new URL('../client', ENTRY))));
const { server, shutdown } = createHttpServer(
  createDispatcher({ services, front: createFront({ ...config, headers: securityHeadersFor(withBuiltEndpoint()) }), staticFiles, astro: handler }),
);
server.once('error', (error) => failToStart(startupFailureLine(error, { step: 'listen', host: config.host, port: config.port })));
server.listen(config.port, config.host, () => {
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  logger.info('server.listening', { url: `http://${host}:${port}`, port });
  // Once the site is up: messages left pending by an earlier process go out first.
  services.worker?.start();
  services.webhooks.worker?.start();
  services.signups.worker?.start();
  services.housekeeping.start();
  // Hourly: held spam past its retention is deleted, and the day's digest goes out.
  services.spam.housekeeping.start();
});

/**
 * Checks the newsletter provider's key and list, form or segment with one read-only call: a
 * refused one stops the start naming the variable, an unreachable provider is a warning.
 */
async function checkNewsletterAtStart(): Promise<void> {
  const { newsletter } = config;
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
      note: 'The provider could not be reached to check its key at start; the site starts anyway (npm run doctor checks again).',
    });
  }
  if (check.result === 'ok') logger.info('newsletter.key_checked', { provider: newsletter.provider });
}

/**
 * The configuration with the contact endpoint the pages were built with: the CSP must allow
 * what the script was built to call, whatever CONTACT_FORM_ENDPOINT says at run time.
 */
function withBuiltEndpoint(): typeof config {
  const built = readBuildSettings(new URL('../build-settings.json', ENTRY));
  if (!built) return config;
  const origin = builtEndpointOrigin(built);
  if (origin !== config.contactEndpointOrigin) {
    logger.warn('contact.endpoint_differs', {
      built: origin ?? 'this site',
      runtime: config.contactEndpointOrigin ?? 'this site',
      note: 'The pages post the contact form where they were built to (npm run build with CONTACT_FORM_ENDPOINT); the Content-Security-Policy allows that. Rebuild to change it.',
    });
  }
  return { ...config, contactEndpointOrigin: origin };
}

/** Stops at start-up with one line on stderr naming what to change, and no stack trace. */
function failToStart(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

/** How long requests in flight may take to finish once a stop is asked for. */
const SHUTDOWN_GRACE_MS = 10_000;

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info('server.stopping', { signal });
  // The worker finishes the message it is sending (so its outcome is recorded) while
  // requests drain; the database closes only after both.
  const workerStopped = Promise.all([services.worker?.stop(), services.webhooks.worker?.stop(), services.signups.worker?.stop(), services.housekeeping.stop()]);
  const how = await shutdown(SHUTDOWN_GRACE_MS);
  if (how === 'forced') logger.warn('server.stop_forced', { note: `requests still running after ${SHUTDOWN_GRACE_MS / 1000} s were cut off` });
  await workerStopped;
  await services.limits.close();
  await services.spam.close();
  await services.database.close();
  logger.info('server.stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
