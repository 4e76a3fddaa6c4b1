// The library's build (decision 0220): tsc compiles src/**/*.ts into dist/ (JavaScript, .d.ts,
// source maps, every `./x.ts` import rewritten to `./x.js`); then the files Vite reads as they are,
// the .astro components and pages and the CSS, are copied beside them, their imports of our
// TypeScript modules pointing at the compiled .js, so that Vite and Node load one instance of
// each module. Run by `npm run build` here and by `prepare` on `npm install` of the workspace.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const dist = join(root, 'dist');

/**
 * The build needs the development tools: TypeScript and the packages' types. A production install
 * (`npm ci --omit=dev`) has the types of none (Astro may bring TypeScript itself), and keeps the
 * dist/ it was given.
 */
let tsc;
try {
  const require = createRequire(join(root, 'package.json'));
  for (const types of ['@types/node', '@types/busboy', '@types/pg']) require.resolve(`${types}/package.json`);
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  if (!existsSync(join(dist, 'integration', 'index.js'))) {
    throw new Error('site-forms: no development tools to build dist/ with, and no dist/ (npm install with them first).');
  }
  console.log('site-forms: no development tools here (a production install): the dist/ already built is kept.');
}

if (tsc) build(tsc);

/** Compiles src/ into a new dist/ with `tsc`, then copies what Vite reads as it is. */
function build(tsc) {
  rmSync(dist, { recursive: true, force: true });
  const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (compiled.status !== 0) {
    process.exitCode = compiled.status ?? 1;
    throw new Error('site-forms: tsc failed (above).');
  }

  /** A relative import of one of our TypeScript modules, in an .astro file's script or frontmatter. */
  const TS_IMPORT = /((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]+)\.ts(['"])/g;

  /** Every file under `dir`, as a path relative to it. */
  function files(dir) {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
  }

  /**
   * The modules that re-export the .astro components (`site-forms/components`, `site-forms/pages`):
   * only Vite reads them, and they have no types of their own to strip, so they ship as they are, as
   * their JavaScript and their declarations.
   */
  for (const module of ['components', 'page-components']) {
    for (const name of [`${module}.js`, `${module}.d.ts`]) cpSync(join(src, 'integration', `${module}.ts`), join(dist, 'integration', name));
  }

  for (const file of files(src)) {
    if (file.endsWith('.ts')) continue;
    const target = join(dist, file);
    mkdirSync(dirname(target), { recursive: true });
    if (file.endsWith('.astro')) writeFileSync(target, readFileSync(join(src, file), 'utf8').replace(TS_IMPORT, '$1$2.js$3'));
    else cpSync(join(src, file), target);
  }
}
