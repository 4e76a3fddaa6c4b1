/**
 * The Astro integration `site-forms` (`integrations: [siteForms()]`): the starter's routes and
 * pages in any Astro site with an adapter, on the same road as the starter (decision 0165).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AstroIntegration, IntegrationResolvedRoute } from 'astro';
import { envField } from 'astro/config';
import type { Plugin } from 'vite';
import type { FormsSettings, FormsSettingsInput } from '../lib/forms/define-forms.ts';
import { missingFormPages, ownerPagePatterns } from '../lib/forms/pages.ts';
import { checkBase, mountOf, ourPath, setMount } from '../lib/http/mount.ts';
import type { SiteSettingsInput } from '../lib/site/define-site.ts';
import type { DevServer } from '../server/dev.ts';

/** What an owner may give `siteForms()`; every option may be left out. */
export type SiteFormsOptions = {
  /** The site settings, when the project has no site.config.ts (as site.config.ts's `defineSite` takes them). */
  site?: SiteSettingsInput;
  /** The forms, when the project has no forms.config.ts (as forms.config.ts's `defineForms` takes them). */
  forms?: FormsSettingsInput;
  /**
   * The owner's layout component, a path from the project's root (`./src/layouts/Layout.astro`):
   * the thank-you, newsletter and refusal pages render inside it with the props `title`,
   * `description` and `path`, their content in its default slot. src/layouts/Base.astro unless given.
   */
  layout?: string;
  /**
   * Whether the server the adapter builds boots the services, starts the background work as it
   * starts and answers the API through the integration's middleware (true unless given). False
   * only for a server that does all that itself and hands Astro only pages: the starter's
   * `npm start` (src/server/start.ts), whose Astro bundle then carries no copy of the road.
   */
  boot?: boolean;
  /**
   * A prefix for every route the integration brings (`'/forms'`: `/forms/api/contact`,
   * `/forms/thank-you/contact/`, `/forms/admin`), for a site whose own paths are ours (its own
   * `/admin` or `/api/contact`). Under Astro's `base` too, when the site has one. None unless given:
   * the routes are then at the root, as the API's contract names them (decision 0230).
   */
  base?: string;
};

/** This package's folder of code (dist/, or src/ when the tests run it), where the injected pages, the middleware and the layout live. */
const SRC = new URL('../', import.meta.url);
/** `.js` in dist/, `.ts` in src/: the extension of this module's siblings (decision 0220). */
const EXTENSION = import.meta.url.slice(import.meta.url.lastIndexOf('.'));
/** A file of the package by its name in src/; a TypeScript module by the name it has beside this one. */
const source = (path: string) => fileURLToPath(new URL(path.replace(/\.ts$/, EXTENSION), SRC));

/** The module that boots the services at import: the server entry imports it, the middleware reads it. */
const SERVER_MODULE = source('integration/server.ts');

/** The virtual modules of the settings when the owner gives them as options. */
const VIRTUAL_SITE = 'virtual:site-forms/site-config';
const VIRTUAL_FORMS = 'virtual:site-forms/forms-config';
/** The owner's pages, as the patterns of their routes: where our pages' links may lead. */
const VIRTUAL_PAGES = 'virtual:site-forms/pages';

/**
 * The pages the integration brings, at their address: everything of the starter that is not the
 * owner's own page. The paths of the form routes come from `formRoutes`.
 */
/** An owner's form's thank-you page, injected apart from PAGES: its entry depends on `boot`. */
const FORM_THANKS = '/thank-you/[form]';

