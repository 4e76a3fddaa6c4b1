import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ASTRO = fileURLToPath(new URL('../../node_modules/astro/bin/astro.mjs', import.meta.url));

/**
 * The site settings and forms the suite checks (tests/fixtures/test.*.config.ts), as paths from the
 * project's root: the test build, the in-process imports (vitest.config.ts) and the command-line
 * tools the tests run read them in place of the owner's site.config.ts and forms.config.ts.
 */
export const TEST_SITE_CONFIG = 'tests/fixtures/test.site.config.ts';
export const TEST_FORMS_CONFIG = 'tests/fixtures/test.forms.config.ts';

/** What a build reads from a checkout: copied into a build's own tree, node_modules linked. */
const TREE = ['src', 'public', 'scripts', 'tests/fixtures', 'astro.config.mjs', 'package.json', 'tsconfig.json', 'site.config.ts', 'forms.config.ts'];

/**
 * A page that places one of the owner's forms by its name (`<FormPage form="quote" />`,
 * docs/examples/quote/): the project ships none (its own pages name no form), and a build with the
 * suite's forms has no such form, so it stays out.
 */
function placesOwnersForm(path: string): boolean {
  return /\.astro$/.test(path) && /<FormPage\s[^>]*\bform=["']/.test(readFileSync(path, 'utf8'));
}

/**
 * Copies the project's tree into `root` (emptied first), without the pages of the owner's own
 * forms; node_modules and the forms package linked.
 * Hint: the suite's builds never read the owner's pages, settings or forms, so an owner's
 * customised checkout passes the suite as the project's does (decision 0144).
 */
function copyTree(root: string): void {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const pages = join(ROOT, 'src/pages');
  for (const entry of TREE) {
    cpSync(join(ROOT, entry), join(root, entry), { recursive: true, filter: (path) => !path.startsWith(pages) || !placesOwnersForm(path) });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  // The forms package as the checkout has it (node_modules/site-forms links to it too): the suite's
  // settings in tests/fixtures import its modules by a relative path.
  symlinkSync(join(ROOT, 'packages'), join(root, 'packages'), 'dir');
}

/**
 * Runs one step of a build in `root`; its terminal output goes to ours, and a failure throws with
 * it, so a test can read why a build stopped.
 */
function step(root: string, env: NodeJS.ProcessEnv, args: string[]): void {
  const run = spawnSync(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  process.stderr.write(run.stderr ?? '');
  if (run.status !== 0) throw new Error(`${args.join(' ')} failed:\n${run.stderr ?? run.error?.message ?? ''}`);
}

/** Writes each of `files` (a path from the project's root, and its text) into the copy at `root`. */
function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

/** `astro build` then the server entry, in `root`, into its dist/ (or `outDir`). */
function build(root: string, env: Record<string, string>, outDir = 'dist'): void {
  const all = { ...process.env, ASTRO_TELEMETRY_DISABLED: '1', CONTACT_FORM_ENDPOINT: '', ...env };
  step(root, all, [ASTRO, 'build', '--silent', '--outDir', outDir]);
  step(root, all, ['scripts/build-server.mjs', outDir]);
}

/**
 * The package's dist/ rebuilt when a file of its src/ is newer than it (a checkout after a merge, an
 * edit): every build here bundles the package from dist/, as an owner's does, and `npm install`
 * alone builds it (the root's `prepare`), so a stale dist/ would test yesterday's code. Called once
 * per run, before the builds (never from tests running side by side: two builds would write one dist/).
 */
export function freshPackage(): void {
  const pkg = join(ROOT, 'packages', 'site-forms');
  const built = statSync(join(pkg, 'dist', 'index.js'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const newest = (dir: string): number =>
    Math.max(
      0,
      ...readdirSync(dir, { withFileTypes: true }).map((entry) =>
        entry.isDirectory() ? newest(join(dir, entry.name)) : statSync(join(dir, entry.name)).mtimeMs,
      ),
    );
  if (newest(join(pkg, 'src')) > built) step(pkg, process.env, ['scripts/build.mjs']);
}

/**
 * Builds the site the suite checks once, before the suites that start the real server: the
 * project's pages with the suite's settings and forms, into dist/.
 * Hint: set SKIP_BUILD=1 to reuse dist/ while iterating on tests alone.
 */
export default function buildSite(): void {
  if (process.env.SKIP_BUILD === '1') return;
  freshPackage();
  const root = join(ROOT, '.site-builds', 'test-site');
  copyTree(root);
  build(root, { SITE_CONFIG: TEST_SITE_CONFIG, FORMS_CONFIG: TEST_FORMS_CONFIG });
  rmSync(join(ROOT, 'dist'), { recursive: true, force: true });
  renameSync(join(root, 'dist'), join(ROOT, 'dist'));
  rmSync(root, { recursive: true, force: true });
}

/**
 * Builds the whole site again with another site.config.ts (SITE_CONFIG) and more variables
 * (FORMS_CONFIG names another forms.config.ts; the suite's own unless given) into
 * .site-builds/<name>, as another owner's site would be built, with `files` written over the
 * copy (the pages of its forms, say); answers the path of its server entry and a way to remove it.
 * Hint: both paths are read in the build's copy of the tree, so they name files of tests/fixtures.
 */
export function buildOtherSite(
  name: string,
  siteConfig: string,
  more: Record<string, string> = {},
  files: Record<string, string> = {},
): { start: string; remove(): void } {
  const root = join(ROOT, '.site-builds', name);
  copyTree(root);
  writeFiles(root, files);
  build(root, { SITE_CONFIG: siteConfig, FORMS_CONFIG: TEST_FORMS_CONFIG, ...more });
  return { start: join(root, 'dist/server/start.mjs'), remove: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * Builds the site as an owner would after editing a fresh checkout: a copy of the project's
 * sources in .site-builds/<name>/ with `files` written over it (for example a page in src/pages
 * and their forms.config.ts), node_modules linked; answers the path of its server entry and a way
 * to remove it. The settings and forms are the suite's unless `files` holds site.config.ts or
 * forms.config.ts.
 * Hint: a copy, not the checkout itself, so that a page added for one test never reaches another build.
 */
export function buildOwnerSite(name: string, files: Record<string, string>): { start: string; root: string; remove(): void } {
  const root = join(ROOT, '.site-builds', name);
  copyTree(root);
  writeFiles(root, files);
  build(root, {
    SITE_CONFIG: 'site.config.ts' in files ? '' : TEST_SITE_CONFIG,
    FORMS_CONFIG: 'forms.config.ts' in files ? '' : TEST_FORMS_CONFIG,
  });
  return { start: join(root, 'dist/server/start.mjs'), root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
