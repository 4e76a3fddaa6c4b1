import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './smtp.ts';

/**
 * Another owner's Astro 7 site, made in a temporary folder as the README tells an owner to add the
 * forms to a site they already have (issue 29 item 4): a coffee roaster's shop with its own layout,
 * pages, `astro.config.mjs`, `site.config.ts` and `forms.config.ts`, `site-forms` installed from
 * the tarball `npm pack` makes of this checkout, built with `npx astro build` and served by
 * `@astrojs/node` with the shop's own Node 24. It has what owners' sites have (issue 39, modelled
 * on Astro's `examples/blog`): Astro's fonts from a local file (`<Font />` writes an inline
 * `<style>`), a global stylesheet its layout imports, an article layout whose `pubDate` it cannot
 * do without (`Post.astro`, which SHOP_FORMS_LAYOUT names for a variant build), the contact form on
 * its about page (`/ueber-uns`) and no `/contact`.
 * Hint: nothing of this checkout is linked or copied besides the tarball, so a file the package
 * forgets to ship, or a path that only resolves inside this repository, fails here.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The shop's name, which its `site.config.ts` gives; it heads every page of its layout. */
export const SHOP_NAME = 'Kaffeerösterei Lindner';

/** The line under the name in the shop's own header: only the shop's layout prints it. */
export const SHOP_TAGLINE = 'Frisch geröstet in Kiel';

/** The heading of the shop's footer, above the newsletter form it places there. */
export const SHOP_FOOTER = 'Röstpost aus Kiel';

/** The family name of the shop's own font (Astro's fonts, a local file): its pages are set in it. */
export const SHOP_FONT = 'Lindner Sans';

/**
 * The package manager the shop installs with: npm (the default), pnpm 10 with its strict
 * node_modules (a package sees only what it declares), or yarn 1; FOREIGN_PM names one for a
 * whole run (`FOREIGN_PM=pnpm npm run test:foreign`).
 */
export type PackageManager = 'npm' | 'pnpm' | 'yarn';

/** The package manager of this run: FOREIGN_PM, or npm. */
export function packageManager(): PackageManager {
  const named = process.env.FOREIGN_PM ?? 'npm';
  if (named !== 'npm' && named !== 'pnpm' && named !== 'yarn') throw new Error(`FOREIGN_PM=${named}: npm, pnpm or yarn`);
  return named;
}

/** How each manager installs the shop (from its cache where it has one) and runs a command of its `node_modules/.bin`. */
const MANAGERS: Record<PackageManager, { install: [string, string[]]; exec: (args: string[]) => [string, string[]] }> = {
  npm: {
    install: ['npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error']],
    exec: (args) => ['npx', args],
  },
  pnpm: {
    // hoist=false: not even the store's hidden hoisting, so a package finds only what it declares.
    install: ['npx', ['--yes', 'pnpm@10', 'install', '--prefer-offline', '--reporter=silent', '--config.hoist=false']],
    exec: (args) => ['npx', ['--yes', 'pnpm@10', 'exec', ...args]],
  },
  yarn: {
    install: ['npx', ['--yes', 'yarn@1', 'install', '--prefer-offline', '--silent', '--non-interactive']],
    exec: (args) => ['npx', ['--yes', 'yarn@1', '--silent', 'run', ...args]],
  },
};

/** The adapter's two modes: its own server, or a handler the owner's `node:http` server calls. */
export type AdapterMode = 'standalone' | 'middleware';

/** Where each mode's build goes in the shop's folder. */
const OUT_DIR: Record<AdapterMode, string> = { standalone: 'dist', middleware: 'dist-middleware' };

/**
 * The shop's files, as its owner wrote them: the README's way in for a site with an adapter
 * (`integrations: [siteForms({ layout })]`), the components on the owner's pages and in the
 * layout's footer, their settings and a form of their own (a call-back request).
 */
