// Compiles the server entry (src/server/start.ts and the lib it uses) into one file,
// dist/server/start.mjs, run by `npm run serve`. Running from source works too
// (`node src/server/start.ts`), but Node's type stripping costs about 18 MB of memory
// for the life of the process (docs/performance.md).
import { build } from 'esbuild';

await build({
  entryPoints: ['src/server/start.ts'],
  outfile: 'dist/server/start.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  // Packages stay in node_modules, loaded as they are when run from source.
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
