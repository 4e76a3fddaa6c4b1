import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The nearest folder at or above `start` that holds a package.json, above any node_modules.
 * Hint: from src/lib (sources, tests) and from dist/server (the built server) alike, that is the project;
 * installed in an owner's site (node_modules/site-forms), it is the owner's project, whose `.env` and
 * data are theirs, never the package's folder, which the next install replaces.
 */
export function findProjectRoot(start: string): string {
  const installed = start.indexOf(`${sep}node_modules${sep}`);
  const from = installed === -1 ? start : start.slice(0, installed);
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && !isThisPackage(dir)) return dir;
    if (dirname(dir) === dir) return start;
  }
}

/**
 * Whether `dir` is this package's own folder: in the starter's workspace (packages/site-forms,
 * linked, not under node_modules) the project is the folder above it.
 */
function isThisPackage(dir: string): boolean {
  try {
    return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name === 'site-forms';
  } catch {
    return false;
  }
}

/** The folder of package.json, whatever the working directory: where `.env` is read and a relative `DATA_DIR` lives. */
export const PROJECT_ROOT = findProjectRoot(dirname(fileURLToPath(import.meta.url)));

/** A path from the configuration, made absolute against the project's folder (an absolute path stays as it is). */
export function fromProjectRoot(path: string, root: string = PROJECT_ROOT): string {
  return resolve(root, path);
}