const PAGES: ReadonlyArray<readonly [pattern: string, entrypoint: string]> = [
  ['/thank-you', 'integration/pages/thank-you/index.astro'],
  ['/thank-you/contact', 'integration/pages/thank-you/contact.astro'],
  ['/thank-you/newsletter', 'integration/pages/thank-you/newsletter.astro'],
  ['/thank-you/confirm-subscription', 'integration/pages/thank-you/confirm-subscription.astro'],
  ['/thank-you/unsubscribed', 'integration/pages/thank-you/unsubscribed.astro'],
  ['/newsletter/confirm', 'integration/pages/newsletter/confirm.astro'],
  ['/newsletter/unsubscribe', 'integration/pages/newsletter/unsubscribe.astro'],
  ['/admin', 'integration/pages/admin/index.astro'],
  ['/admin/audit', 'integration/pages/admin/audit.astro'],
  ['/admin/subscribers', 'integration/pages/admin/subscribers.astro'],
  ['/admin/webhooks', 'integration/pages/admin/webhooks.astro'],
  ['/admin/messages', 'integration/pages/admin/messages/index.astro'],
  ['/admin/messages/[id]', 'integration/pages/admin/messages/[id].astro'],
  ['/admin/messages/[id]/delete', 'integration/pages/admin/messages/[id]/delete.astro'],
  ['/admin/messages/[id]/files/[file]', 'integration/pages/admin/messages/[id]/files/[file].astro'],
  ['/admin/[...rest]', 'integration/pages/admin/[...rest].astro'],
  ['/theme.css', 'integration/pages/theme.css.ts'],
  ['/admin/people', 'integration/pages/admin/people.astro'],
  ['/admin/people/[id]', 'integration/pages/admin/people/[id].astro'],
  ['/admin/welcome/[token]', 'integration/pages/admin/welcome/[token].astro'],
  ['/admin/reset', 'integration/pages/admin/reset.astro'],
  ['/admin/keys', 'integration/pages/admin/keys.astro'],
  ['/admin/account', 'integration/pages/admin/account.astro'],
];

/**
 * The addresses whose refused posts a person without JavaScript sees as the form's page again
 * (the `form` routes of src/lib/pipeline/routes.ts, the owner's forms included), and the API's
 * other routes: each an on-demand route of its own, so Astro's router finds it and the
 * middleware answers it; no catch-all under /api (decision 0165).
 * Hint: read at config time, before Vite, so not from ROUTES itself (which loads every handler);
 * tests/lib/integration-routes.test.ts checks that the two name the same addresses. A templated
 * route is written here as in the table (`/api/v1/messages/{id}`) and injected as Astro's pattern.
 */
export function formRoutes(forms: FormsSettings): string[] {
  const addresses = [
    '/api/contact',
    '/api/contact/confirm',
    '/api/newsletter',
    '/api/newsletter/confirm',
    '/api/newsletter/unsubscribe',
    '/api/challenge',
    '/api/health',
    // A message's file by a webhook's signed link: the id in the path (src/lib/files/links.ts).
    '/api/files/[id]',
    // The REST API for programs (issue 42): the table's templated paths, as Astro's patterns.
    '/api/v1/messages',
    '/api/v1/messages/{id}',
    '/api/v1/messages/{id}/spam',
    '/api/v1/messages/{id}/not-spam',
    '/api/v1/subscribers',
    '/api/v1/subscribers/erase',
    '/api/v1/forms',
    ...forms.forms.map((form) => `/api/forms/${form.name}`),
  ];
  return addresses.map(astroPattern);
}

/**
 * A route's path as Astro's router names it: the table's (and OpenAPI's) parameter `{id}` is
 * Astro's `[id]`, one segment each way. The pipeline, not Astro, then matches the request.
 */
export function astroPattern(path: string): string {
  return path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, '[$1]');
}

