/// <reference types="vitest/config" />
import { resolve } from 'node:path';
import { getViteConfig } from 'astro/config';
import { TEST_FORMS_CONFIG, TEST_SITE_CONFIG } from './tests/support/build-site.ts';

// The proof on a site that is not this one (npm run test:foreign, issue 29 item 4, decision 0170):
// each file makes another owner's Astro site from `npm pack` (tests/support/foreign-site.ts), so it
// needs no build of ours. One file at a time: each installs, builds and serves a site of its own.
export default getViteConfig({
  resolve: { alias: { '#site-config': resolve(TEST_SITE_CONFIG), '#forms-config': resolve(TEST_FORMS_CONFIG) } },
  test: {
    include: ['tests/**/foreign-site*.test.ts'],
    globalSetup: ['tests/support/services-browser.ts'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 900_000,
  },
});
