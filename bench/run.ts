/**
 * `npm run bench`: our server against a bare node:http server doing the same work, on
 * 127.0.0.1 only, bounded by request count and time. Prints requests per second, p50/p99
 * latency and peak RSS per scenario, and the ratio ours/bare. See docs/performance.md.
 */
import autocannon from 'autocannon';
import { type ChildProcess, spawn } from 'node:child_process';
import { build } from 'esbuild';
import { measureValidators } from './validators.ts';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';

/** Each run lasts this long; autocannon only checks a request count once a second, so time is the finer bound. */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** No single run may take longer than this, whatever the machine. */
const RUN_TIMEOUT_S = SECONDS + 30;

const BOUNDARY = 'benchBoundary7MA4YWxkTrZu0gW';
const multipart = (fields: Record<string, string>) =>
  [
    ...Object.entries(fields).map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
    `--${BOUNDARY}--\r\n`,
  ].join('');
const formHeaders = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };

type Scenario = { name: string; expect: readonly number[]; request: autocannon.Request };

const SCENARIOS: Scenario[] = [
  {
    name: 'contact, valid',
    expect: [200],
    request: {
      method: 'POST',
      path: '/api/contact',
      headers: formHeaders,
      body: multipart({ name: 'Ada Lovelace', email: 'ada@example.com', message: 'A benchmark message of reasonable length.', honeypot: '' }),
    },
  },
  {
    name: 'contact, invalid',
    expect: [400],
    request: { method: 'POST', path: '/api/contact', headers: formHeaders, body: multipart({ name: 'A', email: 'nope', message: 'short', honeypot: '' }) },
  },
  {
    name: 'newsletter (fake provider)',
    expect: [200],
    request: { method: 'POST', path: '/api/newsletter', headers: formHeaders, body: multipart({ email: 'reader@example.com' }) },
  },
  { name: 'home page', expect: [200], request: { method: 'GET', path: '/' } },
];

/** BENCH_ONLY=substring runs only the scenarios whose name holds it (to study one). */
const ONLY = process.env.BENCH_ONLY;
const chosen = ONLY ? SCENARIOS.filter((s) => s.name.includes(ONLY)) : SCENARIOS;

type Target = { name: 'ours' | 'bare' | 'provider'; url: string; child: ChildProcess; dataDir: string };
type Result = { rps: number; p50: number; p99: number; peakRssMb: number; unexpected: number; total: number };

/**
 * The V8 flags `npm run serve` gives the server (package.json), which both servers get so
 * that the bench measures ours as it runs in production; BENCH_NODE_FLAGS replaces them.
 */