export function shopFiles(
  tarball: string,
  manager: PackageManager = 'npm',
  node = '^24.21.0',
  more: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return {
    'package.json': `${JSON.stringify(
      {
        name: 'kaffeeroesterei-lindner',
        private: true,
        type: 'module',
        scripts: { build: 'astro build', start: 'node dist/server/entry.mjs' },
        dependencies: {
          '@astrojs/node': '^11.1.6',
          astro: '^7.3.5',
          // The Node the shop runs on: 24, as this repository pins it (the machine's own is older),
          // or the lowest the package's engines name (tests/e2e/foreign-site-lowest-node.test.ts).
          node,
          'site-forms': `file:${tarball}`,
          // The optional clients a variant of the shop configures (the bench's Mailchimp).
          ...more,
        },
        allowScripts: { node: true, esbuild: true },
        // pnpm 10 runs no dependency's install script unless named: the `node` package's fetches its binary.
        ...(manager === 'pnpm' ? { pnpm: { onlyBuiltDependencies: ['node', 'esbuild'] } } : {}),
        // yarn 1 fails the whole install on an optional dependency the registry does not have:
        // Vite 8.4.0's `napi-windows-process-start-time` answers 404 (28 November 2026).
        ...(manager === 'yarn' ? { resolutions: { vite: '8.3.8' } } : {}),
      },
      null,
      2,
    )}\n`,
    'astro.config.mjs': `// @ts-check
import node from '@astrojs/node';
import { defineConfig, fontProviders } from 'astro/config';
import siteForms from 'site-forms';

// The shop serves itself (standalone), or its own server.mjs calls the adapter's handler (middleware).
const mode = process.env.SHOP_ADAPTER_MODE === 'middleware' ? 'middleware' : 'standalone';

export default defineConfig({
  adapter: node({ mode }),
  // The layout our pages take: the shop's own, or (SHOP_FORMS_LAYOUT) its article layout that needs a date.
  integrations: [siteForms({ layout: process.env.SHOP_FORMS_LAYOUT ?? './src/layouts/Shop.astro' })],
  // Astro's fonts, from a file of the shop's own (no network): <Font /> writes an inline <style>.
  fonts: [
    {
      provider: fontProviders.local(),
      name: '${SHOP_FONT}',
      cssVariable: '--font-lindner',
      fallbacks: ['sans-serif'],
      options: { variants: [{ src: ['./src/assets/fonts/lindner-regular.woff'], weight: 400, style: 'normal', display: 'swap' }] },
    },
  ],
});
`,
    'site.config.ts': `import { defineSite } from 'site-forms/config';

export default defineSite({
  name: '${SHOP_NAME}',
  description: 'Kaffee aus unserer Rösterei am Hafen.',
  language: 'de',
  senderName: 'Lindner Website',
});
`,
    'forms.config.ts': `import { defineForms } from 'site-forms/config';

export default defineForms({
  forms: [
    {
      name: 'callback',
      title: 'Rückruf anfordern',
      submitLabel: 'Rückruf anfordern',
      busyLabel: 'Wird gesendet …',
      thanks: 'Danke! Wir rufen Sie zurück.',
      fields: [
        { name: 'name', type: 'text', label: 'Ihr Name', required: true, autocomplete: 'name' },
        { name: 'phone', type: 'tel', label: 'Telefonnummer', required: true, autocomplete: 'tel' },
        {
          name: 'slot',
          type: 'select',
          label: 'Wann passt es Ihnen?',
          required: true,
          choices: [
            { value: 'morning', label: 'Vormittags' },
            { value: 'afternoon', label: 'Nachmittags' },
          ],
        },
      ],
    },
  ],
});
`,
    'src/layouts/Shop.astro': `---
import { Font } from 'astro:assets';
import { NewsletterForm } from 'site-forms/components';
import '../styles/global.css';

interface Props {
  title: string;
  description?: string;
}

const { title, description = 'Kaffee aus unserer Rösterei am Hafen.' } = Astro.props;
---

<html lang="de">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="description" content={description} />
    <Font cssVariable="--font-lindner" preload />
    <title>{title} | ${SHOP_NAME}</title>
  </head>
  <body>
    <header class="shop-header">
      <p class="shop-name">${SHOP_NAME}</p>
      <p class="shop-tagline">${SHOP_TAGLINE}</p>
      <nav><a href="/">Start</a> <a href="/ueber-uns">Über uns</a> <a href="/kontakt">Kontakt</a> <a href="/callback">Rückruf</a></nav>
    </header>
    <main>
      <slot />
    </main>
    <footer class="shop-footer">
      <h2>${SHOP_FOOTER}</h2>
      <NewsletterForm />
    </footer>
  </body>
</html>
`,
    // The article layout, as Astro's blog example has it (BlogPost.astro): a date it cannot do without.
    'src/layouts/Post.astro': `---
import Shop from './Shop.astro';

interface Props {
  title: string;
  description?: string;
  pubDate: Date;
}

const { title, description, pubDate } = Astro.props;
const published = pubDate.toLocaleDateString('de-DE', { dateStyle: 'long' });
---

<Shop title={title} description={description}>
  <article>
    <p class="post-date">Veröffentlicht am {published}</p>
    <slot />
  </article>
</Shop>
`,
    // The shop's global stylesheet, imported by its layout, as the blog's global.css is.
    'src/styles/global.css': `:root {
  --roast: rgb(74, 44, 23);
  --crema: rgb(253, 248, 240);
}
body {
  font-family: var(--font-lindner);
  color: var(--roast);
  background: var(--crema);
  font-size: 19px;
  line-height: 1.6;
  margin: 0;
}
main {
  max-width: 42rem;
  margin: auto;
  padding: 2rem 1rem;
}
label,
input,
textarea,
select {
  display: block;
}
a {
  color: rgb(140, 70, 20);
}
`,
    'src/pages/index.astro': `---
import Shop from '../layouts/Shop.astro';
---

<Shop title="Start">
  <h1>Unsere Bohnen</h1>
  <p>Jede Woche frisch geröstet, am Hafen von Kiel.</p>
</Shop>
`,
    // The contact form on the about page (the shop has no /contact), as the blog's owner placed it.
    'src/pages/ueber-uns.astro': `---
import { ContactForm } from 'site-forms/components';
import Post from '../layouts/Post.astro';
---

<Post title="Über uns" description="Wer hier röstet, und wie Sie uns schreiben." pubDate={new Date('2026-03-14')}>
  <h1>Über uns</h1>
  <p>Seit 1998 rösten wir am Kieler Hafen, in kleinen Mengen und jede Woche frisch.</p>
  <h2>Schreiben Sie uns</h2>
  <ContactForm />
</Post>
`,
    'src/pages/kontakt.astro': `---
import { ContactForm } from 'site-forms/components';
import Shop from '../layouts/Shop.astro';
---

<Shop title="Kontakt">
  <h1>Schreiben Sie uns</h1>
  <ContactForm />
</Shop>
`,
    'src/pages/callback.astro': `---
import { Form } from 'site-forms/components';
import Shop from '../layouts/Shop.astro';
---

<Shop title="Rückruf">
  <h1>Wir rufen zurück</h1>
  <Form name="callback" />
</Shop>
`,
    ...ownersOwnFiles(),
    // The owner's own server for the middleware mode: a route of its own, the rest to Astro.
    // The owner's own server for the middleware mode: a route of its own, the built files of
    // dist/client (the adapter's handler serves only what is rendered on demand, as Astro's guide
    // says for the middleware mode), the rest to Astro.
    'server.mjs': `import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';

const build = process.env.SHOP_BUILD ?? 'dist';
const { handler } = await import(\`./\${build}/server/entry.mjs\`);
const client = join(import.meta.dirname, build, 'client');
const TYPES = { '.html': 'text/html; charset=utf-8', '.css': 'text/css', '.js': 'text/javascript', '.svg': 'image/svg+xml', '.json': 'application/json' };

/** The built file for a GET of \`pathname\`, if there is one (a page is its folder's index.html). */
function builtFile(pathname) {
  let decoded;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  const path = normalize(join(client, decoded));
  if (!path.startsWith(client)) return undefined;
  for (const candidate of [path, join(path, 'index.html')]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {}
  }
  return undefined;
}

const server = createServer((req, res) => {
  const { pathname } = new URL(req.url, 'http://shop');
  if (pathname === '/laden') {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('Der Laden ist offen.\\n');
    return;
  }
  const file = req.method === 'GET' || req.method === 'HEAD' ? builtFile(pathname) : undefined;
  if (file) {
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
    return;
  }
  handler(req, res, () => {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('Nicht im Laden.\\n');
  });
});
server.listen(Number(process.env.PORT), process.env.HOST, () => console.log('shop server listening'));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
`,
  };
}

