/**
 * `npm run dev`: Astro's dev server behind the same dispatcher as `npm start`. The
 * configuration comes from `.env` and the environment, checked and logged the same way
 * (src/server/boot.ts), so /admin, mail and the limits work in dev as they will in production.
 * Loaded by the integration (src/integration/integration.ts) when Astro's dev server starts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { securityHeadersFor } from '../lib/http/security-headers.ts';
import { withinMount } from '../lib/http/mount.ts';
import { findTarget, pathOf } from '../lib/pipeline/routes.ts';
import { boot } from './boot.ts';
import { createDispatcher } from './dispatch.ts';
import { createFront } from './front.ts';

/** Where Astro's dev server looks for the `locals` of a request (the adapters' own hand-over). */
const ASTRO_LOCALS = Symbol.for('astro.locals');

/** A connect middleware, as Vite's dev server takes one. */
export type DevMiddleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/** What the integration tells the dispatcher of the owner's site. */
export type DevOptions = {
  /**
   * Whether Astro's router takes a path (decoded, without its query) to a route of the owner's
   * own project (decision 0190): such a request goes on to Astro untouched, as the built server
   * hands it to the owner's route, never to our JSON 404 or 405. Unset in the starter, whose
   * pages are the dispatcher's to guard.
   */
  ownersRoute?: (pathname: string) => boolean;
  /**
   * The prefix of the integration's routes (Astro's `base`, then `siteForms({ base })`; decision 0230):
   * only what is under it is ours, and the dispatcher reads it without the prefix. '' unless given.
   */
  mount?: string;
};

/** The dispatcher of `astro dev`, and what the integration tells it of the dev server. */
export type DevServer = {
  middleware: DevMiddleware;
  /** Logs the address the dev server listens on (Astro's choice, not the .env's PORT). */
  listening(address: AddressInfo): void;
  close(): Promise<void>;
};

/**
 * Boots the services and answers every request as production does: the front (421, security
 * headers relaxed for Vite's scripts), the API's routes and near misses through the pipeline,
 * 405 and 413 before Astro; what is left goes on to Vite and Astro with its `locals`.
 * Hint: Vite's own checks come first (its Host check, decision 0193): the integration adds this
 * with `server.middlewares.use`.
 */
export async function createDevMiddleware(options: DevOptions = {}): Promise<DevServer> {
  // Astro's dev server listens where `--port` and `--host` say: the configuration's HOST and PORT are not logged as its address.
  const services = await boot({ address: 'elsewhere' });
  services.start();
  const handOn = new WeakMap<IncomingMessage, () => void>();
  const dispatch = createDispatcher({
    services,
    front: createFront({ ...services.config, headers: securityHeadersFor(services.config, { development: true }) }),
    // Vite serves public/ and the modules itself, as they change.
    staticFiles: () => false,
    astro: (req, _res, locals) => {
      Reflect.set(req, ASTRO_LOCALS, locals);
      handOn.get(req)?.();
    },
  });
  return {
    middleware: (req, res, next) => {
      const sent = req.url ?? '/';
      const within = withinMount(sent, options.mount ?? '');
      // Outside the prefix: the owner's paths, for Vite and Astro.
      if (within === undefined) return next();
      if (options.ownersRoute && isOwners(req.method, within, sent, options.ownersRoute)) return next();
      // The dispatcher reads the path without the prefix; Astro gets it back as sent, for its router.
      req.url = within;
      handOn.set(req, () => {
        req.url = sent;
        next();
      });
      void dispatch(req, res);
    },
    listening: ({ address, port }) => {
      const host = address.includes(':') ? `[${address}]` : address;
      services.logger.info('server.listening', { url: `http://${host}:${port}`, port });
    },
    close: () => services.close(),
  };
}

/**
 * Whether a request is for a route of the owner's that the dispatcher would otherwise answer
 * itself: a near miss under /api (our JSON 404) or a post to what it takes for a page (our JSON
 * 405). An exact route of ours stays ours; a page's GET goes through the dispatcher as before.
 */
function isOwners(method: string | undefined, within: string, sent: string, ownersRoute: (pathname: string) => boolean): boolean {
  const target = findTarget(within);
  if (target.kind === 'route') return false;
  if (target.kind === 'elsewhere' && (method === 'GET' || method === 'HEAD')) return false;
  try {
    return ownersRoute(decodeURI(pathOf(sent)));
  } catch {
    return false;
  }
}
