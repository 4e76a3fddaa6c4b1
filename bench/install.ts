/**
 * `npm run bench:install`: what `site-forms` adds to an owner's node_modules (issue 40 item 3).
 * An owner-like Astro site (server output with @astrojs/node, the versions the starter uses) is
 * installed twice in temporary folders, from the npm cache where it has the packages: once bare,
 * once with the tarball `npm pack` makes of packages/site-forms. Prints both trees' sizes (`du`:
 * bytes on disk, and the files' own bytes), the difference against the target (under 40 MB), and
 * the packages only the second tree has, biggest first.
 * Hint: INSTALL_BENCH_KEEP=1 keeps the folders (their path is printed); the exit code is 1 when the
 * package adds 40 MB or more, so the figure can gate a release.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TARGET_MB = 40;
const MB = 1_000_000;
const work = mkdtempSync(join(tmpdir(), 'site-forms-install-'));

/** The starter's own Astro and adapter ranges: the owner's site is a site like it, without us. */
const starter = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
const ownerDependencies = { astro: starter.dependencies.astro, '@astrojs/node': starter.dependencies['@astrojs/node'] };

function run(cwd: string, command: string, args: string[]): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, ASTRO_TELEMETRY_DISABLED: '1' }, maxBuffer: 64 * MB });
}

/** An owner's Astro site (server output through @astrojs/node) with `extra` dependencies, installed in `name`. */
function ownerSite(name: string, extra: Record<string, string>): string {
  const site = join(work, name);
  mkdirSync(join(site, 'src/pages'), { recursive: true });
  const manifest = { name: `owner-${name}`, private: true, type: 'module', dependencies: { ...ownerDependencies, ...extra } };
  writeFileSync(join(site, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(
    join(site, 'astro.config.mjs'),
    `import node from '@astrojs/node';\nimport { defineConfig } from 'astro/config';\n\nexport default defineConfig({ output: 'server', adapter: node({ mode: 'standalone' }) });\n`,
  );
  writeFileSync(join(site, 'src/pages/index.astro'), '<h1>An owner’s site</h1>\n');
  run(site, 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error']);
  return join(site, 'node_modules');
}

/** `du` of a tree: bytes on disk (`--block-size=1`) and the files' own bytes (`--apparent-size`). */
function du(path: string): { disk: number; apparent: number } {
  const bytes = (args: string[]) => Number(run(work, 'du', ['-s', ...args, path]).split('\t')[0]);
  return { disk: bytes(['--block-size=1']), apparent: bytes(['--apparent-size', '--block-size=1']) };
}

/** Every package folder of a node_modules tree (nested ones too), by its path inside the tree, with its version. */
function packages(tree: string, prefix = ''): Map<string, string> {
  const found = new Map<string, string>();
  if (!existsSync(tree)) return found;
  for (const entry of readdirSync(tree)) {
    if (entry.startsWith('.')) continue;
    const names = entry.startsWith('@') ? readdirSync(join(tree, entry)).map((scoped) => `${entry}/${scoped}`) : [entry];
    for (const name of names) {
      const manifest = join(tree, name, 'package.json');
      if (!existsSync(manifest)) continue;
      const path = `${prefix}${name}`;
      found.set(path, (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version ?? '?');
      for (const [nested, version] of packages(join(tree, name, 'node_modules'), `${path}/node_modules/`)) found.set(nested, version);
    }
  }
  return found;
}

/** A package folder's own bytes on disk, without the packages nested in its node_modules. */
function ownSize(folder: string): number {
  const whole = du(folder).disk;
  return existsSync(join(folder, 'node_modules')) ? whole - du(join(folder, 'node_modules')).disk : whole;
}

const mb = (bytes: number) => (bytes / MB).toFixed(1);

try {
  run(join(ROOT, 'packages/site-forms'), 'npm', ['pack', '--silent', '--pack-destination', work]);
  const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack left no tarball in ${work}`);
  const bare = ownerSite('bare', {});
  const withForms = ownerSite('with-site-forms', { 'site-forms': `file:${join(work, tarball)}` });

  const [before, after] = [du(bare), du(withForms)];
  const added = { disk: after.disk - before.disk, apparent: after.apparent - before.apparent };
  const beforePackages = packages(bare);
  const afterPackages = packages(withForms);
  const additions = [...afterPackages]
    .filter(([path, version]) => beforePackages.get(path) !== version)
    .map(([path, version]) => ({ path, version, bytes: ownSize(join(withForms, path)) }))
    .sort((a, b) => b.bytes - a.bytes);

  console.log(`owner's site: astro ${ownerDependencies.astro}, @astrojs/node ${ownerDependencies['@astrojs/node']} (server output)`);
  console.log(`node_modules without site-forms: ${mb(before.disk)} MB on disk (${mb(before.apparent)} MB of files), ${beforePackages.size} packages`);
  console.log(`node_modules with site-forms:    ${mb(after.disk)} MB on disk (${mb(after.apparent)} MB of files), ${afterPackages.size} packages`);
  console.log(`site-forms adds: ${mb(added.disk)} MB on disk (${mb(added.apparent)} MB of files), ${additions.length} packages; target under ${TARGET_MB} MB`);
  console.log('\nbiggest additions (MB on disk, the package folder without its nested node_modules):');
  for (const { path, version, bytes } of additions.slice(0, 15)) console.log(`  ${mb(bytes).padStart(6)}  ${path}@${version}`);
  if (added.disk >= TARGET_MB * MB) {
    console.log(`\nover the target: ${mb(added.disk)} MB ≥ ${TARGET_MB} MB`);
    process.exitCode = 1;
  }
} finally {
  if (process.env.INSTALL_BENCH_KEEP === '1') console.log(`\nkept: ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
