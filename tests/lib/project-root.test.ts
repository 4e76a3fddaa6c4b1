import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { findProjectRoot, fromProjectRoot } from '../../packages/site-forms/src/lib/project-root.ts';

const base = mkdtempSync(join(tmpdir(), 'site-forms-root-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const project = join(base, 'project');
mkdirSync(join(project, 'dist/server'), { recursive: true });
writeFileSync(join(project, 'package.json'), '{}');
// An owner's site with this package installed: its own package.json beside node_modules/site-forms/package.json.
const owner = join(base, 'owner');
const installed = join(owner, 'node_modules/site-forms/src/lib');
mkdirSync(installed, { recursive: true });
writeFileSync(join(owner, 'package.json'), '{}');
writeFileSync(join(owner, 'node_modules/site-forms/package.json'), '{}');
const lonely = join(base, 'lonely/a/b');
mkdirSync(lonely, { recursive: true });

describe('the project folder, whatever the working directory', () => {
  test.each([
    ['from the built server in dist/server', join(project, 'dist/server'), project],
    ['from the project folder itself', project, project],
    ['with no package.json above: where the search started', lonely, lonely],
    ['from the package installed in an owner’s node_modules: the owner’s project, not the package', installed, owner],
  ])('%s', (_, start, expected) => {
    expect(findProjectRoot(start)).toBe(expected);
  });

  test('this checkout: a relative path with no root given lives beside package.json, not in the working directory', () => {
    const checkout = dirname(fileURLToPath(new URL('../../package.json', import.meta.url)));
    const cwd = process.cwd();
    process.chdir(lonely);
    try {
      expect(fromProjectRoot('./data')).toBe(join(checkout, 'data'));
    } finally {
      process.chdir(cwd);
    }
  });

  test.each([
    ['./data', '/srv/site/data'],
    ['data', '/srv/site/data'],
    ['../shared/data', '/srv/shared/data'],
    ['/var/lib/site-forms', '/var/lib/site-forms'],
  ])('DATA_DIR=%s is %s', (path, expected) => {
    expect(fromProjectRoot(path, '/srv/site')).toBe(expected);
  });
});