/** The header the shop's own middleware puts on every answer, and its value. */
export const SHOP_MARK = ['x-shop', 'lindner'] as const;

/** The variable that closes the shop to all but its staff, and the header the staff send the key in. */
export const SHOP_STAFF = { variable: 'SHOP_STAFF_KEY', header: 'x-shop-staff-key' } as const;

/** What the shop's own middleware answers a request it refuses. */
export const SHOP_REFUSAL = 'Nur für Mitarbeiter.\n';

/**
 * What an owner's site has of its own besides the pages (issue 39 items 11 to 13): a
 * `src/middleware.ts` that marks every answer and, on the staging server (SHOP_STAFF_KEY set),
 * lets only the staff through, and routes of its own under the paths the forms also use:
 * `/api/search`, `/thank-you/transfer`, `/admin/orders`.
 */
function ownersOwnFiles(): Record<string, string> {
  return {
    'src/middleware.ts': `import { defineMiddleware } from 'astro:middleware';

/** The shop's own middleware: every answer says whose it is; on the staging server only the staff get in. */
export const onRequest = defineMiddleware(async (context, next) => {
  const key = process.env.${SHOP_STAFF.variable};
  if (key && context.request.headers.get('${SHOP_STAFF.header}') !== key) {
    return new Response(${JSON.stringify(SHOP_REFUSAL)}, { status: 401, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  }
  const response = await next();
  response.headers.set('${SHOP_MARK[0]}', '${SHOP_MARK[1]}');
  return response;
});
`,
    'src/pages/api/search.ts': `import type { APIRoute } from 'astro';

export const prerender = false;

const BEANS = ['Äthiopien Sidamo', 'Brasilien Cerrado', 'Kolumbien Huila'];

/** The shop's own search over its beans. */
export const GET: APIRoute = ({ url }) => {
  const query = (url.searchParams.get('q') ?? '').toLowerCase();
  return Response.json({ results: BEANS.filter((bean) => bean.toLowerCase().includes(query)) });
};
`,
    'src/pages/thank-you/transfer.ts': `import type { APIRoute } from 'astro';

export const prerender = false;

/** The shop's own bank-transfer step after an order: it takes the amount and notes it. */
export const POST: APIRoute = async ({ request }) => {
  const form = await request.formData();
  return new Response(\`Überweisung über \${String(form.get('amount'))} € vorgemerkt.\\n\`, { headers: { 'content-type': 'text/plain; charset=utf-8' } });
};
`,
    'src/pages/admin/orders.ts': `import type { APIRoute } from 'astro';

export const prerender = false;

/** The shop's own order list, and a new order. */
export const GET: APIRoute = () => Response.json({ orders: ['Bestellung 1001'] });

export const POST: APIRoute = async ({ request }) => {
  const form = await request.formData();
  return new Response(\`Bestellung für \${String(form.get('customer'))} angelegt.\\n\`, { status: 201, headers: { 'content-type': 'text/plain; charset=utf-8' } });
};
`,
  };
}

