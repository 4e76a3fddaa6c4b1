/// <reference types="vitest/config" />
import { resolve } from 'node:path';
import { getViteConfig } from 'astro/config';
import { TEST_FORMS_CONFIG, TEST_SITE_CONFIG } from './tests/support/build-site.ts';

// The tests StrykerJS runs against each mutant (npm run test:mutation): the unit and handler
// tests, which call src/lib, src/scripts and the inbox command's code (src/cli/inbox/) in this
// process. Left out: the suites that start the built server or a command in a child process
// (tests/server, tests/contact, the rest of tests/cli, e2e), which run the unmutated build and
// so could kill no mutant, only cost minutes.
export default getViteConfig({
  // The suite's own settings and forms, as vitest.config.ts (decision 0144).
  resolve: { alias: { '#site-config': resolve(TEST_SITE_CONFIG), '#forms-config': resolve(TEST_FORMS_CONFIG) } },
  test: {
    // MUTATION_TESTS (comma-separated globs) narrows a run over one area to its own tests: code that
    // every store reaches (the queue) is otherwise tried against hundreds of tests for each mutant.
    include: process.env.MUTATION_TESTS?.split(',') ?? ['tests/lib/**/*.test.ts', 'tests/scripts/**/*.test.ts', 'tests/cli/inbox/**/*.test.ts'],
    // One PostgreSQL cluster for the run: Stryker reruns a file for each mutant it covers, and a
    // cluster of the file's own (initdb, start) cost more than most files' tests.
    globalSetup: ['tests/support/shared-postgres.ts'],
    // It weighs the built pages in dist/, which the mutants never reach.
    exclude: ['tests/scripts/weight.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
