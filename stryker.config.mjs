// StrykerJS (npm run test:mutation): mutates every file of src/lib, src/scripts and the inbox
// command's code (src/cli/inbox/, moved out of src/lib/contact/ by issue 30) and runs
// the unit and handler tests against each mutant. Not in CI: it takes minutes (docs/testing.md).
// A shorter run over one area: npm run test:mutation -- --mutate 'src/lib/forms/**/*.ts'
// MUTATION_REPORT names the reports of a partial run (reports/mutation/<name>.json and .html),
// so that runs over several areas can be kept side by side and summed (scripts/mutation-score.mjs).
const report = process.env.MUTATION_REPORT ?? 'mutation';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  // related: a mutant that runs at import (a schema, a table) is tried against the test files that
  // import its file, not against all of them: 47 s each otherwise.
  vitest: { configFile: 'vitest.stryker.config.ts', related: true },
  mutate: ['packages/site-forms/src/lib/**/*.ts', 'packages/site-forms/src/scripts/**/*.ts', 'packages/site-forms/src/cli/inbox/**/*.ts'],
  // Only the tests that reach a mutant run against it.
  coverageAnalysis: 'perTest',
  // Two cores on the machines this runs on; each worker is a vitest process of its own.
  concurrency: 2,
  // Several suites start real servers (SMTP, HTTP, Redis); a mutant that hangs one is killed by the timeout.
  timeoutMS: 20_000,
  reporters: ['html', 'json', 'clear-text', 'progress'],
  htmlReporter: { fileName: `reports/mutation/${report}.html` },
  jsonReporter: { fileName: `reports/mutation/${report}.json` },
  tempDirName: 'reports/.stryker-tmp',
  // docs/ and bench/ stay in the sandbox: tests/lib/docs.test.ts checks the README, the guide and the folder map against the tree.
  ignorePatterns: ['dist', 'data', 'test-results', 'reports', '.astro', '.site-builds'],
  thresholds: { high: 90, low: 85, break: null },
};
