import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

// The library lives in the owner's process (issue 40 item 5, decisions 0225 and 0228): the code an
// owner's Astro server or `astro dev` runs never ends that process, and reaches Astro only through
// its public API. The command-line tools (src/cli) and the starter's standalone server
// (src/server/start.ts, decision 0227) are programs of their own, each the whole process.
const SRC = fileURLToPath(new URL('../../packages/site-forms/src', import.meta.url));
const PROGRAMS = ['cli/', 'server/start.ts'];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? files(path) : /\.(ts|mjs|astro)$/.test(entry.name) ? [path] : [];
  });
}

/** Every file an owner's process may run, by its path under src/, with its text. */
const ownersRoad = files(SRC)
  .map((path) => relative(SRC, path).split(sep).join('/'))
  .filter((path) => !PROGRAMS.some((program) => path.startsWith(program)))
  .map((path) => ({ path, text: readFileSync(join(SRC, path), 'utf8') }));

/** Each `path: line` of the files on the owner's road where `pattern` is found outside a comment. */
function found(pattern: RegExp): string[] {
  return ownersRoad.flatMap(({ path, text }) =>
    text.split('\n').flatMap((line) => (pattern.test(line.replace(/\/\/.*$|^\s*\*.*$|\/\*.*?\*\//g, '')) ? [`${path}: ${line.trim()}`] : [])),
  );
}

describe('the code of an owner’s process', () => {
  test('reads as the owner’s road: the integration, its server and the engine, not the programs of their own', () => {
    const paths = ownersRoad.map(({ path }) => path);
    expect(paths).toEqual(expect.arrayContaining(['integration/server.ts', 'integration/middleware.ts', 'server/boot.ts', 'server/dev.ts']));
    expect(paths.filter((path) => path.startsWith('cli/') || path === 'server/start.ts')).toEqual([]);
  });

  test('never ends the process: no process.exit, process.abort or process.reallyExit', () => {
    expect(found(/process\.(exit|abort|reallyExit)\s*\(/)).toEqual([]);
  });

  test('names no private module of Astro’s: no virtual:astro: id, nothing from astro/dist', () => {
    expect(found(/virtual:astro:|['"]astro\/dist\//)).toEqual([]);
  });
});
