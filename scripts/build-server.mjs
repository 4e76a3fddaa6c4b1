// Compiles the server entry (src/server/start.ts and the lib it uses) into one file,
// dist/server/start.mjs, run by `npm run serve`. Running from source works too
// (`node src/server/start.ts`), but Node's type stripping costs about 18 MB of memory
// for the life of the process (docs/performance.md).
import { resolve } from 'node:path';
import { build } from 'esbuild';

/** The site's settings, bundled in: site.config.ts, or the file SITE_CONFIG names (as the integration, src/integration/integration.ts, reads it). */
const siteConfig = {
  name: 'site-config',
  setup(build) {
    build.onResolve({ filter: /^#site-config$/ }, () => ({ path: resolve(process.env.SITE_CONFIG || 'site.config.ts') }));
  },
};

/** The owner's forms, bundled in: forms.config.ts, or the file FORMS_CONFIG names (as the integration, src/integration/integration.ts, reads it). */
const formsConfig = {
  name: 'forms-config',
  setup(build) {
    build.onResolve({ filter: /^#forms-config$/ }, () => ({ path: resolve(process.env.FORMS_CONFIG || 'forms.config.ts') }));
  },
};

/** Beside the pages Astro built: dist/ unless an argument names another folder (`astro build --outDir`). */
const outDir = process.argv[2] ?? 'dist';

await build({
  entryPoints: ['src/server/start.ts'],
  outfile: `${outDir}/server/start.mjs`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  // Packages stay in node_modules, loaded as they are when run from source.
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [siteConfig, formsConfig],
});
