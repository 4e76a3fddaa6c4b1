/**
 * The services of an owner's Astro server, booted as its entry is imported (the integration's
 * Vite plugin makes the entry import this module first): the configuration checked at start,
 * failing naming the variable, the database opened, and the background work (delivery,
 * webhooks, the signup queue, housekeeping) started, so what waits goes out with no visitor.
 * The middleware reads the same `services`: one module, one instance in the server bundle.
 * The process is the owner's (decision 0225): nothing here ends it. A start that fails prints its
 * one line and leaves the exit code 1; a stop finishes our work and leaves the exit to the owner's
 * code and to Node (decision 0226).
 */
import ownerOptions from 'virtual:site-forms/options';
import type { Services } from '../lib/app/services.ts';
import { setMount } from '../lib/http/mount.ts';
import { boot, stopStarting } from '../server/boot.ts';

// The prefix of our routes (decision 0230), for the links of the mails and webhooks the background work sends.
setMount(ownerOptions.mount);

/** This process's services, ready, their background work running. */
export const services: Services = await bootOrWait();
services.start();

/**
 * The services, or, when they cannot start, their one line on stderr, the exit code 1 and an import
 * that never completes: the owner's server never listens without its forms, and Node ends the
 * process once nothing else is left to do, the owner's own work (a log's last lines) done first.
 * Hint: not a throw: Node would print it with a source line, a stack and its version, where the
 * owner needs the one line naming the variable. Not `process.exit`: the process is the owner's.
 */
async function bootOrWait(): Promise<Services> {
  try {
    return await boot();
  } catch (error) {
    stopStarting(error);
    return new Promise<never>(() => {});
  }
}

/** How long a stop waits for the sends under way before it closes the database anyway. */
const STOP_GRACE_MS = 10_000;

/** Where `closeForms()` of `site-forms/runtime` (src/integration/runtime.mjs) finds our stop. */
const CLOSE_FORMS = Symbol.for('site-forms.closeForms');

let closing: Promise<void> | undefined;

/**
 * Stops the forms' work in this process: the workers finish what they are sending, so its outcome
 * is recorded, then the database and the other connections close. Once, whoever asks first; every
 * later call answers the same promise. What `closeForms()` of `site-forms/runtime` calls.
 */
function closeForms(signal?: NodeJS.Signals): Promise<void> {
  closing ??= (async () => {
    services.logger.info('server.stopping', signal ? { signal } : {});
    await Promise.race([services.stopBackground(), new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref())]);
    await services.close();
    services.logger.info('server.stopped');
  })();
  return closing;
}
Reflect.set(globalThis, CLOSE_FORMS, () => closeForms());

/**
 * On SIGTERM or SIGINT our work is finished (`closeForms`), beside the owner's own handlers, which
 * Node calls too. Then the exit is not ours to make: an owner who listens for the signal decides
 * what the process does (their server closed, Node ends it when nothing is left); a process where
 * no one else listens (the adapter's standalone server, which has no handler) gets the signal
 * again, as Node's default would have treated it without us: it ends by that signal.
 */
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  const listener = () => {
    void closeForms(signal).then(() => {
      if (!process.listeners(signal).includes(listener)) return;
      process.off(signal, listener);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  };
  process.on(signal, listener);
}
