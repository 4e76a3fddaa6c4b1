import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Builds the site once before the suites that start the real server.
 * Hint: set SKIP_BUILD=1 to reuse dist/ while iterating on tests alone.
 */
export default function buildSite(): void {
  if (process.env.SKIP_BUILD === '1') return;
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const astro = fileURLToPath(new URL('../../node_modules/astro/bin/astro.mjs', import.meta.url));
  execFileSync(process.execPath, [astro, 'build', '--silent'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ASTRO_TELEMETRY_DISABLED: '1', CONTACT_FORM_ENDPOINT: '' },
  });
  // The compiled server entry, dist/server/start.mjs, which `npm run serve` runs.
  execFileSync(process.execPath, ['scripts/build-server.mjs'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
}
