/**
 * `npm run lint:package`: would packages/site-forms install and type-check as published?
 * publint (the manifest, `exports`, the files they name; warnings count as errors), then
 * Are the Types Wrong (`attw --pack`: each entry's types resolve as Node's ESM and bundlers
 * resolve them) on the tarball `npm pack` makes (decision 0237).
 * Hint: the package is ESM only (`--profile esm-only`: Astro 7 is too), and the one finding left
 * aside is an import of an `.astro` component from `site-forms/components`' types: TypeScript
 * resolves `*.astro` through Astro's own module declaration in the owner's project (astro/client,
 * which every Astro project's env.d.ts or tsconfig brings), which attw, reading the tarball alone,
 * does not load. Any other finding fails.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const PACKAGE = 'packages/site-forms';

function run(command, args) {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return result;
}

const publint = run('npx', ['--no-install', 'publint', 'run', PACKAGE, '--strict']);
process.stdout.write(publint.stdout);
process.stderr.write(publint.stderr);
let failed = publint.status !== 0;

// Into a file, not a pipe: attw exits as soon as it has written, and a pipe cut its report short.
const reportFile = join(mkdtempSync(join(tmpdir(), 'attw-')), 'report.json');
const out = openSync(reportFile, 'w');
const attw = spawnSync('npx', ['--no-install', 'attw', '--pack', PACKAGE, '--profile', 'esm-only', '--format', 'json'], { stdio: ['ignore', out, 'inherit'] });
closeSync(out);
if (attw.error) throw attw.error;
const report = JSON.parse(readFileSync(reportFile, 'utf8'));
rmSync(dirname(reportFile), { recursive: true, force: true });
const ignored = new Set(['node10', 'node16-cjs']);
const problems = (report.analysis?.problems ?? []).filter(
  (problem) => !ignored.has(problem.resolutionKind) && !(problem.kind === 'InternalResolutionError' && problem.moduleSpecifier.endsWith('.astro')),
);
const astroImports = (report.analysis?.problems ?? []).filter(
  (problem) => problem.kind === 'InternalResolutionError' && problem.moduleSpecifier.endsWith('.astro'),
);
if (problems.length > 0) {
  failed = true;
  console.error(`attw: ${problems.length} problem(s) in ${report.analysis.packageName}@${report.analysis.packageVersion}:`);
  for (const problem of problems) {
    const where = problem.entrypoint ?? problem.fileName;
    console.error(
      `  ${problem.kind} ${where}${problem.moduleSpecifier ? ` → ${problem.moduleSpecifier}` : ''} (${problem.resolutionKind ?? problem.resolutionOption})`,
    );
  }
} else {
  const entries = Object.keys(report.analysis.entrypoints).join(', ');
  console.log(`attw (esm-only): no problems in ${entries} (${astroImports.length} imports of .astro components left to Astro's own types)`);
}
process.exitCode = failed ? 1 : 0;
