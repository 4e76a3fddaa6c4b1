/**
 * The services of an owner's Astro server, booted as its entry is imported (the integration's
 * Vite plugin makes the entry import this module first): the configuration checked at start,
 * failing naming the variable, the database opened, and the background work (delivery,
 * webhooks, the signup queue, housekeeping) started, so what waits goes out with no visitor.
 * The middleware reads the same `services`: one module, one instance in the server bundle.
 */
import ownerOptions from 'virtual:site-forms/options';
import { setMount } from '../lib/http/mount.ts';
import { boot } from '../server/boot.ts';

// The prefix of our routes (decision 0230), for the links of the mails and webhooks the background work sends.
setMount(ownerOptions.mount);

/** This process's services, ready, their background work running. */
export const services = await boot();
services.start();

/** How long a stop waits for the sends under way before it closes the database anyway. */
const STOP_GRACE_MS = 10_000;

let stopping = false;
/**
 * On SIGTERM or SIGINT the workers finish what they are sending, so its outcome is recorded, as
 * under `npm start` (src/server/start.ts); then the database closes and the process ends.
 */
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  services.logger.info('server.stopping', { signal });
  await Promise.race([services.stopBackground(), new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref())]);
  await services.close();
  services.logger.info('server.stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