/** Another standalone build of the shop, in a folder of its own, with `env` set while it builds (SHOP_FORMS_LAYOUT). */
export type ShopVariant = { env: Record<string, string> };

/** How long each slow step took, in milliseconds, for the report. */
export type ForeignTimings = { pack: number; install: number; build: Partial<Record<AdapterMode, number>> };

/** The shop, installed and built. */
export type ForeignSite = {
  root: string;
  timings: ForeignTimings;
  /** What each build printed (stdout, then stderr), by its folder (`dist`, `dist-middleware`, a variant's). */
  buildLogs: Readonly<Record<string, string>>;
  /** Starts the shop's server of `mode` (built beforehand) with only `env` (plus PATH) and the shop's `.env`. */
  start(env: Record<string, string>, options?: { mode?: AdapterMode; dataDir?: string; outDir?: string }): Promise<ForeignServer>;
  /** Runs `npx site-forms <args>` in the shop's folder with only `env` (plus PATH), as its owner would; answers how it ended. */
  cli(args: string[], env?: Record<string, string>): { code: number | null; stdout: string; stderr: string };
  /** Starts `npx astro dev` in the shop's folder (its settings from the shop's `.env` alone), once it answers a page. */
  dev(env?: Record<string, string>): Promise<ForeignServer>;
  /** Writes the shop's `.env`, as its owner would. */
  writeDotEnv(variables: Record<string, string>): void;
  remove(): void;
};

