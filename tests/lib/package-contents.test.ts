import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';

/**
 * What `npm pack` of packages/site-forms ships (issue 40 item 6): the package's own files and
 * nothing of the repository around it. The list is npm's own (`npm pack --dry-run --json`), so a
 * `files` entry, an `.npmignore` or a file moved into the package shows here as an owner gets it.
 */

const PACKAGE = fileURLToPath(new URL('../../packages/site-forms/', import.meta.url));
let shipped: string[];

beforeAll(() => {
  const result = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: PACKAGE, encoding: 'utf8' });
  expect(result.status, result.stderr).toBe(0);
  shipped = (JSON.parse(result.stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path).sort();
});

describe('npm pack of packages/site-forms', () => {
  test('ships the README, the CHANGELOG, the licence and the manifest at its root, and nothing else there', () => {
    expect(shipped.filter((path) => !path.includes('/'))).toEqual(['CHANGELOG.md', 'LICENSE', 'README.md', 'package.json']);
  });

  test('ships only the command, the source (or its build) and those four files: no tests, no decision records, no starter', () => {
    const elsewhere = shipped.filter((path) => path.includes('/') && !/^(bin|src|dist)\//.test(path));
    expect(elsewhere).toEqual([]);
    expect(shipped.filter((path) => /(^|\/)tests?\/|\.test\.[cm]?[jt]s$|\.spec\.[cm]?[jt]s$/.test(path))).toEqual([]);
    expect(shipped.filter((path) => /(^|\/)(decisions|fixtures|examples|screenshots|bench|deploy|\.ci)\//.test(path))).toEqual([]);
  });

  test('ships none of the starter’s own files: its pages, its settings, its Astro config, its server build', () => {
    const starter = ['src/pages/', 'site.config.ts', 'forms.config.ts', 'astro.config.mjs', 'scripts/', '.env', 'public/'];
    expect(shipped.filter((path) => starter.some((file) => path === file || path.startsWith(file)))).toEqual([]);
  });

  test('ships every file its exports, imports and bin name', () => {
    const manifest = JSON.parse(readFileSync(`${PACKAGE}package.json`, 'utf8')) as {
      exports: Record<string, string | Record<string, string>>;
      imports: Record<string, string>;
      bin: Record<string, string>;
    };
    const named = [
      ...Object.values(manifest.exports).flatMap((target) => (typeof target === 'string' ? [target] : Object.values(target))),
      ...Object.values(manifest.imports),
      ...Object.values(manifest.bin),
    ].map((path) => path.replace(/^\.\//, ''));
    expect(named.filter((path) => !shipped.includes(path))).toEqual([]);
  });
});
