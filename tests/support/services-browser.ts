/** The browser suites' services (vitest.e2e.config.ts and vitest.foreign.config.ts's global setup; tests/support/services.ts). */
import { checkServices } from './services.ts';

export const { setup, teardown } = checkServices(['chromium', 'nginx', 'openssl']);