/** `import siteForms from 'site-forms'`: the integration, configured by `options`. */
export function siteForms(options: SiteFormsOptions = {}): AstroIntegration {
  let building = false;
  let forms: FormsSettings;
  let dev: DevServer | undefined;
  let resolvedRoutes: readonly IntegrationResolvedRoute[] = [];
  // The owner's pages (astro:routes:resolved), for the links of our pages (`virtual:site-forms/pages`).
  const pagePatterns: string[] = [];
  let routesKnown = false;
  // The prefix of our routes as requests carry it (decision 0230), for the dev server's dispatcher.
  let mount = '';
  return {
    name: 'site-forms',
    hooks: {
      'astro:config:setup': async ({ config, command, updateConfig, injectRoute, addMiddleware, logger }) => {
        building = command === 'build';
        const base = checkBase(options.base);
        // The starter's own server (`boot: false`) routes by the table at the root: it cannot take a prefix (decision 0230).
        if (base !== '' && options.boot === false) {
          throw new Error(
            `siteForms({ base: ${JSON.stringify(options.base)} }) needs the integration's own server: the starter's server (boot: false) serves the forms at the root only.`,
          );
        }
        // Where our links lead in this process: Astro's base, then ours (the build's prerendered pages read it too).
        mount = mountOf(config.base, base);
        setMount(mount);
        const root = fileURLToPath(config.root);
        // Without settings of the owner's, the site is named after Astro's own `site` (decision 0207), not the neutral "Forms".
        const astroName = siteNameOf(config.site);
        const siteInput = options.site ?? (astroName === undefined ? undefined : { name: astroName });
        const site = settingsSource(root, process.env.SITE_CONFIG, 'site.config.ts', siteInput, VIRTUAL_SITE, 'integration/defaults/site.config.ts');
        const formsSource = settingsSource(
          root,
          process.env.FORMS_CONFIG,
          'forms.config.ts',
          options.forms,
          VIRTUAL_FORMS,
          'integration/defaults/forms.config.ts',
        );
        forms = await loadForms(formsSource, options.forms);
        const layout = options.layout ? resolve(root, options.layout) : source('layouts/Base.astro');
        if (!existsSync(layout)) throw new Error(`siteForms({ layout }): ${layout} does not exist.`);
        // Said before any visitor meets it: a layout that needs a prop our pages do not pass (decision 0196).
        if (options.layout) {
          const needed = requiredPropsWeDoNotPass(readFileSync(layout, 'utf8'));
          if (needed.length > 0) logger.warn(layoutWarning(options.layout, needed));
        }

        // In an owner's server the pages are rendered on demand, so that the middleware gives them the
        // security headers and the Host check; built ahead, the adapter would serve them as files,
        // without either. Our own server (`boot: false`) serves them built, from memory, dressed by its front,
        // but for the pages that say `prerender = false` themselves: the thank-you pages, whose way back
        // depends on ALLOWED_ORIGINS (decision 0211), the admin's pages and the newsletter's links.
        const onDemand = options.boot === false ? {} : { prerender: false };
        // Astro puts its own `base` before each pattern; ours goes on here (`ourPath`, the one rule).
        for (const [pattern, entrypoint] of PAGES) injectRoute({ pattern: ourPath(pattern, base), entrypoint: source(entrypoint), ...onDemand });
        // An owner's form's thank-you page, on demand in every server: its way back depends on
        // ALLOWED_ORIGINS and `?back=` (decision 0211), so it needs no getStaticPaths().
        injectRoute({ pattern: ourPath(FORM_THANKS, base), entrypoint: source('integration/pages/thank-you/[form].astro'), prerender: false });
        for (const pattern of formRoutes(forms))
          injectRoute({ pattern: ourPath(pattern, base), entrypoint: source('integration/pages/refusal.astro'), prerender: false });
        // After the owner's own middleware (decision 0191): theirs sees every request, ours too, and
        // may refuse it, guard /admin, add headers or log before ours answers. A server of its own
        // (`boot: false`) sends the API down the road itself and hands Astro only pages.
        if (options.boot !== false) addMiddleware({ entrypoint: source('integration/middleware.ts'), order: 'post' });

        updateConfig({
          // Our middleware applies our origin policy to our routes, and a copy of Astro's own check to every route
          // of the owner's (decisions 0165, 0190): Astro's runs before every middleware, so it cannot spare ours.
          security: { checkOrigin: false },
          // Every stylesheet as a file: our pages' CSP allows the site's own files ('self'), nothing inline.
          build: { inlineStylesheets: 'never' },
          env: {
            schema: { CONTACT_FORM_ENDPOINT: envField.string({ context: 'client', access: 'public', optional: true, url: true }) },
          },
          vite: {
            resolve: {
              noExternal: ['site-forms'],
              alias: {
                '#site-config': site.module,
                '#forms-config': formsSource.module,
                // The owner's layout through our attempt, which falls back to a plain layout when it throws (decision 0196).
                'virtual:site-forms/layout': options.layout ? source('layouts/OwnerLayout.astro') : layout,
                'virtual:site-forms/owner-layout': layout,
              },
            },
            // Vite reads the package's modules and .astro files itself, from node_modules too, in every
            // environment (the prerender one as well as the server's): one instance of each module, and
            // the .astro files compiled. Astro does the same for a package the site lists with astro as a peer.
            ssr: { noExternal: ['site-forms'] },
            build: { assetsInlineLimit: 0 },
            server: { fs: { allow: [fileURLToPath(new URL('../', SRC)), root] } },
            plugins: [
              settingsModules(
                { ...options, site: siteInput },
                site.file,
                { checkOrigin: config.security?.checkOrigin !== false, routes: ourRoutes(forms, base), layout: options.layout ?? null, mount },
                () => (routesKnown ? pagePatterns : null),
              ),
              ...(options.boot === false ? [] : [bootAtStart()]),
            ],
          },
        });
      },
      'astro:server:setup': async ({ server }) => {
        // Vitest runs Vite's server too, to load modules; it serves no request, so nothing boots there.
        if (process.env.VITEST) return;
        const { createDevMiddleware } = (await import(pathToFileURL(source('server/dev.ts')).href)) as typeof import('../server/dev.ts');
        // In an owner's site a request Astro's router takes to the owner's own route is theirs (decision 0190).
        dev = await createDevMiddleware(options.boot === false ? {} : { ownersRoute: (pathname) => ownersRoute(resolvedRoutes, pathname), mount });
        // After Vite's own checks, its Host check (the guard against DNS rebinding) first among them,
        // before its modules and Astro's pages (decision 0193).
        server.middlewares.use(dev.middleware);
        const close = dev.close;
        server.httpServer?.once('close', () => void close());
      },
      // The address the dev server listens on, which Astro chose (`--port`, or the next free one): not PORT of the .env.
      'astro:server:start': ({ address }) => dev?.listening(address),
      'astro:routes:resolved': ({ routes, logger }) => {
        // Again under `astro dev` as the owner adds or removes a page: the dispatcher reads the latest.
        resolvedRoutes = routes;
        pagePatterns.splice(0, pagePatterns.length, ...ownerPagePatterns(routes));
        routesKnown = true;
        const missing = missingFormPages(forms.forms, routes);
        if (missing.length === 0) return;
        const problem = `${missing.join('; ')} (add the page, or set the form's page to one that exists).`;
        // Under `astro dev` the page may be the one being written: said, not fatal.
        if (building) throw new Error(problem);
        logger.error(problem);
      },
      'astro:build:done': async ({ dir }) => {
        // What the build put into the pages that the server must agree with (decision 0123):
        // the contact form's endpoint, as astro:env reads it (the environment over the .env files).
        const { loadEnv } = await astrosVite();
        const env = { ...loadEnv('production', process.cwd(), ''), ...process.env };
        const settings = { contactFormEndpoint: env.CONTACT_FORM_ENDPOINT || null };
        writeFileSync(new URL('../build-settings.json', dir), `${JSON.stringify(settings, null, 2)}\n`);
      },
    },
  };
}

