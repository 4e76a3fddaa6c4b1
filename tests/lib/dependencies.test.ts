import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

// Dependencies go one way: no folder of src/lib imports a folder that imports it back, however
// far round (docs/decisions/0132-one-app-per-request-context.md). The files directly in
// src/lib count as one more folder, so a utility there can use no folder at all.
const LIB = fileURLToPath(new URL('../../packages/site-forms/src/lib', import.meta.url));
const IMPORT = /(?:^|[\s;}])(?:import|export)\s[^'";]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? files(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The folder of src/lib a file is in: its first segment, or '.' for the files at the top. */
const folderOf = (path: string) => {
  const parts = relative(LIB, path).split(sep);
  return parts.length > 1 ? parts[0]! : '.';
};

/** Every edge between two folders, with one import that makes it, for the message. */
function folderEdges(): Map<string, Map<string, string>> {
  const edges = new Map<string, Map<string, string>>();
  for (const file of files(LIB)) {
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = normalize(join(dirname(file), match[1] ?? match[2]!));
      if (!target.startsWith(LIB)) continue;
      const [from, to] = [folderOf(file), folderOf(target)];
      if (from === to) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      edges.get(from)!.set(to, `${relative(LIB, file)} imports ${relative(LIB, target)}`);
    }
  }
  return edges;
}

/** The folders from which `start` can be reached again, each with the path that leads back. */
function cycleThrough(start: string, edges: Map<string, Map<string, string>>): string[] | undefined {
  const seen = new Set<string>();
  const walk = (at: string, path: string[]): string[] | undefined => {
    for (const [next, why] of edges.get(at) ?? []) {
      if (next === start) return [...path, why];
      if (seen.has(next)) continue;
      seen.add(next);
      const found = walk(next, [...path, why]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start, []);
}

describe('dependencies between the folders of src/lib', () => {
  test('the scan finds the edges it must (it would see a cycle)', () => {
    const edges = folderEdges();
    expect(edges.get('contact')?.has('submissions')).toBe(true);
    expect(edges.get('pipeline')?.has('contact')).toBe(true);
    expect(
      cycleThrough(
        'a',
        new Map([
          ['a', new Map([['b', 'a imports b']])],
          ['b', new Map([['a', 'b imports a']])],
        ]),
      ),
    ).toEqual(['a imports b', 'b imports a']);
  });

  test('no folder imports one that imports it back', () => {
    const edges = folderEdges();
    const cycles = [...edges.keys()].map((folder) => cycleThrough(folder, edges)).filter((cycle) => cycle !== undefined);
    expect(cycles).toEqual([]);
  });
});

describe('per-request context', () => {
  // What a page needs travels as `Astro.locals` (docs/decisions/0132-one-app-per-request-context.md):
  // no module of src/ keeps process-wide state for another bundle to find.
  const SRC = fileURLToPath(new URL('../../packages/site-forms/src/', import.meta.url));
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? sources(path) : /\.(ts|astro|mjs)$/.test(entry.name) ? [path] : [];
    });

  test('no globalThis slot and no AsyncLocalStorage in src/', () => {
    const files = sources(SRC);
    expect(files.length).toBeGreaterThan(100);
    // One exception, and no other: the stop an owner's own server calls (`closeForms()` of
    // site-forms/runtime) reaches the services inside the bundle Astro built, a module graph of
    // its own, through one key of the global symbol registry (decision 0226).
    const BRIDGE = ['integration/runtime.mjs', 'integration/server.ts'];
    const found = files.filter((file) => /\bglobalThis\b|\bAsyncLocalStorage\b/.test(readFileSync(file, 'utf8'))).map((file) => relative(SRC, file));
    expect(found.filter((file) => !BRIDGE.includes(file))).toEqual([]);
    for (const file of BRIDGE) {
      const slots = readFileSync(join(SRC, file), 'utf8').match(/Symbol\.for\('[^']+'\)/g) ?? [];
      expect(new Set(slots), file).toEqual(new Set(["Symbol.for('site-forms.closeForms')"]));
    }
  });
});
