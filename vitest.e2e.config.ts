/// <reference types="vitest/config" />
import { resolve } from 'node:path';
import { getViteConfig } from 'astro/config';
import { TEST_FORMS_CONFIG, TEST_SITE_CONFIG } from './tests/support/build-site.ts';

// The browser tests (npm run test:e2e): headless Chromium against the built server.
// Through Astro's Vite config like vitest.config.ts, so both suites resolve the same way, with the
// suite's own settings and forms in place of the owner's (decision 0144).
export default getViteConfig({
  resolve: { alias: { '#site-config': resolve(TEST_SITE_CONFIG), '#forms-config': resolve(TEST_FORMS_CONFIG) } },
  test: {
    include: ['tests/e2e/**/*.test.ts'],
    // The foreign site's proof runs on its own (vitest.foreign.config.ts): it installs and builds another site.
    exclude: ['tests/**/foreign-site*.test.ts'],
    globalSetup: ['tests/support/services-browser.ts', 'tests/support/build-site.ts'],
    // One file at a time: each starts a server and a browser, and CI machines have 2 cores.
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
