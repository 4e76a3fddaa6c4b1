import { type Dirent, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { buildOtherSite, TEST_SITE_CONFIG } from './build-site.ts';
import { type Site, startSite } from './site.ts';

/** The forms of the files suites: the contact form with two file fields (`photos`, `drawing`). */
export const FILES_FORMS_CONFIG = 'tests/fixtures/files.forms.config.ts';

/**
 * A built server whose contact form takes files, built once for the calling test file (`name`
 * keeps its folder apart): the answer starts one with settings of its own; after the file every
 * one is stopped and the build removed.
 */
export function useFilesSite(name: string): (env?: Record<string, string>) => Promise<Site> {
  let built: ReturnType<typeof buildOtherSite> | undefined;
  const sites: Site[] = [];
  beforeAll(() => {
    built = buildOtherSite(`${name}-${process.pid}`, TEST_SITE_CONFIG, { FORMS_CONFIG: FILES_FORMS_CONFIG });
  }, 240_000);
  afterAll(async () => {
    for (const site of sites) await site.stop();
    built?.remove();
  });
  return async (env = {}) => {
    if (!built) throw new Error('useFilesSite: the site is built in beforeAll; start it in a test or a later hook');
    const site = await startSite(env, { start: built.start });
    sites.push(site);
    return site;
  };
}

/** Every file under a site's DATA_DIR/files, temp files included, as sorted paths relative to it. */
export function storedFiles(site: Pick<Site, 'dataDir'>): string[] {
  const root = join(site.dataDir, 'files');
  if (!existsSync(root)) return [];
  return (readdirSync(root, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
    .sort();
}
