// @ts-check
import node from '@astrojs/node';
import { defineConfig } from 'astro/config';
import siteForms from 'site-forms';
// One limit for every body: our dispatcher refuses larger ones with 413 before Astro sees them.
import { BODY_LIMIT_BYTES } from './src/lib/http/form.ts';

// The starter is one user of its own integration (src/integration/, decision 0165): the routes,
// the thank-you, newsletter and admin pages, the settings of site.config.ts and forms.config.ts
// (or the files SITE_CONFIG and FORMS_CONFIG name), the build's checks and the dev server all
// come from `siteForms()`. What is left here is the starter's own: its pages in src/pages and
// its server, src/server/start.ts, which boots the services itself (`boot: false`).
export default defineConfig({
  output: 'static',
  // Middleware mode: our server (src/server/start.ts) hands each request to the adapter with its
  // `locals`, the request's context; nothing travels through globals.
  adapter: node({ mode: 'middleware', bodySizeLimit: BODY_LIMIT_BYTES }),
  integrations: [siteForms({ boot: false })],
  // Nothing here needs a session, and the adapter would otherwise create a file store.
  session: false,
});
