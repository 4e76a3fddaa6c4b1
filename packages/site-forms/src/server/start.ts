/**
 * Starts the site: reads the configuration (stopping with every problem named), opens
 * the database, then serves the built Astro site from our own `node:http` server.
 * Run it with `npm run serve` (after `npm run build`) or `npm start` (which builds first).
 * Hint: this program is the process (`node dist/server/start.mjs`), never imported into an
 * owner's: it alone of the server's code ends the process and handles its signals (decision 0227).
 */
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { builtEndpointOrigin, readBuildSettings } from '../lib/build-settings.ts';
import type { Config } from '../lib/config/config.ts';
import { describeError } from '../lib/log.ts';
import { fromProjectRoot } from '../lib/project-root.ts';
import { securityHeadersFor } from '../lib/http/security-headers.ts';
import { startupFailureLine } from '../lib/startup-failure.ts';
import { boot, StartupError, stopStarting } from './boot.ts';
import { createDispatcher, type AstroHandler } from './dispatch.ts';
import { createFront } from './front.ts';
import { createHttpServer, limitArrival } from './http-server.ts';
import { createStaticFastPath, loadStaticFiles } from './static-files.ts';

// The adapter's entry sits beside the compiled dist/server/start.mjs; from source it is in the project's dist/.
const ENTRY = [new URL('./entry.mjs', import.meta.url), pathToFileURL(fromProjectRoot('dist/server/entry.mjs'))].find((url) => existsSync(url));

const services = await boot().catch((error: unknown) => {
  stopStarting(error);
  return process.exit();
});
const { config, logger } = services;

if (!ENTRY) {
  process.stderr.write('The site is not built yet: run `npm run build` first, or `npm start` to build and serve.\n');
  process.exit(1);
}
// The adapter in middleware mode: a handler that renders what we hand it, with the request's `locals`.
// Loaded on the first request that needs a page rendered (a refused form without JavaScript,
// the admin, a page built on demand): Astro's runtime costs ~40 MB of memory, and a site whose
// visitors get the built pages from memory and post with JavaScript may never need it.
type AstroEntry = { handler: (req: unknown, res: unknown, next: undefined, locals: App.Locals) => Promise<void> };
let entry: Promise<AstroEntry> | undefined;
const astro: AstroHandler = async (req, res, locals) => {
  let loaded: AstroEntry;
  try {
    entry ??= import(ENTRY.href) as Promise<AstroEntry>;
    loaded = await entry;
  } catch (error) {
    // Tried again by the next request that needs a page; this one gets a plain 500.
    entry = undefined;
    logger.error('server.pages_unavailable', { error: describeError(error) });
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
    return void res.end('Internal server error.\n');
  }
  return loaded.handler(req, res, undefined, locals);
};

// The built pages from memory, the routes through the pipeline, the rest through the adapter.
const staticFiles = createStaticFastPath(loadStaticFiles(fileURLToPath(new URL('../client', ENTRY))));
const { server, shutdown } = createHttpServer(
  createDispatcher({
    services,
    front: createFront({ ...config, headers: securityHeadersFor(withBuiltEndpoint()) }),
    staticFiles,
    astro,
    limitArrival: limitArrival(config.requestTimeoutMs),
  }),
  { requestTimeoutMs: config.requestTimeoutMs, uploadTimeoutMs: config.uploads.timeoutMs },
);
server.once('error', (error) => {
  stopStarting(new StartupError(startupFailureLine(error, { step: 'listen', host: config.host, port: config.port })));
  process.exit();
});
server.listen(config.port, config.host, () => {
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  logger.info('server.listening', { url: `http://${host}:${port}`, port });
  // Once the site is up: messages left pending by an earlier process go out first.
  services.start();
});

/**
 * The configuration with the contact endpoint the pages were built with: the CSP must allow
 * what the script was built to call, whatever CONTACT_FORM_ENDPOINT says at run time.
 */
function withBuiltEndpoint(): Config {
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

/** How long requests in flight may take to finish once a stop is asked for. */
const SHUTDOWN_GRACE_MS = 10_000;

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info('server.stopping', { signal });
  // The workers finish what they are sending (so its outcome is recorded) while requests
  // drain; the connections close only after both.
  const background = services.stopBackground();
  const how = await shutdown(SHUTDOWN_GRACE_MS);
  if (how === 'forced') logger.warn('server.stop_forced', { note: `requests still running after ${SHUTDOWN_GRACE_MS / 1000} s were cut off` });
  await background;
  await services.close();
  logger.info('server.stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
