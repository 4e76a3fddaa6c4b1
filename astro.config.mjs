// @ts-check
import node from '@astrojs/node';
import { defineConfig } from 'astro/config';
// One limit for every body: the forms' server refuses larger ones with 413 before Astro sees them.
import siteForms, { BODY_LIMIT_BYTES } from 'site-forms';

// The starter is one user of the integration (packages/site-forms, decision 0165): the routes,
// the thank-you, newsletter and admin pages, the settings of site.config.ts and forms.config.ts
// (or the files SITE_CONFIG and FORMS_CONFIG name), the build's checks and the dev server all
// come from `siteForms()`. What is left here is the starter's own: its pages in src/pages and
// server, the package's `site-forms/server`, which boots the services itself (`boot: false`).
export default defineConfig({
  output: 'static',
  // Middleware mode: the forms' server (site-forms/server) hands each request to the adapter with its
  // `locals`, the request's context; nothing travels through globals.
  adapter: node({ mode: 'middleware', bodySizeLimit: BODY_LIMIT_BYTES }),
  integrations: [siteForms({ boot: false })],
  // Nothing here needs a session, and the adapter would otherwise create a file store.
  session: false,
});
