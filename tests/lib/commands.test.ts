import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { COMMAND_STYLE, commandStyleOf, toolCommand } from '../../packages/site-forms/src/lib/commands.ts';

const base = mkdtempSync(join(tmpdir(), 'site-forms-commands-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A project folder with `manifest` as its package.json (none when undefined). */
function project(name: string, manifest: string | undefined): string {
  const folder = join(base, name);
  mkdirSync(folder);
  if (manifest !== undefined) writeFileSync(join(folder, 'package.json'), manifest);
  return folder;
}

const STARTER_SCRIPTS = {
  inbox: 'node src/cli/inbox.ts',
  subscribers: 'node src/cli/subscribers.ts',
  db: 'node src/cli/db.ts',
  admin: 'node src/cli/admin.ts',
  doctor: 'node src/cli/doctor.ts',
};

describe('which command an owner types where the site runs', () => {
  test.each([
    ['the starter’s checkout: a script per tool', JSON.stringify({ name: 'site-forms', scripts: STARTER_SCRIPTS }), 'npm-run'],
    ['an owner’s copy of the starter, renamed', JSON.stringify({ name: 'tischlerei', scripts: { ...STARTER_SCRIPTS, build: 'astro build' } }), 'npm-run'],
    ['an owner’s Astro site (Astro’s blog example)', JSON.stringify({ name: '@example/blog', scripts: { dev: 'astro dev', build: 'astro build' } }), 'npx'],
    ['an owner’s site with one of the tools as a script only', JSON.stringify({ scripts: { inbox: 'site-forms inbox' } }), 'npx'],
    ['a package.json without scripts', '{}', 'npx'],
    ['a package.json that is not JSON', '{ name: ', 'npx'],
    ['no package.json', undefined, 'npx'],
  ])('%s: %s', (_, manifest, style) => {
    expect(commandStyleOf(project(_.replace(/\W+/g, '-'), manifest))).toBe(style);
  });

  test('this checkout, where the tests run, is the starter', () => {
    expect(COMMAND_STYLE).toBe('npm-run');
  });

  test.each([
    ['inbox', 'list --status spam', {}, 'npm run inbox -- list --status spam', 'npx site-forms inbox list --status spam'],
    ['doctor', '', {}, 'npm run doctor', 'npx site-forms doctor'],
    [
      'subscribers',
      'export --format csv',
      { silent: true },
      'npm run --silent subscribers -- export --format csv',
      'npx site-forms subscribers export --format csv',
    ],
    ['admin', 'hash-password', { silent: true }, 'npm run --silent admin -- hash-password', 'npx site-forms admin hash-password'],
  ] as const)('%s %s', (tool, args, options, npmRun, npx) => {
    expect(toolCommand(tool, args, { ...options, style: 'npm-run' })).toBe(npmRun);
    expect(toolCommand(tool, args, { ...options, style: 'npx' })).toBe(npx);
  });
});
