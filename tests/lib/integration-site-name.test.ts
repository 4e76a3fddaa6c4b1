import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import type { Plugin } from 'vite';
import { siteForms, siteNameOf } from '../../packages/site-forms/src/integration/integration.ts';

// The site's name in an owner's Astro site with no site.config.ts (decision 0207): the host of
// Astro's own `site`, which the owner already set, rather than the neutral "Forms".
const empty = mkdtempSync(join(tmpdir(), 'site-forms-name-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

describe('the name of an owner’s site from Astro’s `site`', () => {
  test.each([
    ['https://www.baeckerei-korn.example', 'baeckerei-korn.example'],
    ['https://baeckerei-korn.example/blog/', 'baeckerei-korn.example'],
    ['https://WWW.Example.COM', 'example.com'],
    ['http://localhost:4321', 'localhost'],
    ['https://www.', undefined],
    ['not a url', undefined],
    [undefined, undefined],
  ])('%s: %s', (site, name) => {
    expect(siteNameOf(site)).toBe(name);
  });
});

/** What `siteForms()` makes of `#site-config` in a project with no settings files: the module's source as Vite loads it. */
async function siteModule(site: string | undefined, options: Parameters<typeof siteForms>[0] = {}): Promise<string> {
  let vite: { resolve: { alias: Record<string, string> }; plugins: Plugin[] } | undefined;
  const setup = siteForms(options).hooks['astro:config:setup'] as (parameters: unknown) => Promise<void>;
  const saved = { SITE_CONFIG: process.env.SITE_CONFIG, FORMS_CONFIG: process.env.FORMS_CONFIG };
  // The suite's own settings files are named by these variables; an owner's project names none.
  delete process.env.SITE_CONFIG;
  delete process.env.FORMS_CONFIG;
  try {
    await setup({
      config: { root: pathToFileURL(`${empty}/`), site, security: {} },
      command: 'build',
      updateConfig: (update: { vite: typeof vite }) => (vite = update.vite),
      injectRoute: () => {},
      addMiddleware: () => {},
    });
  } finally {
    Object.assign(process.env, saved);
  }
  const id = vite!.resolve.alias['#site-config']!;
  const plugin = vite!.plugins.find((p) => p.name === 'site-forms:settings')!;
  const resolved = (plugin.resolveId as (id: string, importer?: string) => string | undefined)(id);
  if (resolved === undefined) return `file ${id}`;
  return (plugin.load as (id: string) => string)(resolved);
}

describe('siteForms() in a project without site.config.ts', () => {
  test('takes the host of Astro’s `site` as the name its mail subjects carry', async () => {
    await expect(siteModule('https://www.baeckerei-korn.example')).resolves.toContain('defineSite({"name":"baeckerei-korn.example"})');
  });

  test('the owner’s `site` option still wins', async () => {
    await expect(siteModule('https://www.baeckerei-korn.example', { site: { name: 'Bäckerei Korn' } })).resolves.toContain('"name":"Bäckerei Korn"');
  });

  test('without Astro’s `site`, the neutral settings', async () => {
    await expect(siteModule(undefined)).resolves.toMatch(/^file .*integration\/defaults\/site\.config\.ts$/);
  });
});
