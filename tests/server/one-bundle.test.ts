import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

// The build (tests/support/build-site.ts) has two halves: our server (dist/server/start.mjs)
// and the pages Astro bundled. The request's road lives in the first alone; the pages get
// what they need as `locals` (docs/decisions/0132-one-app-per-request-context.md), so no
// state has to be shared between two copies of a module.
const SERVER = fileURLToPath(new URL('../../dist/server/', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function astroFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return astroFiles(path);
    return entry.name.startsWith('start.mjs') ? [] : [path];
  });
}

describe('one road, in one bundle', () => {
  // The events only the pipeline and the client hash write: each names a piece of the road.
  const ROAD = ['"request.near_miss"', '"form.request"', '"api.unexpected_error"', '"admin.request"'];

  test('our server carries the pipeline', () => {
    const server = readFileSync(join(SERVER, 'start.mjs'), 'utf8');
    for (const event of ROAD) expect(server).toContain(event);
  });

  test('our server loads nothing of site-forms from node_modules: the owner’s settings and the forms they define are in the bundle', () => {
    // Bundled from the project's own site.config.ts and forms.config.ts, which import
    // `site-forms/config` as an owner's do (the suite's fixtures import the sources by path). An
    // import left external would be a second copy of the library beside the bundle's, its texts
    // read from the package's neutral settings: an owner's forms in English on a German site.
    const out = mkdtempSync(join(tmpdir(), 'server-bundle-'));
    try {
      const run = spawnSync(process.execPath, ['scripts/build-server.mjs', out], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, SITE_CONFIG: '', FORMS_CONFIG: '' },
      });
      expect(run.status, run.stderr).toBe(0);
      const server = readFileSync(join(out, 'server/start.mjs'), 'utf8');
      expect(server).toContain('// forms.config.ts');
      expect(server.match(/(?:from|import\()\s*["']site-forms[^"']*["']/g) ?? []).toEqual([]);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  test('no page of Astro’s bundle carries a copy of it', () => {
    const files = astroFiles(SERVER);
    expect(files.length).toBeGreaterThan(3);
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const event of ROAD) expect(text.includes(event), `${file} has ${event}`).toBe(false);
    }
  });
});
