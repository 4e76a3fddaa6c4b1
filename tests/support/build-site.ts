import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
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
 * Builds the whole site again with another site.config.ts (SITE_CONFIG) into .site-builds/<name>,
 * as an owner's own site would be built; answers the path of its server entry and a way to remove it.
 */
export function buildOtherSite(name: string, siteConfig: string): { start: string; remove(): void } {
  const outDir = join('.site-builds', name);
  const env = { ...process.env, ASTRO_TELEMETRY_DISABLED: '1', CONTACT_FORM_ENDPOINT: '', SITE_CONFIG: siteConfig };
  execFileSync(process.execPath, [ASTRO, 'build', '--silent', '--outDir', outDir], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync(process.execPath, ['scripts/build-server.mjs', outDir], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  return { start: join(ROOT, outDir, 'server/start.mjs'), remove: () => rmSync(join(ROOT, outDir), { recursive: true, force: true }) };
}
