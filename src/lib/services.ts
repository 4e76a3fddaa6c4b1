import type { DatabaseSync } from 'node:sqlite';
import { type Config, requireConfig } from './config.ts';
import { createSubmissionStore, type SubmissionStore } from './contact/store.ts';
import { createLogger, type Logger } from './log.ts';
import { type AbuseLimits, createAbuseLimits } from './rate-limit.ts';
import type { NewsletterProvider } from './newsletter/provider.ts';
import { createNewsletterProvider } from './newsletter/registry.ts';
import { openDatabase } from './store/database.ts';

/** Everything the endpoints use, built once per process from the configuration. */
export type Services = {
  config: Config;
  logger: Logger;
  db: DatabaseSync;
  provider: NewsletterProvider;
  store: SubmissionStore;
  limits: AbuseLimits;
  /** Called after a submission is stored, so delivery can start without waiting for the next poll. */
  onStored: (id: number) => void;
};

/** Builds the services: opens the database and the chosen newsletter provider. */
export function createServices(config: Config, logger: Logger): Services {
  const db = openDatabase(config.dataDir);
  return {
    config,
    logger,
    db,
    provider: createNewsletterProvider(config.newsletter, db),
    store: createSubmissionStore(db),
    limits: createAbuseLimits(config, logger),
    onStored: () => {},
  };
}

// server.ts loads this module from source while the endpoints use the copy bundled by
// Astro; a global slot lets both see the one set of services the server built.
const SLOT = Symbol.for('site-forms.services');
type Slot = { [SLOT]?: Services };

/** Makes `services` hand out these services in this process. */
export function installServices(services: Services): void {
  (globalThis as Slot)[SLOT] = services;
}

/**
 * The services of this process; under `astro dev`, where no server.ts ran, they are
 * built from the environment on first use.
 */
export function services(): Services {
  const slot = globalThis as Slot;
  slot[SLOT] ??= createServices(requireConfig(process.env), createLogger());
  return slot[SLOT];
}
