// @ts-check
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import node from '@astrojs/node';
import { defineConfig, envField } from 'astro/config';
import { loadEnv } from 'vite';
// One limit for every body: our dispatcher refuses larger ones with 413 before Astro sees them.
import { BODY_LIMIT_BYTES } from './src/lib/http/form.ts';
import { missingFormPages } from './src/lib/forms/pages.ts';

/**
 * Writes dist/build-settings.json: what the build put into the pages that the server must
 * agree with, whatever its own environment says at run time. Today the contact form's
 * endpoint, which the Content-Security-Policy must allow (docs/decisions/0123-built-endpoint.md).
 * @returns {import('astro').AstroIntegration}
 */
function buildSettings() {
  return {
    name: 'site-forms:build-settings',
    hooks: {
      'astro:build:done': ({ dir }) => {
        // As astro:env reads it: the process's environment over the .env files.
        const env = { ...loadEnv('production', process.cwd(), ''), ...process.env };
        const settings = { contactFormEndpoint: env.CONTACT_FORM_ENDPOINT || null };
        writeFileSync(new URL('../build-settings.json', dir), `${JSON.stringify(settings, null, 2)}\n`);
      },
    },
  };
}

/**
 * Stops the build when one of the owner's forms (forms.config.ts, or FORMS_CONFIG's file) names a
 * `page` that no page of src/pages serves, naming the form and the page; under `npm run dev` it
 * says so in the terminal instead, as the page may be the one being written.
 * @returns {import('astro').AstroIntegration}
 */
function formPagesExist() {
  let building = false;
  return {
    name: 'site-forms:form-pages-exist',
    hooks: {
      'astro:config:setup': ({ command }) => {
        building = command === 'build';
      },
      'astro:routes:resolved': async ({ routes, logger }) => {
        const file = resolve(process.env.FORMS_CONFIG || 'forms.config.ts');
        const { default: settings } = await import(pathToFileURL(file).href);
        const missing = missingFormPages(settings.forms, routes);
        if (missing.length === 0) return;
        const problem = `${missing.join('; ')} (add the page, or set the form's page to one that exists).`;
        if (building) throw new Error(problem);
        logger.error(problem);
      },
    },
  };
}

/**
 * Under `npm run dev`, every request goes through the same dispatcher as in production
 * (src/server/dev.ts): the same `.env`, the same answers, /admin and mail included.
 * Hint: Vitest runs Vite's server too, to load modules; it serves no request, so nothing boots there.
 * @returns {import('astro').AstroIntegration}
 */
function devServer() {
  return {
    name: 'site-forms:dev-server',
    hooks: {
      'astro:server:setup': async ({ server }) => {
        if (process.env.VITEST) return;
        const { createDevMiddleware } = await import(new URL('./src/server/dev.ts', import.meta.url).href);
        const dev = await createDevMiddleware();
        // First in the stack, before Vite's own checks (its Host check answers 403 in plain text):
        // dev answers as production does, 421 included. What we pass on meets them as before.
        server.middlewares.stack.unshift({ route: '', handle: dev.middleware });
        server.httpServer?.once('close', () => void dev.close());
      },
    },
  };
}

/**
 * The site's settings are site.config.ts (package.json's `#site-config`); SITE_CONFIG names
 * another file, for a second site built from the same checkout and for the test that builds
 * one with another name (docs/decisions/0124-site-settings.md).
 */
/** @type {Record<string, string>} */
const SITE_CONFIG = process.env.SITE_CONFIG ? { '#site-config': resolve(process.env.SITE_CONFIG) } : {};

/** The owner's forms are forms.config.ts (`#forms-config`); FORMS_CONFIG names another file, as SITE_CONFIG does (docs/decisions/0131-forms-as-data.md). */
/** @type {Record<string, string>} */
const FORMS_CONFIG = process.env.FORMS_CONFIG ? { '#forms-config': resolve(process.env.FORMS_CONFIG) } : {};

export default defineConfig({
  output: 'static',
  // Middleware mode: our server (src/server/start.ts) hands each request to the adapter with its
  // `locals`, the request's context; nothing travels through globals.
  adapter: node({ mode: 'middleware', bodySizeLimit: BODY_LIMIT_BYTES }),
  integrations: [buildSettings(), devServer(), formPagesExist()],
  // Nothing here needs a session, and the adapter would otherwise create a file store.
  session: false,
  // Every script and stylesheet as a file under /_astro/, none inlined: the pages' CSP then
  // allows only the site's own files ('self'), with no hash to keep in step
  // (docs/decisions/0062-security-headers.md).
  build: { inlineStylesheets: 'never' },
  vite: { build: { assetsInlineLimit: 0 }, resolve: { alias: { ...SITE_CONFIG, ...FORMS_CONFIG } } },
  security: {
    // Astro's check answers 403 in plain text to any form post without an Origin
    // header and to every cross-origin post; our pipeline's guard applies our own
    // policy before Astro sees a post (src/lib/http/origin.ts, docs/decisions/0003-origin-policy.md).
    checkOrigin: false,
  },
  env: {
    schema: {
      // Read at build time and inlined into the contact script: public by design.
      CONTACT_FORM_ENDPOINT: envField.string({
        context: 'client',
        access: 'public',
        optional: true,
        url: true,
      }),
    },
  },
});
