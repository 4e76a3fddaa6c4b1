/// <reference types="vitest/config" />
import { resolve } from 'node:path';
import { getViteConfig } from 'astro/config';
import { TEST_FORMS_CONFIG, TEST_SITE_CONFIG } from './tests/support/build-site.ts';

// Through Astro's Vite config, so that `astro:env/client` and the rest resolve in tests
// exactly as in the build. The suite's own settings and forms stand in for the owner's
// (tests/fixtures/test.*.config.ts, decision 0144): an owner's customised site passes it too.
export default getViteConfig({
  resolve: { alias: { '#site-config': resolve(TEST_SITE_CONFIG), '#forms-config': resolve(TEST_FORMS_CONFIG) } },
  test: {
    include: ['tests/**/*.test.ts'],
    // The foreign site's proof runs on its own (vitest.foreign.config.ts): it installs and builds another site.
    exclude: ['tests/e2e/**', 'tests/**/foreign-site*.test.ts'],
    globalSetup: ['tests/support/services-unit.ts', 'tests/support/build-site.ts'],
    // Real servers and real sockets: give slow machines room, but never hang forever.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
