import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ASTRO = fileURLToPath(new URL('../../node_modules/astro/bin/astro.mjs', import.meta.url));

/**
 * Builds the site once before the suites that start the real server.
 * Hint: set SKIP_BUILD=1 to reuse dist/ while iterating on tests alone.
 */
export default function buildSite(): void {
  if (process.env.SKIP_BUILD === '1') return;
  execFileSync(process.execPath, [ASTRO, 'build', '--silent'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ASTRO_TELEMETRY_DISABLED: '1', CONTACT_FORM_ENDPOINT: '' },
  });
  // The compiled server entry, dist/server/start.mjs, which `npm run serve` runs.
  execFileSync(process.execPath, ['scripts/build-server.mjs'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}

/**
 * Builds the whole site again with another site.config.ts (SITE_CONFIG; '' for the project's own) and
 * more variables (FORMS_CONFIG names another forms.config.ts) into .site-builds/<name>, as an owner's own site would be built; answers the path of its server entry and a way to remove it.
 */
export function buildOtherSite(name: string, siteConfig: string, more: Record<string, string> = {}): { start: string; remove(): void } {
  const outDir = join('.site-builds', name);
  const env = { ...process.env, ASTRO_TELEMETRY_DISABLED: '1', CONTACT_FORM_ENDPOINT: '', SITE_CONFIG: siteConfig, ...more };
  execFileSync(process.execPath, [ASTRO, 'build', '--silent', '--outDir', outDir], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync(process.execPath, ['scripts/build-server.mjs', outDir], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  return { start: join(ROOT, outDir, 'server/start.mjs'), remove: () => rmSync(join(ROOT, outDir), { recursive: true, force: true }) };
}

/** What an owner's checkout holds that a build reads: copied into the owner's tree, the rest linked. */
const TREE = ['src', 'public', 'scripts', 'astro.config.mjs', 'package.json', 'tsconfig.json', 'site.config.ts', 'forms.config.ts'];

/**
 * Builds the site as an owner would after editing their checkout: a copy of the project's sources in
 * .site-builds/<name>/ with `files` written over it (for example a page in src/pages and their
 * forms.config.ts), node_modules linked; answers the path of its server entry and a way to remove it.
 * Hint: a copy, not the checkout itself, so that a page added for one test never reaches another build.
 */
export function buildOwnerSite(name: string, files: Record<string, string>): { start: string; root: string; remove(): void } {
  const root = join(ROOT, '.site-builds', name);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  for (const entry of TREE) cpSync(join(ROOT, entry), join(root, entry), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const env = { ...process.env, ASTRO_TELEMETRY_DISABLED: '1', CONTACT_FORM_ENDPOINT: '', SITE_CONFIG: '', FORMS_CONFIG: '' };
  execFileSync(process.execPath, [ASTRO, 'build', '--silent'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync(process.execPath, ['scripts/build-server.mjs'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  return { start: join(root, 'dist/server/start.mjs'), root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
