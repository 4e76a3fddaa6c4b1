/// <reference types="vitest/config" />
import { getViteConfig } from 'astro/config';

// Through Astro's Vite config, so that `astro:env/client` and the rest resolve in tests
// exactly as in the build.
export default getViteConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    exclude: ['tests/e2e/**'],
    globalSetup: ['tests/support/build-site.ts'],
    // Real servers and real sockets: give slow machines room, but never hang forever.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