/**
 * The Vite that Astro runs, for its `loadEnv`: `vite` is Astro's dependency, not ours, and a strict
 * install (pnpm) lets a package import only what it declares (decision 0236). Found from `astro`,
 * our peer, as Astro itself finds it.
 */
async function astrosVite(): Promise<typeof import('vite')> {
  const astro = createRequire(createRequire(import.meta.url).resolve('astro/package.json'));
  return import(pathToFileURL(astro.resolve('vite')).href);
}

/**
 * The name of an owner's site that has no settings of ours: the host of Astro's `site`
 * (`https://www.baeckerei-korn.example` → `baeckerei-korn.example`), the name its visitors and its
 * owner know it by; `undefined` without one (decision 0207).
 * Hint: not package.json's `name`, a developer's identifier (`@example/blog` in Astro's blog example).
 */
export function siteNameOf(site: string | undefined): string | undefined {
  if (!site || !URL.canParse(site)) return undefined;
  const host = new URL(site).hostname.replace(/^www\./, '');
  return host && !host.endsWith('.') ? host.slice(0, 60) : undefined;
}

/**
 * Whether Astro's router takes `pathname` to a route of the owner's project: the first route that
 * matches it, as Astro's own `matchRoute` picks from the routes in their order of priority.
 */
export function ownersRoute(routes: readonly IntegrationResolvedRoute[], pathname: string): boolean {
  return routes.find((route) => route.patternRegex.test(pathname))?.origin === 'project';
}