/** One running server of the shop. */
export type ForeignServer = {
  url: string;
  port: number;
  dataDir: string;
  process: ChildProcess;
  /** Everything it printed, stdout and stderr together. */
  output(): string;
  /** Sends SIGTERM (or `signal`) and waits for the exit; answers the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
};

/** Runs a command in the shop's folder, throwing with its output when it fails; answers how long it took. */
function run(cwd: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}, output?: (text: string) => void): number {
  const started = Date.now();
  const result = spawnSync(command, args, {
    cwd,
    env: { ...process.env, ASTRO_TELEMETRY_DISABLED: '1', ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed in ${cwd} (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}${result.error?.message ?? ''}`,
    );
  }
  output?.(`${result.stdout}\n${result.stderr}`);
  return Date.now() - started;
}

/** Whether something accepts a TCP connection on the port: a server that listens, and no request made. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Makes the shop in a temporary folder: packs this checkout, writes the shop's files, installs
 * them (from the npm cache) and builds each of `modes`. Slow: call it once per test file.
 * Hint: KEEP_FOREIGN_SITE=1 keeps the folder for a look afterwards (its path is printed), and
 * FOREIGN_SITE=<that path> runs the tests against it again without packing, installing or
 * building (for iterating on the tests, or on the shop's files edited by hand).
 */
export function makeForeignSite(
  modes: readonly AdapterMode[] = ['standalone'],
  variants: Readonly<Record<string, ShopVariant>> = {},
  options: { manager?: PackageManager; node?: string; dependencies?: Readonly<Record<string, string>>; kept?: string } = {},
): ForeignSite {
  const manager = options.manager ?? packageManager();
  // A shop made before (KEEP_FOREIGN_SITE=1), from this checkout or another: used as it is.
  const kept = options.kept ?? process.env.FOREIGN_SITE;
  if (kept) return foreignSite(dirname(kept), kept, { pack: 0, install: 0, build: {} }, false, {});
  const root = mkdtempSync(join(tmpdir(), 'foreign-shop-'));
  const timings: ForeignTimings = { pack: 0, install: 0, build: {} };
  const buildLogs: Record<string, string> = {};
  try {
    timings.pack = run(join(ROOT, 'packages/site-forms'), 'npm', ['pack', '--silent', '--pack-destination', root]);
    const tarball = readdirSync(root).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack left no tarball in ${root}`);
    const shop = join(root, 'shop');
    for (const [path, text] of Object.entries(shopFiles(join(root, tarball), manager, options.node, options.dependencies))) {
      mkdirSync(dirname(join(shop, path)), { recursive: true });
      writeFileSync(join(shop, path), text);
    }
    // The font file Astro's fonts serve (Atkinson Hyperlegible, SIL OFL, from Astro's blog example).
    mkdirSync(join(shop, 'src/assets/fonts'), { recursive: true });
    copyFileSync(join(ROOT, 'tests/fixtures/fonts/atkinson-regular.woff'), join(shop, 'src/assets/fonts/lindner-regular.woff'));
    timings.install = run(shop, ...MANAGERS[manager].install);
    for (const mode of modes) {
      timings.build[mode] = run(
        shop,
        ...MANAGERS[manager].exec(['astro', 'build', '--outDir', OUT_DIR[mode]]),
        { SHOP_ADAPTER_MODE: mode },
        (text) => (buildLogs[OUT_DIR[mode]] = text),
      );
      // A build whose hook never settles ends with status 0 and writes nothing: say so here.
      if (!existsSync(join(shop, OUT_DIR[mode], 'server/entry.mjs')))
        throw new Error(`npx astro build (${mode}) ended with status 0 but wrote no ${OUT_DIR[mode]}/server/entry.mjs`);
    }
    for (const [outDir, variant] of Object.entries(variants)) {
      run(shop, ...MANAGERS[manager].exec(['astro', 'build', '--outDir', outDir]), variant.env, (text) => (buildLogs[outDir] = text));
      if (!existsSync(join(shop, outDir, 'server/entry.mjs'))) throw new Error(`npx astro build (${outDir}) wrote no ${outDir}/server/entry.mjs`);
    }
    return foreignSite(root, shop, timings, true, buildLogs);
  } catch (error) {
    if (process.env.KEEP_FOREIGN_SITE !== '1') rmSync(root, { recursive: true, force: true });
    throw error;
  }
}

function foreignSite(root: string, shop: string, timings: ForeignTimings, owned: boolean, buildLogs: Record<string, string>): ForeignSite {
  // The shop's own Node (its `node` dependency), as `npx node` would find it there.
  const node = join(shop, 'node_modules/node/bin/node');
  return {
    root: shop,
    timings,
    buildLogs,
    cli(args, env = {}) {
      const result = spawnSync('npx', ['--no-install', 'site-forms', ...args], {
        cwd: shop,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
        encoding: 'utf8',
      });
      return { code: result.status, stdout: result.stdout, stderr: result.stderr };
    },
    async dev(env = {}) {
      const port = await freePort();
      // A process group of its own: npx starts Astro as a child, and the stop must end both.
      const child = spawn('npx', ['astro', 'dev', '--host', '127.0.0.1', '--port', String(port)], {
        cwd: shop,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ASTRO_TELEMETRY_DISABLED: '1', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      let output = '';
      for (const stream of [child.stdout!, child.stderr!]) stream.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const url = `http://127.0.0.1:${port}`;
      const stop = async () => {
        if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
        return exited;
      };
      const deadline = Date.now() + 45_000;
      for (;;) {
        try {
          // A page that never answers must fail the wait, not hang it.
          if ((await fetch(`${url}/kontakt`, { signal: AbortSignal.timeout(5_000) })).status === 200) break;
        } catch {}
        if (child.exitCode !== null || Date.now() > deadline) {
          await stop();
          throw new Error(`astro dev in the shop did not serve /kontakt:\n${output}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      return { url, port, dataDir: '', process: child, output: () => output, stop };
    },
    writeDotEnv(variables) {
      const lines = Object.entries(variables).map(([name, value]) => `${name}='${value}'`);
      writeFileSync(join(shop, '.env'), `${lines.join('\n')}\n`);
    },
    async start(env, options = {}) {
      const mode = options.mode ?? 'standalone';
      const port = env.PORT ? Number(env.PORT) : await freePort();
      const dataDir = options.dataDir ?? mkdtempSync(join(root, 'data-'));
      const entry = mode === 'standalone' ? [`${options.outDir ?? OUT_DIR.standalone}/server/entry.mjs`] : ['server.mjs'];
      const child = spawn(node, entry, {
        cwd: shop,
        env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', DATA_DIR: dataDir, SHOP_BUILD: OUT_DIR[mode], ...env, PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      for (const stream of [child.stdout!, child.stderr!]) stream.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const deadline = Date.now() + 30_000;
      while (!(await accepts(port))) {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`the shop's ${mode} server exited with ${child.exitCode ?? child.signalCode}:\n${output}`);
        if (Date.now() > deadline) {
          child.kill('SIGKILL');
          throw new Error(`the shop's ${mode} server did not listen on ${port} within 30 s:\n${output}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return {
        url: `http://127.0.0.1:${port}`,
        port,
        dataDir,
        process: child,
        output: () => output,
        async stop(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      };
    },
    remove() {
      if (!owned) return;
      if (process.env.KEEP_FOREIGN_SITE === '1') console.log(`foreign site kept: ${shop}`);
      else rmSync(root, { recursive: true, force: true });
    },
  };
}
