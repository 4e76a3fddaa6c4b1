/**
 * `npm run bench:profile`: where a post's time goes. Starts one server (PROFILE_TARGET: `ours`,
 * the built starter, or its SCRIPT; `bare`, `group` or `group-plain`, bench/baseline-server.ts
 * committing each post, or each turn's posts into a table with a message's indexes or a plain one) with `--cpu-prof` and the flags of `npm run serve`, sends PROFILE_REQUESTS (20,000)
 * posts of PROFILE_SCENARIO (`valid` or `invalid` contact) over 10 connections from 127.0.0.1,
 * stops it, and prints from V8's profile: the CPU time per request (time not idle, over the
 * requests), the functions with the most time of their own, and a top-down tree of the busy
 * time (a text flame graph, branches of 2 % and more). The spam filter is on and the rate limit
 * off, as in `npm run bench`. Not a timed test: compare two profiles of one run of the machine.
 */
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { closeSync, copyFileSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

const TARGET = process.env.PROFILE_TARGET ?? 'ours';
const SCENARIO = process.env.PROFILE_SCENARIO ?? 'valid';
const REQUESTS = Number(process.env.PROFILE_REQUESTS ?? 20_000);
const CONNECTIONS = Number(process.env.PROFILE_CONNECTIONS ?? 10);
const DEPTH = Number(process.env.PROFILE_DEPTH ?? 14);

const BOUNDARY = 'benchBoundary7MA4YWxkTrZu0gW';
const fields =
  SCENARIO === 'invalid'
    ? { name: 'A', email: 'nope', message: 'short', honeypot: '' }
    : { name: 'Ada Lovelace', email: 'ada@example.com', message: 'A benchmark message of reasonable length.', honeypot: '' };
const body = [
  ...Object.entries(fields).map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
  `--${BOUNDARY}--\r\n`,
].join('');

const SERVE_SCRIPT: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts.serve ?? '';
const SERVE_FLAGS = SERVE_SCRIPT.match(/--[\w-]+(?:=\S+)?/g) ?? [];
const SERVE_ENV = Object.fromEntries([...SERVE_SCRIPT.matchAll(/(?:^|\s)([A-Z_][A-Z0-9_]*)=(\S+)(?=\s)/g)].map((m) => [m[1]!, m[2]!]));

let script = process.env.SCRIPT ?? new URL('../dist/server/start.mjs', import.meta.url).pathname;
if (TARGET !== 'ours') {
  script = new URL('../dist/bench/baseline-server.mjs', import.meta.url).pathname;
  await build({
    entryPoints: [new URL('./baseline-server.ts', import.meta.url).pathname],
    outfile: script,
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'warning',
  });
}

const work = mkdtempSync(join(tmpdir(), 'bench-profile-'));
const logFile = join(work, 'server.log');
const log = openSync(logFile, 'w');
// PROFILE_V8=0: no profiler, only the CPU time the kernel counted (the profiler's own cost left out).
const V8 = process.env.PROFILE_V8 !== '0';
const child = spawn(process.execPath, [...(V8 ? ['--cpu-prof', `--cpu-prof-dir=${work}`] : []), ...SERVE_FLAGS, script], {
  env: {
    PATH: process.env.PATH ?? '',
    ENV_FILE: '',
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: work,
    RATE_LIMIT_MAX: '0',
    SPAM_FILTER: 'on',
    BASELINE_COMMIT: TARGET.startsWith('group') ? 'group' : 'each',
    BASELINE_TABLE: TARGET === 'group' ? 'indexed' : 'plain',
    ...SERVE_ENV,
  },
  stdio: ['ignore', log, 'inherit'],
});
closeSync(log);
let url = '';
for (const deadline = Date.now() + 20_000; !url; await new Promise((resolve) => setTimeout(resolve, 50))) {
  const match = /"event":"server\.listening"[^\n]*"port":(\d+)/.exec(readFileSync(logFile, 'utf8'));
  if (match) url = `http://127.0.0.1:${match[1]}`;
  else if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start: ${readFileSync(logFile, 'utf8')}`);
}
const request = { method: 'POST' as const, path: '/api/contact', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body };
/** The server's CPU time so far (user and system), in µs, as the kernel counts it. */
const cpuTimes = () => {
  const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: (Number(fields[11]) * 1e6) / 100, system: (Number(fields[12]) * 1e6) / 100 };
};
const cpuStart = cpuTimes();
// V8's profile and process.hrtime read the same monotonic clock: only the samples between these count.
const loadStart = Number(process.hrtime.bigint() / 1000n);
const result = await autocannon({ url, connections: CONNECTIONS, amount: REQUESTS, timeout: 10, requests: [request] });
const loadEnd = Number(process.hrtime.bigint() / 1000n);
const cpuEnd = cpuTimes();
const userPerRequest = (cpuEnd.user - cpuStart.user) / result.requests.total;
const systemPerRequest = (cpuEnd.system - cpuStart.system) / result.requests.total;
const exited = new Promise((resolve) => child.once('exit', resolve));
child.kill('SIGTERM');
await exited;

if (!V8) {
  rmSync(work, { recursive: true, force: true });
  console.log(
    `${TARGET}, contact ${SCENARIO}: ${result.requests.total} requests, ${Math.round(result.requests.total / result.duration)} req/s, ${(userPerRequest + systemPerRequest).toFixed(1)} µs of CPU per request (${userPerRequest.toFixed(1)} user, ${systemPerRequest.toFixed(1)} system; the kernel's count, no profiler)`,
  );
  process.exit(0);
}
type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };
const file = readdirSync(work).find((name) => name.endsWith('.cpuprofile'));
if (!file) throw new Error('the server wrote no profile');
const profile = JSON.parse(readFileSync(join(work, file), 'utf8')) as Profile;
// PROFILE_KEEP=<file>: V8's profile kept, for Chrome's DevTools or speedscope.
if (process.env.PROFILE_KEEP) copyFileSync(join(work, file), process.env.PROFILE_KEEP);
rmSync(work, { recursive: true, force: true });

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map<number, number>();
// Start-up (loading modules, migrating) and shut-down are left out: the time of the load only.
let at = profile.startTime;
for (const [i, id] of profile.samples.entries()) {
  at += profile.timeDeltas[i] ?? 0;
  if (at >= loadStart && at <= loadEnd) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const where = (node: Node) => {
  const { functionName, url: source, lineNumber } = node.callFrame;
  const short = source
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/(dist|packages)\//, '$1/');
  return `${functionName || '(anonymous)'} ${short ? `${short}:${lineNumber + 1}` : ''}`.trim();
};
const total = new Map<number, number>();
const sum = (node: Node): number => {
  const value = (self.get(node.id) ?? 0) + (node.children ?? []).reduce((n, id) => n + sum(byId.get(id)!), 0);
  total.set(node.id, value);
  return value;
};
const root = profile.nodes[0]!;
sum(root);
const idle = profile.nodes.filter((node) => node.callFrame.functionName === '(idle)').reduce((n, node) => n + (self.get(node.id) ?? 0), 0);
const busy = total.get(root.id)! - idle;
const ok = result.requests.total;
console.log(
  `${TARGET}, contact ${SCENARIO}: ${ok} requests in ${(result.duration).toFixed(1)} s (${Math.round(ok / result.duration)} req/s), ${result.errors + result.timeouts} errors; ` +
    `busy ${(busy / 1000).toFixed(0)} ms of ${((loadEnd - loadStart) / 1000).toFixed(0)} ms of load, ${(busy / ok).toFixed(1)} µs of CPU per request\n`,
);
const selfByPlace = new Map<string, number>();
for (const node of profile.nodes)
  if (node.callFrame.functionName !== '(idle)') selfByPlace.set(where(node), (selfByPlace.get(where(node)) ?? 0) + (self.get(node.id) ?? 0));
console.log('| own time | % of busy | function |\n|---|---|---|');
for (const [name, time] of [...selfByPlace].sort((a, b) => b[1] - a[1]).slice(0, 25))
  console.log(`| ${(time / 1000).toFixed(0)} ms | ${((100 * time) / busy).toFixed(1)} | ${name} |`);
console.log('\nTop-down (% of busy time, branches of 2 % and more):');
const walk = (node: Node, depth: number) => {
  for (const id of (node.children ?? []).sort((a, b) => total.get(b)! - total.get(a)!)) {
    const child = byId.get(id)!;
    const share = (100 * total.get(id)!) / busy;
    if (share < 2 || child.callFrame.functionName === '(idle)') continue;
    console.log(`${'  '.repeat(depth)}${share.toFixed(1).padStart(5)} % ${where(child)}`);
    if (depth < DEPTH) walk(child, depth + 1);
  }
};
walk(root, 0);