const SERVE_FLAGS =
  process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ??
  (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts.serve?.match(
    /--[\w-]+=\S+/g,
  ) ??
  [];

async function startTarget(name: Target['name'], script: string, env: Record<string, string>, flags: string[] = []): Promise<Target> {
  const dataDir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  // Logs go to a file, as in production: read through a pipe by this busy process, every
  // log line would slow the server down (and only ours logs each request).
  const logFile = join(dataDir, 'server.log');
  const log = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...flags, script], {
    env: {
      PATH: process.env.PATH ?? '',
      ENV_FILE: '',
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS ?? '',
      ...env,
    },
    stdio: ['ignore', log, 'inherit'],
  });
  closeSync(log);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const match = /"event":"server\.listening"[^\n]*"port":(\d+)/.exec(readFileSync(logFile, 'utf8'));
    if (match) return { name, url: `http://127.0.0.1:${match[1]}`, child, dataDir };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${name} did not start: ${readFileSync(logFile, 'utf8')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Peak resident memory of the process so far (VmHWM, Linux). Hint: writing 5 to
 * clear_refs should reset it between runs, but on these machines it inflated the peak
 * instead, so the peak is the process's whole life: warm-up and every run before.
 */
function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

async function run(target: Target, scenario: Scenario): Promise<Result> {
  let unexpected = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ url: target.url, connections: CONNECTIONS, duration: SECONDS, timeout: 10, requests: [scenario.request] }, (error, done) =>
      error ? reject(error) : resolve(done),
    );
    instance.on('response', (_client, statusCode) => {
      if (!scenario.expect.includes(statusCode)) unexpected++;
    });
    // Bounded in time whatever the machine: a run that cannot finish its count stops here.
    const guard = setTimeout(() => instance.stop(), RUN_TIMEOUT_S * 1000);
    instance.once('done', () => clearTimeout(guard));
  });
  return {
    // Count over time: autocannon's average of one-second samples is coarse for short runs.
    rps: result.requests.total / ((result.finish.getTime() - result.start.getTime()) / 1000),
    p50: result.latency.p50,
    p99: result.latency.p99,
    peakRssMb: peakRssMb(target.child.pid!),
    unexpected: unexpected + result.errors + result.timeouts,
    total: result.requests.total,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

// First, alone on the machine: the validators on hostile input up to 64 KiB (the 5 ms budget).
const validators = measureValidators();

const mailchimp = await startTarget('provider', new URL('./fake-provider.ts', import.meta.url).pathname, {});
const env = { MAILCHIMP_API_KEY: 'bench-us1', MAILCHIMP_LIST_ID: 'bench', MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0`, RATE_LIMIT_MAX: '0' };
// Both servers run compiled, as `npm run serve` runs ours: type stripping at run time
// would cost each the same ~18 MB and some start-up.
await build({
  entryPoints: [new URL('./bare-server.ts', import.meta.url).pathname],
  outfile: new URL('../dist/bench/bare-server.mjs', import.meta.url).pathname,
  bundle: true,
  platform: 'node',
  format: 'esm',
  packages: 'external',
  logLevel: 'warning',
});
const targets = [
  await startTarget('ours', new URL('../dist/server/start.mjs', import.meta.url).pathname, env, SERVE_FLAGS),
  await startTarget('bare', new URL('../dist/bench/bare-server.mjs', import.meta.url).pathname, env, SERVE_FLAGS),
];

process.stderr.write(
  `bench: ${SECONDS} s × ${CONNECTIONS} connections per run, ${ROUNDS} rounds, interleaved; node ${SERVE_FLAGS.join(' ') || '(no flags)'}; ${cpus().length} × ${cpus()[0]?.model}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}\n`,
);
const results = new Map<string, Result[]>();
try {
  // Warm-up, so neither side pays for its JIT inside a measured run.
  for (const target of targets) for (const scenario of chosen) await run(target, { ...scenario, expect: [200, 400] });
  for (let round = 0; round < ROUNDS; round++) {
    for (const scenario of chosen) {
      for (const target of round % 2 ? [...targets].reverse() : targets) {
        const result = await run(target, scenario);
        const key = `${scenario.name}|${target.name}`;
        results.set(key, [...(results.get(key) ?? []), result]);
        process.stderr.write(
          `  ${scenario.name.padEnd(28)} ${target.name}: ${Math.round(result.rps)} req/s, ${result.total} requests, peak RSS so far ${result.peakRssMb.toFixed(0)} MB\n`,
        );
      }
    }
  }
} finally {
  for (const target of [...targets, mailchimp]) {
    target.child.kill('SIGTERM');
    rmSync(target.dataDir, { recursive: true, force: true });
  }
}

const rows = [['scenario', 'server', 'req/s', 'p50 ms', 'p99 ms', 'peak RSS MB', 'unexpected', 'ours/bare req/s']];
for (const scenario of chosen) {
  const summary = (name: string) => {
    const runs = results.get(`${scenario.name}|${name}`) ?? [];
    return {
      rps: median(runs.map((r) => r.rps)),
      p50: median(runs.map((r) => r.p50)),
      p99: median(runs.map((r) => r.p99)),
      peak: Math.max(...runs.map((r) => r.peakRssMb)),
      unexpected: runs.reduce((n, r) => n + r.unexpected, 0),
    };
  };
  const ours = summary('ours');
  const bare = summary('bare');
  for (const [name, s] of [
    ['ours', ours],
    ['bare', bare],
  ] as const) {
    rows.push([
      scenario.name,
      name,
      s.rps.toFixed(0),
      s.p50.toFixed(1),
      s.p99.toFixed(1),
      s.peak.toFixed(0),
      String(s.unexpected),
      name === 'ours' ? (ours.rps / bare.rps).toFixed(2) : '',
    ]);
  }
}
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log([line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n'));
console.log('\n| validator (300 inputs up to 64 KiB) | median ms | max ms |\n|---|---|---|');
for (const { validator, medianMs, maxMs } of validators) console.log(`| ${validator} | ${medianMs.toFixed(3)} | ${maxMs.toFixed(3)} |`);
