/**
 * Peak RSS of our server under newsletter load through the Mailchimp client, one server per
 * variant (V8 flags, the client's own per-request agent), all started at once and loaded in
 * turn, interleaved over rounds against one fake Mailchimp on 127.0.0.1.
 * `npm run build`, then `npx node bench/newsletter-memory.ts` (NM_SECONDS, NM_ROUNDS,
 * NM_CONNECTIONS, NM_VARIANTS=a,b). Prints medians, and ratios to the first variant.
 */
import autocannon from 'autocannon';
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SECONDS = Number(process.env.NM_SECONDS ?? 8);
const ROUNDS = Number(process.env.NM_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.NM_CONNECTIONS ?? 50);
const preload = new URL('./per-request-agent.mjs', import.meta.url).pathname;

/** `flags` go on node's command line: NODE_OPTIONS refuses most V8 flags. */
type Variant = { name: string; flags: string[] };
const SERVE = ['--max-semi-space-size=4', '--heap-growing-percent=20', '--no-maglev'];
const VARIANTS: Variant[] = [
  { name: 'as npm run serve runs it', flags: SERVE },
  { name: 'client as shipped, no flags (before)', flags: [`--import=${preload}`] },
  { name: 'shared agent, no flags', flags: [] },
  { name: 'shared agent, semi-space 4 MB', flags: ['--max-semi-space-size=4'] },
  { name: 'shared agent, heap growing 20 %', flags: ['--heap-growing-percent=20'] },
  { name: 'client as shipped, with the flags', flags: [`--import=${preload}`, ...SERVE] },
  { name: 'shared agent, memory saver mode', flags: ['--memory-saver-mode'] },
];
const only = process.env.NM_VARIANTS?.split(',');
const chosen = only ? VARIANTS.filter((v) => only.some((o) => v.name.includes(o))) : VARIANTS;

type Child = { name: string; url: string; child: ChildProcess; dir: string };

async function start(name: string, script: string, env: Record<string, string>, flags: string[] = []): Promise<Child> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-memory-'));
  const logFile = join(dir, 'server.log');
  const log = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...flags, script], {
    env: { PATH: process.env.PATH ?? '', ENV_FILE: '', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dir, ...env },
    stdio: ['ignore', log, 'inherit'],
  });
  closeSync(log);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const match = /"event":"server\.listening"[^\n]*"port":(\d+)/.exec(readFileSync(logFile, 'utf8'));
    if (match) return { name, url: `http://127.0.0.1:${match[1]}`, child, dir };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${name} did not start: ${readFileSync(logFile, 'utf8')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const peakMb = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const BOUNDARY = 'benchBoundary7MA4YWxkTrZu0gW';
const body = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="email"\r\n\r\nreader@example.com\r\n--${BOUNDARY}--\r\n`;

async function load(target: Child): Promise<{ rps: number; unexpected: number }> {
  let unexpected = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        connections: CONNECTIONS,
        duration: SECONDS,
        timeout: 10,
        requests: [{ method: 'POST', path: '/api/newsletter', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body }],
      },
      (error, done) => (error ? reject(error) : resolve(done)),
    );
    instance.on('response', (_client, status) => {
      if (status !== 200) unexpected++;
    });
    const guard = setTimeout(() => instance.stop(), (SECONDS + 30) * 1000);
    instance.once('done', () => clearTimeout(guard));
  });
  return { rps: result.requests.total / ((result.finish.getTime() - result.start.getTime()) / 1000), unexpected: unexpected + result.errors + result.timeouts };
}

const provider = await start('provider', new URL('./fake-provider.ts', import.meta.url).pathname, {});
const env = { MAILCHIMP_API_KEY: 'bench-us1', MAILCHIMP_LIST_ID: 'bench', MAILCHIMP_API_BASE_URL: `${provider.url}/3.0`, RATE_LIMIT_MAX: '0' };
const servers: Child[] = [];
const rows = new Map<string, { rps: number; unexpected: number }[]>();
try {
  for (const variant of chosen) {
    servers.push(await start(variant.name, new URL('../dist/server/start.mjs', import.meta.url).pathname, env, variant.flags));
  }
  const idle = new Map(servers.map((s) => [s.name, peakMb(s.child.pid!)]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const server of round % 2 ? [...servers].reverse() : servers) {
      const row = await load(server);
      rows.set(server.name, [...(rows.get(server.name) ?? []), row]);
      process.stderr.write(`  ${server.name.padEnd(40)} ${row.rps.toFixed(0)} req/s, peak RSS so far ${peakMb(server.child.pid!).toFixed(0)} MB\n`);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const first = median((rows.get(servers[0]!.name) ?? []).map((r) => r.rps));
  console.log(`| variant | idle RSS MB | peak RSS MB | newsletter req/s (median of ${ROUNDS}) | × first | unexpected |`);
  console.log('|---|---|---|---|---|---|');
  for (const server of servers) {
    const runs = rows.get(server.name) ?? [];
    const rps = median(runs.map((r) => r.rps));
    console.log(
      `| ${server.name} | ${idle.get(server.name)?.toFixed(0)} | ${peakMb(server.child.pid!).toFixed(0)} | ${rps.toFixed(0)} | ${(rps / first).toFixed(2)} | ${runs.reduce((n, r) => n + r.unexpected, 0)} |`,
    );
  }
} finally {
  for (const s of [...servers, provider]) {
    s.child.kill('SIGTERM');
    rmSync(s.dir, { recursive: true, force: true });
  }
}
