/**
 * `import { closeForms } from 'site-forms/runtime'`: what an owner's own server calls when it stops
 * (decision 0226). Plain JavaScript that loads nothing else: an owner's server imports it at run
 * time, from node_modules, beside the entry Astro built.
 * Hint: the services live in the bundle Astro built (dist/server), not in this package's files:
 * src/integration/server.ts hands its stop over through a key of the global symbol registry, which
 * both copies share.
 */

/** The key under which the owner's built server leaves its stop. */
const CLOSE_FORMS = Symbol.for('site-forms.closeForms');

/**
 * Stops the forms' work in this process and answers once it is done: the workers finish what they
 * are sending (its outcome recorded), then the database closes. It ends nothing else: the owner's
 * server, and the process, are the owner's to close. Safe to call more than once, and from a
 * handler of SIGTERM of the owner's beside the integration's own; resolves at once in a process
 * whose forms never started.
 * @returns {Promise<void>}
 */
export function closeForms() {
  const close = Reflect.get(globalThis, CLOSE_FORMS);
  return typeof close === 'function' ? close() : Promise.resolve();
}
