import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The nearest folder at or above `start` that holds a package.json.
 * Hint: from src/lib (sources, tests) and from dist/server (the built server) alike, that is the project.
 */
export function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return start;
  }
}

/** The folder of package.json, whatever the working directory: where `.env` is read and a relative `DATA_DIR` lives. */
export const PROJECT_ROOT = findProjectRoot(dirname(fileURLToPath(import.meta.url)));

/** A path from the configuration, made absolute against the project's folder (an absolute path stays as it is). */
export function fromProjectRoot(path: string, root: string = PROJECT_ROOT): string {
  return resolve(root, path);
}
