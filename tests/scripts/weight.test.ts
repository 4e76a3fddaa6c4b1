// @vitest-environment node
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';

/**
 * The pages load no framework: the script of both forms together stays under 2 KB
 * gzipped. Reads the build that the global setup made (`dist/client`), as a browser would
 * receive it: inline module scripts and the `/_astro/*.js` files the pages reference.
 */
const CLIENT = fileURLToPath(new URL('../../dist/client/', import.meta.url));
const PAGES = ['index.html', 'contact/index.html'];

/** The budget for the scripts of both pages together, gzipped. */
const SCRIPT_BUDGET_BYTES = 2048;

/** Every distinct script the pages load, by where it comes from. */
function pageScripts(): Map<string, string> {
  const scripts = new Map<string, string>();
  for (const page of PAGES) {
    const html = readFileSync(`${CLIENT}${page}`, 'utf8');
    for (const [, attributes = '', body = ''] of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
      const src = /\bsrc="([^"]+)"/.exec(attributes)?.[1];
      if (src) {
        const file = `${CLIENT}${src.replace(/^\//, '').split('?')[0]}`;
        scripts.set(src, readFileSync(file, 'utf8'));
      } else if (body.trim()) {
        // The same inline script on both pages counts once, as a cached file would.
        scripts.set(`inline:${body}`, body);
      }
    }
    for (const [, href = ''] of html.matchAll(/<link\b[^>]*\brel="modulepreload"[^>]*\bhref="([^"]+)"/g)) {
      scripts.set(href, readFileSync(`${CLIENT}${href.replace(/^\//, '')}`, 'utf8'));
    }
  }
  return scripts;
}

describe('the weight of the pages', () => {
  test('the built pages exist (the global setup builds them)', () => {
    for (const page of PAGES) expect(existsSync(`${CLIENT}${page}`), page).toBe(true);
  });

  test(`the script for both forms together stays under ${SCRIPT_BUDGET_BYTES} bytes gzipped`, () => {
    const scripts = [...pageScripts().values()];
    expect(scripts.length).toBeGreaterThan(0);
    const gzipped = scripts.reduce((sum, script) => sum + gzipSync(script).byteLength, 0);
    console.info(`form scripts: ${scripts.length} distinct, ${gzipped} bytes gzipped (budget ${SCRIPT_BUDGET_BYTES})`);
    expect(gzipped).toBeLessThanOrEqual(SCRIPT_BUDGET_BYTES);
  });

  test.each([
    ['React', /\breact(-dom)?\b|__SECRET_INTERNALS/i],
    ['Vue', /\b__VUE__|\bcreateApp\(|@vue\//],
    ['Svelte', /\bsvelte\b|\$\$props/],
    ['Preact', /\bpreact\b|__PREACT/i],
    ['an Astro island runtime', /astro-island|astro:hydrate/],
  ])('no %s in any page', (_, pattern) => {
    for (const script of pageScripts().values()) expect(script).not.toMatch(pattern);
    for (const page of PAGES) expect(readFileSync(`${CLIENT}${page}`, 'utf8')).not.toMatch(/<astro-island/);
  });
});
