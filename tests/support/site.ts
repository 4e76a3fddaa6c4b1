import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// What `npm run serve` runs: the compiled entry that the test set-up builds.
const START = join(ROOT, 'dist/server/start.mjs');

/** A running copy of the built site, in its own process with its own data directory. */
/** What Chromium sends with a form it posts itself. */
export const NAVIGATION = {
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'sec-fetch-dest': 'document',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-site': 'same-origin',
  'sec-fetch-user': '?1',
};

export type Site = {
  url: string;
  dataDir: string;
  process: ChildProcess;
  /** Every line the server printed, stdout and stderr, parsed when it is JSON. */
  logs: Array<Record<string, unknown> | string>;
  /** Sends a signal and waits for the process to exit; answers its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
};

/**
 * Starts the built server (dist/server/start.mjs) on a free port of 127.0.0.1 with only the given
 * environment (plus PATH), so a developer's own settings never leak into a test; `start` runs
 * another build's entry instead (tests/support/build-site.ts `buildOtherSite`, or an owner's site
 * built with the integration and served by the adapter's standalone server).
 * Hint: the spam filter is off unless a test turns it on (SPAM_FILTER=on): the other tests post
 * as programs do, without the page's proof, and would all be held.
 */
export async function startSite(env: Record<string, string> = {}, options: { dataDir?: string; start?: string } = {}): Promise<Site> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'site-forms-'));
  const child = spawn(process.execPath, [options.start ?? START], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ENV_FILE: '', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, RATE_LIMIT_MAX: '0', SPAM_FILTER: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Site['logs'] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const onLine = (line: string) => {
      let entry: Record<string, unknown> | string = line;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {}
      logs.push(entry);
      if (typeof entry === 'object' && entry.event === 'server.listening') resolve(`http://127.0.0.1:${entry.port}`);
      // An owner's server built with the integration: the @astrojs/node standalone server's own line.
      const standalone = typeof entry === 'string' && /Server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(entry.replace(/\x1b\[[0-9;]*m/g, ''));
      if (standalone) resolve(standalone[1]!);
    };
    for (const stream of [child.stdout!, child.stderr!]) {
      let buffer = '';
      stream.setEncoding('utf8').on('data', (chunk: string) => {
        buffer += chunk;
        for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
          onLine(buffer.slice(0, newline));
          buffer = buffer.slice(newline + 1);
        }
      });
    }
    void exited.then((code) =>
      reject(new Error(`server exited with ${code} before listening:\n${logs.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}`)),
    );
  });
  return {
    url,
    dataDir,
    process: child,
    logs,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const code = await exited;
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}

/** Posts a form as a browser's script would: multipart, no Origin unless given. */
export function postForm(url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  return fetch(url, { method: 'POST', body, headers });
}
