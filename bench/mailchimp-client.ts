/**
 * One process that does nothing but call Mailchimp through our provider (the official
 * client), `MC_CALLS` calls with `MC_CONCURRENCY` in flight, against `MC_BASE_URL`; prints one
 * JSON line: calls per second, peak RSS (VmHWM), the largest young and old generations seen,
 * and the heap left after a full collection. With `MC_PROFILE=1` it also samples every
 * allocation (collected ones too) and prints the bytes allocated per call and where.
 * Run by bench/mailchimp-memory.ts, once per variant (V8 flags, `MC_AGENT`).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Session } from 'node:inspector/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { createMailchimpProvider } from '../packages/site-forms/src/lib/newsletter/mailchimp.ts';

// MC_AGENT=per-request: the client as it came, before our provider gave it one shared
// keep-alive agent (superagent 3.8 asks Node for a new agent, and connection, per request).
if (process.env.MC_AGENT === 'per-request') {
  const superagent = createRequire(import.meta.url)('superagent') as { Request: { prototype: { agent(this: unknown): unknown } } };
  superagent.Request.prototype.agent = function (this: unknown) {
    return this;
  };
}

const calls = Number(process.env.MC_CALLS ?? 8000);
const concurrency = Number(process.env.MC_CONCURRENCY ?? 10);
const provider = createMailchimpProvider({ apiKey: 'bench-us1', listId: 'bench', baseUrl: process.env.MC_BASE_URL ?? '' });

const peakRssMb = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024;
const spaces = { new: 0, old: 0 };
const sampler = setInterval(() => {
  for (const s of getHeapSpaceStatistics()) {
    if (s.space_name === 'new_space') spaces.new = Math.max(spaces.new, s.space_size / 2 ** 20);
    if (s.space_name === 'old_space') spaces.old = Math.max(spaces.old, s.space_size / 2 ** 20);
  }
}, 20);

const session = process.env.MC_PROFILE ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
}

let started = 0;
let failed = 0;
async function lane(): Promise<void> {
  while (started < calls) {
    started++;
    const outcome = await provider.subscribe(`reader${started}@example.com`);
    if (!outcome.ok) failed++;
  }
}
const t0 = performance.now();
await Promise.all(Array.from({ length: concurrency }, lane));
const seconds = (performance.now() - t0) / 1000;
clearInterval(sampler);
const peakMb = peakRssMb();

type Node = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: Node[] };
let allocation: { bytesPerCall: number; top: string[] } | undefined;
if (session) {
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: Node } };
  const bySite = new Map<string, number>();
  let total = 0;
  const walk = (node: Node) => {
    total += node.selfSize;
    const { functionName, url, lineNumber } = node.callFrame;
    const site = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/(src|bench)\//, '$1/')}:${lineNumber + 1}`;
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  allocation = {
    bytesPerCall: Math.round(total / calls),
    top: [...bySite]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
      .map(([site, bytes]) => `${Math.round(bytes / calls)} B/call  ${site}`),
  };
}
(globalThis as { gc?: () => void }).gc?.();
const heapAfterGcMb = process.memoryUsage().heapUsed / 2 ** 20;
process.stdout.write(
  `${JSON.stringify({ calls, failed, rps: calls / seconds, peakMb, newSpaceMb: spaces.new, oldSpaceMb: spaces.old, heapAfterGcMb, allocation })}\n`,
);
