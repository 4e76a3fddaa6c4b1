/// <reference types="vitest/config" />
import { getViteConfig } from 'astro/config';

// The browser tests (npm run test:e2e): headless Chromium against the built server.
// Through Astro's Vite config like vitest.config.ts, so both suites resolve the same way.
export default getViteConfig({
  test: {
    include: ['tests/e2e/**/*.test.ts'],
    globalSetup: ['tests/support/build-site.ts'],
    // One file at a time: each starts a server and a browser, and CI machines have 2 cores.
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
