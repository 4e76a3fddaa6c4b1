/** The unit, wire and built-server suite's services (vitest.config.ts's global setup; tests/support/services.ts). */
import { checkServices } from './services.ts';

export const { setup, teardown } = checkServices(['postgresql', 'redis', 'nginx', 'openssl', 'clamd', 'script']);