type SettingsSource = { module: string; file?: string };

/** The props our pages give the owner's layout (decision 0164). */
const PROPS_WE_PASS = ['title', 'description', 'path'];

/**
 * The props an owner's layout declares required (`interface Props { … }` or `type Props = { … }`,
 * each `name: type` without `?`) that our pages do not pass; none when its Props are not written out
 * there (`type Props = CollectionEntry<'blog'>['data']`), as the check cannot tell.
 */
export function requiredPropsWeDoNotPass(layoutSource: string): string[] {
  const frontmatter = /^---\r?\n([\s\S]*?)\r?\n---/.exec(layoutSource)?.[1] ?? '';
  const body = /(?:interface\s+Props(?:\s+extends[^{]*)?|type\s+Props\s*=)\s*\{([\s\S]*?)\n\s*\}/.exec(frontmatter)?.[1];
  if (body === undefined) return [];
  const required = [...body.matchAll(/^\s*(?:readonly\s+)?([A-Za-z_$][\w$]*)\s*:/gm)].map((match) => match[1]!);
  return required.filter((name) => !PROPS_WE_PASS.includes(name));
}

/** The build's warning for a layout that needs props our pages do not pass. */
export function layoutWarning(layout: string, needed: readonly string[]): string {
  const names = needed.join(', ');
  return (
    `the layout ${layout} needs ${names}, which the forms' pages (thank-you, confirmation, refused posts) do not pass: ` +
    `they pass ${PROPS_WE_PASS.join(', ')}. Those pages will show in the plain layout of site-forms instead. ` +
    `Make ${names} optional in its Props, or name a layout that needs only those.`
  );
}

/** What the middleware must know of the owner's own configuration (`virtual:site-forms/options`). */
export type OwnerOptions = {
  /** Whether the owner left Astro's `security.checkOrigin` on: the middleware then makes its check for their pages. */
  checkOrigin: boolean;
  /**
   * The patterns of the routes the integration injects, as Astro's route data names them
   * (`context.routePattern`): what the middleware answers. Every other route is the owner's,
   * whatever its path (decision 0190).
   */
  routes: string[];
  /** The owner's layout as `siteForms({ layout })` names it (null for ours): what a warning of its failure names. */
  layout: string | null;
  /** The prefix of our routes as requests and links carry it: Astro's `base`, then `siteForms({ base })` ('' for none, decision 0230). */
  mount: string;
};

/** Every route the integration injects: its pages, an owner's form's thank-you page, and the API's addresses. */
export function ourRoutes(forms: FormsSettings, base = ''): string[] {
  return [...PAGES.map(([pattern]) => pattern), FORM_THANKS, ...formRoutes(forms)].map((pattern) => ourPath(pattern, base));
}

/**
 * Where `#site-config` or `#forms-config` comes from: the file the variable names (SITE_CONFIG,
 * FORMS_CONFIG, from the working folder, as before), the project's own file at its root, the
 * option as a virtual module, or this package's neutral default, in that order.
 */
function settingsSource(root: string, named: string | undefined, file: string, option: object | undefined, virtual: string, fallback: string): SettingsSource {
  if (named) return { module: resolve(named), file: resolve(named) };
  if (existsSync(resolve(root, file))) return { module: resolve(root, file), file: resolve(root, file) };
  if (option) return { module: virtual };
  return { module: source(fallback), file: source(fallback) };
}

/** The owner's forms at config time, for the routes of their forms and the check of their pages. */
async function loadForms(from: SettingsSource, option: FormsSettingsInput | undefined): Promise<FormsSettings> {
  if (from.file) return (await import(pathToFileURL(from.file).href)).default as FormsSettings;
  const { defineForms } = await import('../lib/forms/define-forms.ts');
  return defineForms(option);
}

/**
 * The settings given as options, as the modules `#site-config` and `#forms-config` then name;
 * what the middleware knows of the owner's configuration (`virtual:site-forms/options`); and
 * `site-forms/config` as the owner's settings files import it.
 */
function settingsModules(options: SiteFormsOptions, siteFile: string | undefined, owner: OwnerOptions, pages: () => readonly string[] | null): Plugin {
  const modules: Record<string, string> = {
    'virtual:site-forms/options': `export default ${JSON.stringify(owner)};\n`,
    [VIRTUAL_SITE]: `import { defineSite } from ${JSON.stringify(source('lib/site/define-site.ts'))};\nexport default defineSite(${JSON.stringify(options.site ?? null)});\n`,
    [VIRTUAL_FORMS]: `import { defineForms } from ${JSON.stringify(source('lib/forms/define-forms.ts'))};\nexport default defineForms(${JSON.stringify(options.forms ?? {})});\n`,
  };
  return {
    name: 'site-forms:settings',
    enforce: 'pre',
    resolveId(id, importer) {
      if (id in modules || id === VIRTUAL_PAGES) return `\0${id}`;
      // What the owner's settings import: the site's file gets `defineSite` alone (src/integration/site-config.ts).
      if (id === 'site-forms/config') return source(importer === siteFile ? 'integration/site-config.ts' : 'integration/config.ts');
      return undefined;
    },
    load: (id) => {
      // Read when a page imports it: the routes are resolved by then (null outside a build, as under Vitest).
      if (id === `\0${VIRTUAL_PAGES}`) return `export default ${JSON.stringify(pages())};\n`;
      return id.startsWith('\0') ? modules[id.slice(1)] : undefined;
    },
  };
}

/**
 * Makes the server's entry import src/integration/server.ts first, which boots the services and
 * starts the background work: the server delivers what waits from its start, before any
 * visitor. Only in the `ssr` environment: prerendering at build time opens no database.
 */
function bootAtStart(): Plugin {
  return {
    name: 'site-forms:boot',
    // `astro dev` boots once in its own process (src/server/dev.ts); the build's server boots as it starts.
    apply: 'build',
    applyToEnvironment: (environment) => environment.name === 'ssr',
    transform(code, id) {
      // The build's entry, as Rollup names it (the adapter's own module, @astrojs/node's server.js, or
      // whatever module Astro makes the entry for another adapter): no private id of Astro's (decision 0228).
      if (!this.getModuleInfo(id)?.isEntry) return undefined;
      return { code: `import ${JSON.stringify(SERVER_MODULE)};\n${code}`, map: null };
    },
  };
}

/** The largest body the forms accept, for an adapter's own limit (`node({ bodySizeLimit: BODY_LIMIT_BYTES })`). */
export { BODY_LIMIT_BYTES } from '../lib/http/form.ts';

export default siteForms;
