import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NGINX_BINARY, needs } from './services.ts';
import { freePort } from './smtp.ts';

/** Whether the TLS proxy tests run: without nginx or openssl the run fails, or skips them under ALLOW_SKIP=1 (tests/support/services.ts). */
export const nginxAvailable = needs('nginx') && needs('openssl');

/** The configuration the README tells owners to install, which these tests run as it is. */
const SHIPPED_CONFIG = new URL('../../deploy/nginx.conf', import.meta.url);

/** nginx terminating TLS in front of a server, with a certificate made for this run. */
export type TlsProxy = {
  /** `https://127.0.0.1:<port>`, the address a visitor types. */
  url: string;
  /** The port of the plain-http server that redirects to https. */
  httpPort: number;
  /** The PEM certificate, for clients that want to trust it rather than ignore errors. */
  certificate: string;
  stop(): Promise<void>;
};

/**
 * Starts nginx with deploy/nginx.conf in front of `upstream` (such as `http://127.0.0.1:4321`):
 * only its ports, certificate paths and upstream are changed, and it runs from a temporary
 * prefix (pid, logs, temp files) with a self-signed certificate made by openssl for 127.0.0.1.
 */
export async function startTlsProxy(upstream: string, ports: { httpsPort?: number } = {}): Promise<TlsProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'site-forms-nginx-'));
  // Workers run as nobody when the master is root; they write temp files here.
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'logs'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const [httpsPort, httpPort] = [ports.httpsPort ?? (await freePort()), await freePort()];
  const site = siteConfig(readFileSync(SHIPPED_CONFIG, 'utf8'), { httpsPort, httpPort, dir, upstream: new URL(upstream).host });
  writeFileSync(join(dir, 'site.conf'), site);
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'worker_processes 1;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'logs/error.log')} warn;`,
      'events { worker_connections 256; }',
      'http {',
      `  access_log ${join(dir, 'logs/access.log')};`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${join(dir, `${kind}-temp`)};`),
      `  include ${join(dir, 'site.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const child = spawn(NGINX_BINARY, ['-p', dir, '-e', join(dir, 'logs/error.log'), '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) stream.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `https://127.0.0.1:${httpsPort}`;
  await waitUntilListening(url, child, () => `${output}${safeRead(join(dir, 'logs/error.log'))}`);
  return {
    url,
    httpPort,
    certificate: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The shipped site configuration with this run's ports, certificate and upstream. Every
 * replacement must find its text, so a change to deploy/nginx.conf cannot quietly make
 * the tests run something else.
 */
export function siteConfig(shipped: string, run: { httpsPort: number; httpPort: number; dir: string; upstream: string }): string {
  const replacements: Array<[string | RegExp, string]> = [
    [/^ {4}listen 443 ssl http2;$/m, `    listen 127.0.0.1:${run.httpsPort} ssl http2;`],
    [/^ {4}listen \[::\]:443 ssl http2;\n/m, ''],
    [/^ {4}listen 80;$/m, `    listen 127.0.0.1:${run.httpPort};`],
    [/^ {4}listen \[::\]:80;\n/m, ''],
    ['/etc/letsencrypt/live/www.example.com/fullchain.pem', join(run.dir, 'cert.pem')],
    ['/etc/letsencrypt/live/www.example.com/privkey.pem', join(run.dir, 'key.pem')],
    ['    server 127.0.0.1:4321;\n', `    server ${run.upstream};\n`],
  ];
  let config = shipped;
  for (const [from, to] of replacements) {
    const next = config.replace(from, to);
    if (next === config) throw new Error(`deploy/nginx.conf no longer contains ${String(from)}; update tests/support/nginx.ts`);
    config = next;
  }
  return config;
}

/** A GET through the proxy that ignores the self-signed certificate; answers the status, or undefined while nothing listens. */
function probe(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request(url, { rejectUnauthorized: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.once('error', () => resolve(undefined));
    req.once('timeout', () => req.destroy());
    req.end();
  });
}

async function waitUntilListening(url: string, child: ChildProcess, diagnostics: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}:\n${diagnostics()}`);
    if ((await probe(`${url}/`)) !== undefined) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`nginx did not answer at ${url} within 15 s:\n${diagnostics()}`);
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
