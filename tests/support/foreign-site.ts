import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
 * `@astrojs/node` with the shop's own Node 24.
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

/** The adapter's two modes: its own server, or a handler the owner's `node:http` server calls. */
export type AdapterMode = 'standalone' | 'middleware';

/** Where each mode's build goes in the shop's folder. */
const OUT_DIR: Record<AdapterMode, string> = { standalone: 'dist', middleware: 'dist-middleware' };

/**
 * The shop's files, as its owner wrote them: the README's way in for a site with an adapter
 * (`integrations: [siteForms({ layout })]`), the components on the owner's pages and in the
 * layout's footer, their settings and a form of their own (a call-back request).
 */
export function shopFiles(tarball: string): Record<string, string> {
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
          // The Node 24 the shop runs on, as this repository pins it (the machine's own is older).
          node: '^24.21.0',
          'site-forms': `file:${tarball}`,
        },
        allowScripts: { node: true, esbuild: true },
      },
      null,
      2,
    )}\n`,
    'astro.config.mjs': `// @ts-check
import node from '@astrojs/node';
import { defineConfig } from 'astro/config';
import siteForms from 'site-forms';

// The shop serves itself (standalone), or its own server.mjs calls the adapter's handler (middleware).
const mode = process.env.SHOP_ADAPTER_MODE === 'middleware' ? 'middleware' : 'standalone';

export default defineConfig({
  adapter: node({ mode }),
  integrations: [siteForms({ layout: './src/layouts/Shop.astro' })],
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
import { NewsletterForm } from 'site-forms/components';

interface Props {
  title: string;
}

const { title } = Astro.props;
---

<html lang="de">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>{title} | ${SHOP_NAME}</title>
  </head>
  <body>
    <header class="shop-header">
      <p class="shop-name">${SHOP_NAME}</p>
      <p class="shop-tagline">${SHOP_TAGLINE}</p>
      <nav><a href="/">Start</a> <a href="/kontakt">Kontakt</a> <a href="/callback">Rückruf</a></nav>
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
    'src/pages/index.astro': `---
import Shop from '../layouts/Shop.astro';
---

<Shop title="Start">
  <h1>Unsere Bohnen</h1>
  <p>Jede Woche frisch geröstet, am Hafen von Kiel.</p>
</Shop>
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

/** How long each slow step took, in milliseconds, for the report. */
export type ForeignTimings = { pack: number; install: number; build: Partial<Record<AdapterMode, number>> };

/** The shop, installed and built. */
export type ForeignSite = {
  root: string;
  timings: ForeignTimings;
  /** Starts the shop's server of `mode` (built beforehand) with only `env` (plus PATH) and the shop's `.env`. */
  start(env: Record<string, string>, options?: { mode?: AdapterMode; dataDir?: string }): Promise<ForeignServer>;
  /** Runs `npx site-forms <args>` in the shop's folder with only `env` (plus PATH), as its owner would; answers how it ended. */
  cli(args: string[], env?: Record<string, string>): { code: number | null; stdout: string; stderr: string };
  /** Starts `npx astro dev` in the shop's folder (its settings from the shop's `.env` alone), once it answers a page. */
  dev(): Promise<ForeignServer>;
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
function run(cwd: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}): number {
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
export function makeForeignSite(modes: readonly AdapterMode[] = ['standalone']): ForeignSite {
  const kept = process.env.FOREIGN_SITE;
  if (kept) return foreignSite(dirname(kept), kept, { pack: 0, install: 0, build: {} }, false);
  const root = mkdtempSync(join(tmpdir(), 'foreign-shop-'));
  const timings: ForeignTimings = { pack: 0, install: 0, build: {} };
  try {
    timings.pack = run(ROOT, 'npm', ['pack', '--silent', '--pack-destination', root]);
    const tarball = readdirSync(root).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack left no tarball in ${root}`);
    const shop = join(root, 'shop');
    for (const [path, text] of Object.entries(shopFiles(join(root, tarball)))) {
      mkdirSync(dirname(join(shop, path)), { recursive: true });
      writeFileSync(join(shop, path), text);
    }
    timings.install = run(shop, 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error']);
    for (const mode of modes) {
      timings.build[mode] = run(shop, 'npx', ['astro', 'build', '--outDir', OUT_DIR[mode]], { SHOP_ADAPTER_MODE: mode });
      // A build whose hook never settles ends with status 0 and writes nothing: say so here.
      if (!existsSync(join(shop, OUT_DIR[mode], 'server/entry.mjs')))
        throw new Error(`npx astro build (${mode}) ended with status 0 but wrote no ${OUT_DIR[mode]}/server/entry.mjs`);
    }
    return foreignSite(root, shop, timings, true);
  } catch (error) {
    if (process.env.KEEP_FOREIGN_SITE !== '1') rmSync(root, { recursive: true, force: true });
    throw error;
  }
}

function foreignSite(root: string, shop: string, timings: ForeignTimings, owned: boolean): ForeignSite {
  // The shop's own Node 24 (its `node` dependency), as `npx node` would find it there.
  const node = join(shop, 'node_modules/node/bin/node');
  return {
    root: shop,
    timings,
    cli(args, env = {}) {
      const result = spawnSync('npx', ['--no-install', 'site-forms', ...args], {
        cwd: shop,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
        encoding: 'utf8',
      });
      return { code: result.status, stdout: result.stdout, stderr: result.stderr };
    },
    async dev() {
      const port = await freePort();
      // A process group of its own: npx starts Astro as a child, and the stop must end both.
      const child = spawn('npx', ['astro', 'dev', '--host', '127.0.0.1', '--port', String(port)], {
        cwd: shop,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ASTRO_TELEMETRY_DISABLED: '1' },
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
      const entry = mode === 'standalone' ? [`${OUT_DIR.standalone}/server/entry.mjs`] : ['server.mjs'];
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
