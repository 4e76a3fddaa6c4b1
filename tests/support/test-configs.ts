/**
 * Loaded with `node --import` (TEST_CONFIGS_OPTION) by the tests that run a command-line tool from
 * source: `#site-config` and `#forms-config` then name the suite's settings and forms
 * (tests/fixtures/test.*.config.ts) instead of the owner's files, as the test build and
 * vitest.config.ts do (decision 0144).
 */
import { registerHooks } from 'node:module';

const FIXTURES: Record<string, string> = {
  '#site-config': new URL('../fixtures/test.site.config.ts', import.meta.url).href,
  '#forms-config': new URL('../fixtures/test.forms.config.ts', import.meta.url).href,
};

registerHooks({
  resolve: (specifier, context, nextResolve) => {
    const url = FIXTURES[specifier];
    return url ? { url, shortCircuit: true } : nextResolve(specifier, context);
  },
});
